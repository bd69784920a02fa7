#include "simrun/framework/output/xdmf_writer.hpp"

#include <array>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "simrun/framework/output/xml_text.hpp"

namespace simrun::framework {

namespace {

// XDMF lists axes slowest first: z y x. A 2D grid is written as one layer of a 3D mesh (z
// extent 1): ParaView's readers place a 2DCoRectMesh in the yz plane, away from the .vti files.
template <typename T, typename Format>
std::string reversed_axes(const std::array<T, 3>& values, Format format) {
    std::string out;
    for (int axis = 2; axis >= 0; --axis) {
        out += format(values[static_cast<std::size_t>(axis)]);
        if (axis > 0) out += ' ';
    }
    return out;
}

}  // namespace

std::string step_group_path(std::int64_t step) {
    if (step < 0) throw std::invalid_argument("negative output step " + std::to_string(step));
    char digits[32];
    std::snprintf(digits, sizeof digits, "%06lld", static_cast<long long>(step));
    return std::string("/steps/") + digits;
}

std::string make_xdmf(const Grid& grid, std::string_view h5_file_name,
                      std::span<const XdmfStep> steps) {
    const auto to_string = [](std::int64_t n) { return std::to_string(n); };
    const std::string dimensions = reversed_axes(grid.points(), to_string);
    const std::string origin = reversed_axes(grid.origin(), format_double);
    const std::string spacing = reversed_axes(grid.spacing(), format_double);
    const std::string file = xml_escape(h5_file_name);

    std::string text =
        "<?xml version=\"1.0\" ?>\n"
        "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
        "<Xdmf Version=\"3.0\">\n"
        "  <Domain>\n"
        "    <Grid Name=\"TimeSeries\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
    for (const auto& step : steps) {
        const std::string group = step_group_path(step.step);
        text += "      <Grid Name=\"step_" + group.substr(group.rfind('/') + 1) +
                "\" GridType=\"Uniform\">\n";
        text += "        <Time Value=\"" + format_double(step.time) + "\"/>\n";
        text +=
            "        <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"" + dimensions + "\"/>\n";
        text += "        <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n";
        text +=
            "          <DataItem Name=\"Origin\" Dimensions=\"3"
            "\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">" +
            origin + "</DataItem>\n";
        text +=
            "          <DataItem Name=\"Spacing\" Dimensions=\"3"
            "\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">" +
            spacing + "</DataItem>\n";
        text += "        </Geometry>\n";
        for (const auto& name : step.field_names) {
            text += "        <Attribute Name=\"" + xml_escape(name) +
                    "\" AttributeType=\"Scalar\" Center=\"Node\">\n";
            text += "          <DataItem Dimensions=\"" + dimensions +
                    "\" NumberType=\"Float\" Precision=\"8\" Format=\"HDF\">" + file + ":" + group +
                    "/" + xml_escape(name) + "</DataItem>\n";
            text += "        </Attribute>\n";
        }
        text += "      </Grid>\n";
    }
    text += "    </Grid>\n  </Domain>\n</Xdmf>\n";
    return text;
}

}  // namespace simrun::framework
