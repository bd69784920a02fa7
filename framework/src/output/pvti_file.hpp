#pragma once
// The text of a parallel VTK image data file (.pvti): the whole grid's extent, origin and
// spacing, the point data arrays' names and types, and each piece's extent with the .vti that
// holds it (relative to the .pvti), as VTK's own parallel writer lays it out, so ParaView reads
// the pieces as one image.
#include <span>
#include <string>

#include "simrun/framework/discretisation/grid.hpp"

namespace simrun::framework {

struct PvtiPiece {
    Box box;
    std::string file;  // relative to the .pvti
};

std::string make_pvti(const Grid& grid, std::span<const std::string> field_names,
                      std::span<const PvtiPiece> pieces);

}  // namespace simrun::framework
