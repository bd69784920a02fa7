#include "simrun/framework/vtk_series_writer.hpp"

#include <vtkDoubleArray.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkXMLImageDataWriter.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "simrun/framework/xml_text.hpp"
#include "simrun/solvers/atomic_file.hpp"

namespace simrun::framework {

namespace {}  // namespace

VtkSeriesWriter::VtkSeriesWriter(std::filesystem::path directory, std::string basename,
                                 const Grid& grid)
    : directory_(std::move(directory)), basename_(std::move(basename)), grid_(grid) {
    std::error_code error;
    std::filesystem::create_directories(directory_, error);
    if (error || !std::filesystem::is_directory(directory_)) {
        throw std::runtime_error("cannot create output directory '" + directory_.string() +
                                 "': " + (error ? error.message() : "not a directory"));
    }
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
        array->SetNumberOfTuples(static_cast<vtkIdType>(field.values.size()));
        std::copy(field.values.begin(), field.values.end(), array->GetPointer(0));
        image->GetPointData()->AddArray(array);
    }

    solvers::AtomicReplace replace(path);
    vtkNew<vtkXMLImageDataWriter> writer;
    writer->SetInputData(image);
    writer->SetFileName(replace.temp_path().c_str());
    writer->SetDataModeToAppended();
    writer->EncodeAppendedDataOff();
    writer->SetCompressorTypeToZLib();
    writer->SetHeaderTypeToUInt64();
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
