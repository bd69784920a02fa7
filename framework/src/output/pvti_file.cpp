#include "pvti_file.hpp"

#include "simrun/framework/output/xml_text.hpp"
#include "vti_file.hpp"

namespace simrun::framework {

std::string make_pvti(const Grid& grid, std::span<const std::string> field_names,
                      std::span<const PvtiPiece> pieces) {
    std::string xml =
        "<?xml version=\"1.0\"?>\n"
        "<VTKFile type=\"PImageData\" version=\"1.0\" byte_order=\"LittleEndian\" "
        "header_type=\"UInt64\">\n"
        "  <PImageData WholeExtent=\"" +
        vtk_extent(grid.box()) + "\" GhostLevel=\"0\" Origin=\"" + vtk_triple(grid.origin()) +
        "\" Spacing=\"" + vtk_triple(grid.spacing()) +
        "\" Direction=\"1 0 0 0 1 0 0 0 1\">\n    <PPointData>\n";
    for (const std::string& name : field_names) {
        xml += "      <PDataArray type=\"Float64\" Name=\"" + xml_escape(name) + "\"/>\n";
    }
    xml += "    </PPointData>\n";
    for (const PvtiPiece& piece : pieces) {
        xml += "    <Piece Extent=\"" + vtk_extent(piece.box) + "\" Source=\"" +
               xml_escape(piece.file) + "\"/>\n";
    }
    xml += "  </PImageData>\n</VTKFile>\n";
    return xml;
}

}  // namespace simrun::framework
