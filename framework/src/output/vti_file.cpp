#include "vti_file.hpp"

#include <fcntl.h>
#include <lz4.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "simrun/framework/output/xml_text.hpp"

namespace simrun::framework {

static_assert(std::endian::native == std::endian::little,
              "the .vti header says byte_order=\"LittleEndian\"");

namespace {

// One block of one field: where its values are and where its bytes go in the file.
struct Block {
    const char* source;
    std::size_t bytes;
    std::size_t field;
    std::size_t compressed_bytes = 0;  // as written: compressed, or `bytes` without compression
    std::uint64_t file_offset = 0;
    double min = std::numeric_limits<double>::infinity();  // finite values only
    double max = -std::numeric_limits<double>::infinity();
};

class File {
public:
    explicit File(const std::filesystem::path& path) : path_(path) {
        // The temporary file AtomicReplace created exclusively: opened, never created or
        // followed through a link.
        fd_ = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
        if (fd_ < 0) fail("cannot open");
    }
    ~File() {
        if (fd_ >= 0) ::close(fd_);
    }
    File(const File&) = delete;
    File& operator=(const File&) = delete;

    // pwrite until every byte is written (safe from several threads at distinct offsets).
    void write_at(const void* data, std::size_t bytes, std::uint64_t offset) const {
        const char* from = static_cast<const char*>(data);
        while (bytes > 0) {
            const ssize_t written = ::pwrite(fd_, from, bytes, static_cast<off_t>(offset));
            if (written < 0 && errno == EINTR) continue;
            if (written == 0) errno = ENOSPC;  // no progress: the device is full
            if (written <= 0) fail("cannot write");
            from += written;
            bytes -= static_cast<std::size_t>(written);
            offset += static_cast<std::uint64_t>(written);
        }
    }
    void close() {
        const int status = ::close(std::exchange(fd_, -1));
        if (status != 0) fail("cannot close");
    }

private:
    [[noreturn]] void fail(const char* what) const {
        const int error = errno;
        throw std::runtime_error(std::string(what) + " '" + path_.string() +
                                 "': " + std::strerror(error));
    }

    std::filesystem::path path_;
    int fd_ = -1;
};

std::size_t compress_bound(VtkCompression compression, std::size_t bytes) {
    return compression == VtkCompression::lz4
               ? static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(bytes)))
               : static_cast<std::size_t>(compressBound(static_cast<uLong>(bytes)));
}

// Compresses `block` into `out` (of compress_bound() bytes); returns the compressed size.
std::size_t compress(VtkCompression compression, const Block& block, std::vector<char>& out) {
    if (compression == VtkCompression::lz4) {
        const int size = LZ4_compress_default(
            block.source, out.data(), static_cast<int>(block.bytes), static_cast<int>(out.size()));
        return size > 0 ? static_cast<std::size_t>(size) : 0;
    }
    auto size = static_cast<uLongf>(out.size());
    const int status = compress2(reinterpret_cast<Bytef*>(out.data()), &size,
                                 reinterpret_cast<const Bytef*>(block.source),
                                 static_cast<uLong>(block.bytes), Z_DEFAULT_COMPRESSION);
    return status == Z_OK ? static_cast<std::size_t>(size) : 0;
}

}  // namespace

std::string vtk_extent(const Box& box) {
    std::string text;
    for (std::size_t axis = 0; axis < 3; ++axis) {
        text += (axis > 0 ? " " : "") + std::to_string(box.lower[axis]) + " " +
                std::to_string(box.upper[axis] - 1);
    }
    return text;
}

std::string vtk_triple(const std::array<double, 3>& values) {
    return format_double(values[0]) + " " + format_double(values[1]) + " " +
           format_double(values[2]);
}

namespace {

// Calls task(k) for every k in [0, count) on `threads` OpenMP threads and returns when all
// have returned; the first exception a call throws is rethrown here (none may leave the
// parallel region), the calls not started by then still run.
template <typename Task>
void for_each_block(std::size_t count, std::size_t threads, const Task& task) {
    std::exception_ptr failure;
    const auto n = static_cast<std::int64_t>(count);
#pragma omp parallel for num_threads(static_cast <int>(threads)) schedule(dynamic)
    for (std::int64_t k = 0; k < n; ++k) {
        try {
            task(static_cast<std::size_t>(k));
        } catch (...) {
#pragma omp critical(simrun_vti_block_failure)
            if (!failure) failure = std::current_exception();
        }
    }
    if (failure) std::rethrow_exception(failure);
}

}  // namespace

VtiFileWriter::VtiFileWriter(std::size_t threads) : threads_(std::max<std::size_t>(threads, 1)) {}

