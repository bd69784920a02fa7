#pragma once
// The sparse formats a matrix can be stored in on a back-end. stencil is DIA with constant
// coefficients kept as one value per diagonal and a byte per row (dia_matrix.hpp).
#include <string>
#include <string_view>

namespace simrun::solvers {

enum class Format { dia, stencil, ell, csr, coo, dense };

std::string_view to_string(Format format);
// Parses "dia", "stencil", "ell", "csr", "coo", "dense"; throws std::invalid_argument listing them.
Format parse_format(std::string_view text);

}  // namespace simrun::solvers
