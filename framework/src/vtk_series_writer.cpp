#include "simrun/framework/vtk_series_writer.hpp"

#include <vtkDoubleArray.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkXMLImageDataWriter.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <regex>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "simrun/framework/xml_text.hpp"
#include "simrun/solvers/atomic_file.hpp"

namespace simrun::framework {

namespace {

// Compressed arrays are written in blocks of this many bytes instead of VTK's 32 KiB: the same
// format and file size, but VTK's cost per block outweighs LZ4's own on smooth double fields
// (which LZ4 barely shrinks), and a 1024^2 field is written in ~4 ms instead of ~6.5 ms.
constexpr std::size_t compression_block_bytes = std::size_t{1} << 20;

// The inverse of xml_escape for the entities it writes.
std::string xml_unescape(std::string_view text) {
    static const std::pair<std::string_view, char> entities[] = {
        {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}};
    std::string out;
    for (std::size_t at = 0; at < text.size();) {
        bool replaced = false;
        for (const auto& [entity, character] : entities) {
            if (text.substr(at, entity.size()) == entity) {
                out += character;
                at += entity.size();
                replaced = true;
                break;
            }
        }
        if (!replaced) out += text[at++];
    }
    return out;
}

}  // namespace

VtkSeriesWriter::VtkSeriesWriter(std::filesystem::path directory, std::string basename,
                                 const Grid& grid)
    : directory_(std::move(directory)), basename_(std::move(basename)), grid_(grid) {
    create_directory();
    std::error_code error;
    std::filesystem::remove(pvd_path(), error);
    if (error) {
        throw std::runtime_error("cannot remove '" + pvd_path().string() + "': " + error.message());
    }
}

VtkSeriesWriter::VtkSeriesWriter(std::filesystem::path directory, std::string basename,
                                 const Grid& grid, ContinueSeries from)
    : directory_(std::move(directory)), basename_(std::move(basename)), grid_(grid) {
    create_directory();
    read_pvd(from.last_step);
}

void VtkSeriesWriter::create_directory() const {
    std::error_code error;
    std::filesystem::create_directories(directory_, error);
    if (error || !std::filesystem::is_directory(directory_)) {
        throw std::runtime_error("cannot create output directory '" + directory_.string() +
                                 "': " + (error ? error.message() : "not a directory"));
    }
}

void VtkSeriesWriter::read_pvd(std::int64_t last_step) {
    const auto path = pvd_path();
    if (!std::filesystem::exists(path)) return;
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read '" + path.string() + "'");
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    // Entries as write_pvd() writes them; a file name not of this series' form is skipped.
    const std::regex dataset(R"re(<DataSet\s[^>]*timestep="([^"]*)"[^>]*file="([^"]*)")re");
    const std::string prefix = basename_ + "_";
    for (auto it = std::sregex_iterator(text.begin(), text.end(), dataset);
         it != std::sregex_iterator(); ++it) {
        const std::string file = xml_unescape((*it)[2].str());
        if (file.size() <= prefix.size() + 4 || !file.starts_with(prefix) ||
            !file.ends_with(".vti")) {
            continue;
        }
        const std::string digits = file.substr(prefix.size(), file.size() - prefix.size() - 4);
        if (digits.size() > 18 || !std::all_of(digits.begin(), digits.end(),
                                               [](char c) { return c >= '0' && c <= '9'; })) {
            continue;
        }
        const std::string time_text = (*it)[1].str();
        char* end = nullptr;
        const double time = std::strtod(time_text.c_str(), &end);
        if (time_text.empty() || *end != '\0') {
            throw std::runtime_error("cannot read '" + path.string() + "': timestep \"" +
                                     time_text + "\" is not a number");
        }
        const std::int64_t step = std::stoll(digits);
        if (step <= last_step && !has_step(step)) entries_.push_back({step, time, file});
    }
    std::sort(entries_.begin(), entries_.end(),
              [](const Entry& a, const Entry& b) { return a.step < b.step; });
}

bool VtkSeriesWriter::has_step(std::int64_t step) const {
    return std::any_of(entries_.begin(), entries_.end(),
                       [step](const Entry& e) { return e.step == step; });
}

std::vector<std::pair<std::int64_t, double>> VtkSeriesWriter::steps() const {
    std::vector<std::pair<std::int64_t, double>> out;
    for (const auto& entry : entries_) out.emplace_back(entry.step, entry.time);
    return out;
}

std::filesystem::path VtkSeriesWriter::pvd_path() const {
    return directory_ / (basename_ + ".pvd");
}

std::filesystem::path VtkSeriesWriter::step_path(std::int64_t step) const {
    return directory_ / step_file_name(step);
}

std::string VtkSeriesWriter::step_file_name(std::int64_t step) const {
    char digits[32];
    std::snprintf(digits, sizeof digits, "%06lld", static_cast<long long>(step));
    return basename_ + "_" + digits + ".vti";
}

void VtkSeriesWriter::write_step(std::int64_t step, double time,
                                 std::span<const FieldView> fields) {
    if (step < 0) {
        throw std::invalid_argument("VTK output: negative step " + std::to_string(step));
    }
    const auto path = step_path(step);
    for (const auto& field : fields) {
        if (static_cast<std::int64_t>(field.values.size()) != grid_.num_points()) {
            throw std::invalid_argument("VTK output '" + path.string() + "': field '" + field.name +
                                        "' has " + std::to_string(field.values.size()) +
                                        " values, the grid has " +
                                        std::to_string(grid_.num_points()) + " nodes");
        }
    }

    vtkNew<vtkImageData> image;
    const auto points = grid_.points();
    image->SetDimensions(static_cast<int>(points[0]), static_cast<int>(points[1]),
                         static_cast<int>(points[2]));
    const auto origin = grid_.origin();
    const auto spacing = grid_.spacing();
    image->SetOrigin(origin[0], origin[1], origin[2]);
    image->SetSpacing(spacing[0], spacing[1], spacing[2]);
    for (const auto& field : fields) {
        vtkNew<vtkDoubleArray> array;
        array->SetName(field.name.c_str());
        array->SetNumberOfComponents(1);
        // VTK reads the caller's values in place (save = 1: VTK does not free them): the writer
        // only reads, though VTK's interface is not const-correct.
        array->SetArray(const_cast<double*>(field.values.data()),
                        static_cast<vtkIdType>(field.values.size()), 1);
        image->GetPointData()->AddArray(array);
    }

    // Unsynced, as the HDF5 steps: complete or absent after a kill, an fsync per step saved.
    solvers::AtomicReplace replace(path, solvers::FileSync::unsynced);
    vtkNew<vtkXMLImageDataWriter> writer;
    writer->SetInputData(image);
    writer->SetFileName(replace.temp_path().c_str());
    writer->SetDataModeToAppended();
    writer->EncodeAppendedDataOff();
    switch (compression_) {
        case VtkCompression::none:
            writer->SetCompressorTypeToNone();
            break;
        case VtkCompression::lz4:
            writer->SetCompressorTypeToLZ4();
            break;
        case VtkCompression::zlib:
            writer->SetCompressorTypeToZLib();
            break;
    }
    writer->SetHeaderTypeToUInt64();
    writer->SetBlockSize(compression_block_bytes);
    if (writer->Write() != 1 || writer->GetErrorCode() != 0) {
        throw std::runtime_error("VTK could not write '" + path.string() + "' (error code " +
                                 std::to_string(writer->GetErrorCode()) + ")");
    }
    replace.commit();

    const auto existing = std::find_if(entries_.begin(), entries_.end(),
                                       [step](const Entry& e) { return e.step == step; });
    if (existing != entries_.end()) {
        existing->time = time;
    } else {
        entries_.push_back({step, time, step_file_name(step)});
        std::sort(entries_.begin(), entries_.end(),
                  [](const Entry& a, const Entry& b) { return a.step < b.step; });
    }
    write_pvd();
}

void VtkSeriesWriter::write_pvd() const {
    std::string text =
        "<?xml version=\"1.0\"?>\n"
        "<VTKFile type=\"Collection\" version=\"0.1\">\n"
        "  <Collection>\n";
    for (const auto& entry : entries_) {
        text += "    <DataSet timestep=\"" + format_double(entry.time) +
                "\" group=\"\" part=\"0\" file=\"" + xml_escape(entry.file_name) + "\"/>\n";
    }
    text += "  </Collection>\n</VTKFile>\n";
    solvers::write_file_atomically(pvd_path(), text);
}

}  // namespace simrun::framework
