#pragma once
// The sparse formats a matrix can be stored in on a back-end.
#include <string>
#include <string_view>

namespace simrun::solvers {

enum class Format { dia, ell, csr, coo, dense };

std::string_view to_string(Format format);
// Parses "dia", "ell", "csr", "coo", "dense"; throws std::invalid_argument listing them.
Format parse_format(std::string_view text);

}  // namespace simrun::solvers
