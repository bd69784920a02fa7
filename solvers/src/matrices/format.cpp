#include "simrun/solvers/matrices/format.hpp"

#include <stdexcept>
#include <string>

namespace simrun::solvers {

std::string_view to_string(Format format) {
    switch (format) {
        case Format::dia:
            return "dia";
        case Format::stencil:
            return "stencil";
        case Format::ell:
            return "ell";
        case Format::csr:
            return "csr";
        case Format::coo:
            return "coo";
        case Format::dense:
            return "dense";
    }
    return "unknown";
}

Format parse_format(std::string_view text) {
    for (Format f :
         {Format::dia, Format::stencil, Format::ell, Format::csr, Format::coo, Format::dense}) {
        if (text == to_string(f)) return f;
    }
    throw std::invalid_argument("unknown format '" + std::string(text) +
                                "' (expected dia, stencil, ell, csr, coo or dense)");
}

}  // namespace simrun::solvers
