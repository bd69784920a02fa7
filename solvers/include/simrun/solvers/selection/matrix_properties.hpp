#pragma once
// Measured properties of a square matrix, from which a solver is chosen (solver_selection.hpp).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "simrun/solvers/matrices/csr_data.hpp"
#include "simrun/solvers/matrices/dia_data.hpp"

namespace simrun::solvers {

struct MatrixProperties {
    std::int32_t rows = 0;
    std::int64_t nnz = 0;
    int num_diagonals = 0;           // distinct offsets j - i holding entries
    bool symmetric = false;          // |a_ij - a_ji| <= tolerance * max |a| everywhere
    double asymmetry = 0.0;          // max |a_ij - a_ji| / max |a|
    bool positive_diagonal = false;  // every a_ii > 0
    std::int32_t zero_diagonal_rows = 0;
    bool weakly_dominant = false;        // |a_ii| >= sum_{j != i} |a_ij| in every row
    bool strictly_dominant = false;      // ... with strict inequality in every row
    double worst_dominance_ratio = 0.0;  // min_i |a_ii| / sum_{j != i} |a_ij| (inf: diagonal)
    // Weakly chained diagonally dominant: weakly dominant, and every row reaches a strictly
    // dominant row along nonzero entries (i to j where a_ij != 0). Then the Jacobi matrix
    // J = I - D^-1 A has rho(|J|) < 1 (|J|'s row sums are <= 1, < 1 on the strict rows, and
    // every row of |J|^n reaches one, so ||(|J|)^n||_inf < 1): A is a nonsingular H-matrix, on
    // which Jacobi and Gauss-Seidel (in any order of the rows) converge. Irreducibly dominant
    // matrices are such. Measured by a search over the pattern in the CSR analysis; a DIA
    // analysis (measured in windows) claims it only where the matrix is strictly dominant.
    bool chained_dominant = false;
    std::int32_t min_row_length = 0;
    std::int32_t max_row_length = 0;
    double mean_row_length = 0.0;
    // A grid stencil: at most 8 diagonals, each holding one value wherever it is nonzero, and
    // the main diagonal nonzero in every row (the stencil format's condition; diagonals stored
    // in a DIA input count, empty ones included); identity rows (a grid's Dirichlet nodes)
    // aside where the stencil has at most 7 diagonals or its main diagonal is 1.
    bool constant_coefficients = false;
    // Every row sums to zero (|sum_j a_ij| <= 1e-12 sum_j |a_ij|): A 1 = 0, so A is singular
    // with the constants in its null space (a pure Neumann problem's operator).
    bool zero_row_sums = false;
    // Rows and columns without a nonzero entry (0-based index of the first, -1 where none):
    // the matrix is then singular whatever its values, and A x = b has no solution or
    // infinitely many.
    std::int64_t empty_rows = 0, empty_columns = 0;
    std::int64_t first_empty_row = -1, first_empty_column = -1;
    bool structurally_singular() const { return empty_rows > 0 || empty_columns > 0; }
    // E.g. "structurally singular: 2 empty rows (the first: row 1, counting from 0) and 2
    // empty columns (the first: column 1)"; empty where the matrix is not.
    std::string singularity() const;

    // One line, e.g. "960 rows, 15844 nonzeros, 5 diagonals, symmetric, positive diagonal,
    // weakly diagonally dominant (worst row ratio 1)".
    std::string describe() const;
};

// Throws std::invalid_argument for a matrix that is not square.
template <typename T>
MatrixProperties analyze(const CsrData<T>& matrix, double symmetry_tolerance = 1e-12);
template <typename T>
MatrixProperties analyze(const DiaData<T>& matrix, double symmetry_tolerance = 1e-12);

// The analysis of a DIA matrix met in parts, for one too large to hold: each part is a window,
// a DIA matrix holding consecutive rows of the whole with the whole's offsets (couplings that
// leave the window dropped), of which add() measures rows [begin, end) -- rows whose entries
// and transposed entries (a_ji, on row j) all lie in the window. Once every row of the whole
// has been added once, in any order and any split, properties() equals analyze() of the whole,
// bit for bit (every measure merges by max, min, integer sum or logical and).
class MatrixAnalysis {
public:
    MatrixAnalysis();
    ~MatrixAnalysis();
    MatrixAnalysis(MatrixAnalysis&&) noexcept;
    MatrixAnalysis& operator=(MatrixAnalysis&&) noexcept;

    // Throws std::invalid_argument for a malformed window or rows outside it. window_first is
    // the whole's index of the window's row 0 (for the rows the properties name).
    template <typename T>
    void add(const DiaData<T>& window, std::int64_t begin, std::int64_t end,
             std::int64_t window_first = 0);
    // The same for runs of the window's rows (each with the whole's index of its first row),
    // the window's diagonals counted as the whole's with the offsets `whole_offsets` (one per
    // diagonal; none: the window's own): a box of a grid, whose rows are runs of the whole's
    // and whose diagonals couple at the box's strides, is measured as the grid's.
    struct WindowRows {
        std::int64_t begin = 0, end = 0;
        std::int64_t first = 0;  // the whole's index of row `begin`
    };
    template <typename T>
    void add(const DiaData<T>& window, std::span<const WindowRows> rows,
             std::span<const int> whole_offsets = {});
    MatrixProperties properties(double symmetry_tolerance = 1e-12) const;

    // The measures as bytes, and the merge of another analysis's so written: the rows of a
    // matrix split over ranks are measured each on its rank and merged on every rank, in rank
    // order, into the whole's (equal to one analysis of all the windows in that order).
    std::vector<std::byte> to_bytes() const;
    void merge_bytes(std::span<const std::byte> bytes);

private:
    struct Measures;
    std::unique_ptr<Measures> measures_;
};

}  // namespace simrun::solvers