void VtiFileWriter::write(const std::filesystem::path& path, const Grid& grid,
                          std::span<const FieldView> fields, VtkCompression compression,
                          const Box& box) {
    const bool compressed = compression != VtkCompression::none;
    std::vector<Block> blocks;
    std::vector<std::size_t> first_block;  // of each field, and one past the last
    for (std::size_t f = 0; f < fields.size(); ++f) {
        first_block.push_back(blocks.size());
        const auto* values = reinterpret_cast<const char*>(fields[f].values.data());
        const std::size_t bytes = fields[f].values.size_bytes();
        for (std::size_t at = 0; at < bytes; at += block_bytes) {
            blocks.push_back({values + at, std::min(block_bytes, bytes - at), f});
        }
    }
    first_block.push_back(blocks.size());
    if (compressed && compressed_.size() < blocks.size()) compressed_.resize(blocks.size());

    // Each block: its finite range (min, max over 1 MiB still in cache) and, compressed, its
    // bytes in compressed_[k].
    for_each_block(blocks.size(), threads_, [&](std::size_t k) {
        Block& block = blocks[k];
        const auto* values = reinterpret_cast<const double*>(block.source);
        for (std::size_t i = 0; i < block.bytes / sizeof(double); ++i) {
            if (!std::isfinite(values[i])) continue;
            block.min = std::min(block.min, values[i]);
            block.max = std::max(block.max, values[i]);
        }
        block.compressed_bytes = block.bytes;
        if (!compressed) return;
        std::vector<char>& out = compressed_[k];
        const std::size_t bound = compress_bound(compression, block_bytes);
        if (out.size() != bound) out.assign(bound, 0);
        block.compressed_bytes = compress(compression, block, out);
        if (block.compressed_bytes == 0) {
            throw std::runtime_error("cannot write '" + path.string() + "': compressing block " +
                                     std::to_string(k) + " of field '" + fields[block.field].name +
                                     "' failed");
        }
    });

    // The appended data: per field, its header then its blocks, one after the other.
    std::vector<std::vector<std::uint64_t>> headers(fields.size());
    std::vector<std::uint64_t> field_offsets(fields.size());
    std::uint64_t appended = 0;
    for (std::size_t f = 0; f < fields.size(); ++f) {
        const std::size_t bytes = fields[f].values.size_bytes();
        std::vector<std::uint64_t>& header = headers[f];
        if (compressed) {
            header = {first_block[f + 1] - first_block[f], block_bytes, bytes % block_bytes};
            for (std::size_t k = first_block[f]; k < first_block[f + 1]; ++k) {
                header.push_back(blocks[k].compressed_bytes);
            }
        } else {
            header = {bytes};
        }
        field_offsets[f] = appended;
        appended += header.size() * sizeof(std::uint64_t);
        for (std::size_t k = first_block[f]; k < first_block[f + 1]; ++k) {
            blocks[k].file_offset = appended;  // relative to the appended data for now
            appended += blocks[k].compressed_bytes;
        }
    }

    std::string xml =
        std::string("<VTKFile type=\"ImageData\" version=\"1.0\" ") +
        "byte_order=\"LittleEndian\" header_type=\"UInt64\"" +
        (compression == VtkCompression::lz4    ? " compressor=\"vtkLZ4DataCompressor\""
         : compression == VtkCompression::zlib ? " compressor=\"vtkZLibDataCompressor\""
                                               : "") +
        ">\n";
    xml += "  <ImageData WholeExtent=\"" + vtk_extent(box) + "\" Origin=\"" +
           vtk_triple(grid.origin()) + "\" Spacing=\"" + vtk_triple(grid.spacing()) +
           "\" Direction=\"1 0 0 0 1 0 0 0 1\">\n    <Piece Extent=\"" + vtk_extent(box) +
           "\">\n      <PointData>\n";
    for (std::size_t f = 0; f < fields.size(); ++f) {
        double min = std::numeric_limits<double>::infinity();
        double max = -min;
        for (std::size_t k = first_block[f]; k < first_block[f + 1]; ++k) {
            min = std::min(min, blocks[k].min);
            max = std::max(max, blocks[k].max);
        }
        xml += "        <DataArray type=\"Float64\" Name=\"" + xml_escape(fields[f].name) +
               "\" format=\"appended\"";
        if (min <= max) {
            xml +=
                " RangeMin=\"" + format_double(min) + "\" RangeMax=\"" + format_double(max) + "\"";
        }
        xml += " offset=\"" + std::to_string(field_offsets[f]) + "\"/>\n";
    }
    xml +=
        "      </PointData>\n      <CellData>\n      </CellData>\n    </Piece>\n  </ImageData>\n"
        "  <AppendedData encoding=\"raw\">\n   _";
    const std::string trailer = "\n  </AppendedData>\n</VTKFile>\n";

    File file(path);
    file.write_at(xml.data(), xml.size(), 0);
    for (std::size_t f = 0; f < fields.size(); ++f) {
        file.write_at(headers[f].data(), headers[f].size() * sizeof(std::uint64_t),
                      xml.size() + field_offsets[f]);
    }
    for_each_block(blocks.size(), threads_, [&](std::size_t k) {
        const Block& block = blocks[k];
        file.write_at(compressed ? compressed_[k].data() : block.source, block.compressed_bytes,
                      xml.size() + block.file_offset);
    });
    file.write_at(trailer.data(), trailer.size(), xml.size() + appended);
    file.close();
}

}  // namespace simrun::framework
