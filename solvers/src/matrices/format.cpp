#include "simrun/solvers/matrices/format.hpp"

namespace simrun::solvers {

std::string_view to_string(Format format) { return name_of(format); }

Format parse_format(std::string_view text) { return parse_enum<Format>(text, "format"); }

}  // namespace simrun::solvers
