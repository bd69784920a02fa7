#pragma once
// The sparse formats a matrix can be stored in on a back-end. stencil is DIA with constant
// coefficients kept as one value per diagonal and a byte per row (dia_matrix.hpp).
#include <array>
#include <string>
#include <string_view>

#include "simrun/solvers/base/enum_names.hpp"

namespace simrun::solvers {

enum class Format { dia, stencil, ell, csr, coo, dense };
template <>
inline constexpr std::array enum_names<Format> = {
    EnumName<Format>{Format::dia, "dia"}, EnumName<Format>{Format::stencil, "stencil"},
    EnumName<Format>{Format::ell, "ell"}, EnumName<Format>{Format::csr, "csr"},
    EnumName<Format>{Format::coo, "coo"}, EnumName<Format>{Format::dense, "dense"}};

std::string_view to_string(Format format);
// Parses "dia", "stencil", "ell", "csr", "coo", "dense"; throws std::invalid_argument listing them.
Format parse_format(std::string_view text);

}  // namespace simrun::solvers
