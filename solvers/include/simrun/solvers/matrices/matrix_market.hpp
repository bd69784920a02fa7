#pragma once
// Matrix Market files (https://math.nist.gov/MatrixMarket/formats.html): read coordinate and
// array files (real, integer, pattern; general, symmetric, skew-symmetric; symmetric ones are
// expanded to both triangles), write coordinate matrices and array vectors.
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "simrun/solvers/matrices/coo_data.hpp"
#include "simrun/solvers/matrices/csr_data.hpp"

namespace simrun::solvers {

// A malformed or unsupported file. The message starts with "FILE:LINE: " and says what was
// expected ("expected 3 entries (row column value), got 2", "row index 0 out of range 1..960").
class MatrixMarketError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Reads a matrix (coordinate or array). Pattern entries get the value 1. Throws
// MatrixMarketError for a missing file, a bad header, complex data, a size line or entry that
// does not parse, indices out of range, too few or too many entries, or non-finite values.
CooData<double> read_matrix_market(const std::filesystem::path& path);

// Reads a vector: an array file with one column, or a coordinate file of n x 1 (missing
// entries are 0). Throws MatrixMarketError as above, also for more than one column.
std::vector<double> read_matrix_market_vector(const std::filesystem::path& path);

// Writes `values` as an n x 1 real array file with full precision (%.17g). The file is written
// to a temporary name and renamed. Throws std::runtime_error naming the path on failure.
void write_matrix_market_vector(const std::filesystem::path& path, std::span<const double> values);
// Writes a general real coordinate file, 1-based indices, full precision, atomically.
void write_matrix_market(const std::filesystem::path& path, const CsrData<double>& matrix);

}  // namespace simrun::solvers
