#include "simrun/solvers/selection/matrix_properties.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "simrun/solvers/matrices/conversions.hpp"

namespace simrun::solvers {
namespace {

// Whether the stencil storage can hold identity rows beside a main diagonal of `main_value`
// (no flag needed when it is 1; the flag takes the eighth mask bit).
bool identity_rows_fit(std::int64_t identity_rows, int num_diagonals, double main_value) {
    return identity_rows == 0 || main_value == 1.0 || num_diagonals <= 7;
}

// See MatrixProperties::constant_coefficients.
template <typename T>
bool has_constant_coefficients(const CsrData<T>& a, int num_diagonals) {
    if (num_diagonals > 8 || a.rows == 0) return false;
    // offset j - i -> its one value: at most 8 pairs, searched in order (a map per entry would
    // cost more than the rest of the analysis).
    std::vector<std::pair<std::int64_t, T>> values;
    const auto find = [&](std::int64_t offset) {
        return std::find_if(values.begin(), values.end(),
                            [offset](const auto& entry) { return entry.first == offset; });
    };
    std::int64_t identity_rows = 0;
    for (std::int32_t i = 0; i < a.rows; ++i) {
        bool has_diagonal = false;
        std::int32_t entries = 0;
        T diagonal = T(0);
        for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            if (a.values[k] == T(0)) continue;
            ++entries;
            if (a.col[k] == i) diagonal = a.values[k];
            has_diagonal = has_diagonal || a.col[k] == i;
        }
        if (!has_diagonal) return false;
        if (entries == 1 && diagonal == T(1)) {  // an identity row, held apart
            ++identity_rows;
            continue;
        }
        for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            if (a.values[k] == T(0)) continue;
            const std::int64_t offset = std::int64_t{a.col[k]} - i;
            const auto entry = find(offset);
            if (entry == values.end()) {
                values.emplace_back(offset, a.values[k]);
            } else if (!(entry->second == a.values[k])) {
                return false;
            }
        }
    }
    const auto main = find(0);
    return identity_rows_fit(identity_rows, num_diagonals,
                             main == values.end() ? 1.0 : static_cast<double>(main->second));
}

}  // namespace

namespace {

// Whether every row reaches one of `strict_rows` along nonzero entries (row i steps to column j
// where a_ij != 0): a breadth-first search backwards from them, through A^T's rows.
template <typename T>
bool reaches_strict_rows(const CsrData<T>& at, std::vector<std::int32_t> queue) {
    std::vector<char> reached(static_cast<std::size_t>(at.rows), 0);
    for (const std::int32_t j : queue) reached[static_cast<std::size_t>(j)] = 1;
    std::size_t count = queue.size();
    for (std::size_t head = 0; head < queue.size(); ++head) {
        const std::int32_t j = queue[head];
        for (std::int32_t k = at.row_ptr[j]; k < at.row_ptr[j + 1]; ++k) {
            const std::int32_t i = at.col[k];  // a_ij, stored as A^T's (j, i)
            if (at.values[k] == T(0) || reached[static_cast<std::size_t>(i)] != 0) continue;
            reached[static_cast<std::size_t>(i)] = 1;
            queue.push_back(i);
            ++count;
        }
    }
    return count == static_cast<std::size_t>(at.rows);
}

// max |a_ij - a_ji| over the entries of `a` (an entry without its mirror against 0), comparing
// row i of A with row i of A^T (both sorted by column).
template <typename T>
double largest_difference(const CsrData<T>& a, const CsrData<T>& at) {
    double asymmetry = 0.0;
    for (std::int32_t i = 0; i < a.rows; ++i) {
        std::int32_t k = a.row_ptr[i], l = at.row_ptr[i];
        const std::int32_t k_end = a.row_ptr[i + 1], l_end = at.row_ptr[i + 1];
        while (k < k_end || l < l_end) {
            const std::int32_t ck = k < k_end ? a.col[k] : a.cols;
            const std::int32_t cl = l < l_end ? at.col[l] : a.cols;
            const double vk = ck <= cl ? static_cast<double>(a.values[k]) : 0.0;
            const double vl = cl <= ck ? static_cast<double>(at.values[l]) : 0.0;
            asymmetry = std::max(asymmetry, std::abs(vk - vl));
            if (ck <= cl) ++k;
            if (cl <= ck) ++l;
        }
    }
    return asymmetry;
}

// The same without A^T: each a_ij against a_ji found by bisection in row j, rows in parallel.
// None where a row's columns are not strictly increasing (bisection needs them sorted).
template <typename T>
std::optional<double> largest_mirror_difference(const CsrData<T>& a) {
    double asymmetry = 0.0;
    bool sorted = true;
#pragma omp parallel for reduction(max : asymmetry) reduction(&& : sorted) schedule(static)
    for (std::int32_t i = 0; i < a.rows; ++i) {
        for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            if (k + 1 < a.row_ptr[i + 1] && !(a.col[k] < a.col[k + 1])) sorted = false;
            const std::int32_t j = a.col[k];
            const auto begin = a.col.begin() + a.row_ptr[j], end = a.col.begin() + a.row_ptr[j + 1];
            const auto at = std::lower_bound(begin, end, i);
            const double mirror =
                at != end && *at == i
                    ? static_cast<double>(a.values[static_cast<std::size_t>(at - a.col.begin())])
                    : 0.0;
            asymmetry = std::max(asymmetry, std::abs(static_cast<double>(a.values[k]) - mirror));
        }
    }
    if (!sorted) return std::nullopt;
    return asymmetry;
}

// The rows of `a` without a nonzero value: how many, and the first.
template <typename T>
void count_empty_lines(const CsrData<T>& a, std::int64_t& count, std::int64_t& first) {
    std::int64_t empty_rows = 0, first_empty = std::numeric_limits<std::int64_t>::max();
#pragma omp parallel for schedule(static) reduction(+ : empty_rows) reduction(min : first_empty)
    for (std::int32_t i = 0; i < a.rows; ++i) {
        bool empty = true;
        for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1] && empty; ++k) {
            empty = a.values[static_cast<std::size_t>(k)] == T(0);
        }
        if (!empty) continue;
        ++empty_rows;
        first_empty = std::min<std::int64_t>(first_empty, i);
    }
    if (empty_rows > 0 && count == 0) first = first_empty;
    count += empty_rows;
}

}  // namespace

template <typename T>
MatrixProperties analyze(const CsrData<T>& a, double symmetry_tolerance) {
    if (a.rows != a.cols) {
        throw std::invalid_argument("matrix analysis: the matrix is " + std::to_string(a.rows) +
                                    " x " + std::to_string(a.cols) + ", not square");
    }
    MatrixProperties p;
    p.rows = a.rows;
    p.nnz = a.nnz();
    p.num_diagonals = count_diagonals(a);
    double largest = 0.0;
    const auto nnz = static_cast<std::int64_t>(a.values.size());
#pragma omp parallel for reduction(max : largest) schedule(static)
    for (std::int64_t k = 0; k < nnz; ++k) {
        largest = std::max(largest, std::abs(static_cast<double>(a.values[k])));
    }

    // Symmetry: each entry a_ij against a_ji, found in row j (columns sorted), on every core.
    // An exactly symmetric matrix is its own transpose (the empty columns and the backward
    // search below read it as A^T); any other is transposed.
    const std::optional<double> mirrored = largest_mirror_difference(a);
    CsrData<T> transposed;
    if (!mirrored || *mirrored != 0.0) transposed = transpose(a);
    const CsrData<T>& at = mirrored && *mirrored == 0.0 ? a : transposed;
    const double asymmetry = mirrored ? *mirrored : largest_difference(a, at);
    p.asymmetry = largest > 0.0 ? asymmetry / largest : 0.0;
    p.symmetric = p.asymmetry <= symmetry_tolerance;

    // The rows' measures, on every core (each a sum, min, max or logical and of the rows').
    bool zero_row_sums = a.rows > 0, positive_diagonal = a.rows > 0;
    bool weakly_dominant = true, strictly_dominant = true;
    std::int32_t zero_diagonal_rows = 0;
    double worst_ratio = std::numeric_limits<double>::infinity();
    std::int32_t min_length = a.rows > 0 ? std::numeric_limits<std::int32_t>::max() : 0;
    std::int32_t max_length = 0;
    std::vector<char> strict(static_cast<std::size_t>(a.rows), 0);  // |a_ii| > sum |a_ij|
#pragma omp parallel for schedule(static) reduction(&& : zero_row_sums, positive_diagonal,     \
                                                        weakly_dominant, strictly_dominant) \
    reduction(+ : zero_diagonal_rows) reduction(min : worst_ratio, min_length)             \
    reduction(max : max_length)
    for (std::int32_t i = 0; i < a.rows; ++i) {
        double diagonal = 0.0, off = 0.0, sum = 0.0;
        for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            sum += static_cast<double>(a.values[k]);
            if (a.col[k] == i) {
                diagonal += static_cast<double>(a.values[k]);
            } else {
                off += std::abs(static_cast<double>(a.values[k]));
            }
        }
        if (!(std::abs(sum) <= 1e-12 * (std::abs(diagonal) + off))) zero_row_sums = false;
        if (diagonal == 0.0) ++zero_diagonal_rows;
        if (!(diagonal > 0.0)) positive_diagonal = false;
        if (std::abs(diagonal) < off) weakly_dominant = false;
        if (!(std::abs(diagonal) > off)) {
            strictly_dominant = false;
        } else {
            strict[static_cast<std::size_t>(i)] = 1;
        }
        if (off > 0.0) worst_ratio = std::min(worst_ratio, std::abs(diagonal) / off);
        min_length = std::min(min_length, a.row_length(i));
        max_length = std::max(max_length, a.row_length(i));
    }
    p.zero_row_sums = zero_row_sums;
    p.positive_diagonal = positive_diagonal;
    p.weakly_dominant = weakly_dominant;
    p.strictly_dominant = strictly_dominant;
    p.zero_diagonal_rows = zero_diagonal_rows;
    p.worst_dominance_ratio = worst_ratio;
    p.min_row_length = min_length;
    p.max_row_length = max_length;
    std::vector<std::int32_t> strict_rows;
    for (std::int32_t i = 0; i < a.rows; ++i) {
        if (strict[static_cast<std::size_t>(i)] != 0) strict_rows.push_back(i);
    }
    p.mean_row_length = a.rows > 0 ? static_cast<double>(p.nnz) / a.rows : 0.0;
    p.constant_coefficients = has_constant_coefficients(a, p.num_diagonals);
    count_empty_lines(a, p.empty_rows, p.first_empty_row);
    count_empty_lines(at, p.empty_columns, p.first_empty_column);
    p.chained_dominant = p.strictly_dominant;
    if (p.weakly_dominant && !p.strictly_dominant && !strict_rows.empty()) {
        p.chained_dominant = reaches_strict_rows(at, std::move(strict_rows));
    }
    return p;
}

namespace {

// Per-row measures of a DIA matrix, merged over threads and windows: every merge is a max, min,
// sum of integers or logical and, so the result does not depend on how the rows are split.
struct RowMeasures {
    std::int64_t rows = 0;
    std::int64_t nnz = 0;
    std::int64_t zero_diagonal_rows = 0;
    double largest = 0.0;
    double asymmetry = 0.0;
    double worst_ratio = std::numeric_limits<double>::infinity();
    std::int32_t min_row_length = std::numeric_limits<std::int32_t>::max();
    std::int32_t max_row_length = 0;
    bool positive_diagonal = true;
    bool weakly_dominant = true;
    bool strictly_dominant = true;
    bool has_main_diagonal = true;  // a nonzero main diagonal entry in every row
    bool zero_row_sums = true;
    std::int64_t identity_rows = 0;  // rows whose one entry is a 1 on the main diagonal
    std::int64_t empty_rows = 0, empty_columns = 0;
    std::int64_t first_empty_row = std::numeric_limits<std::int64_t>::max();
    std::int64_t first_empty_column = std::numeric_limits<std::int64_t>::max();

    void merge(const RowMeasures& o) {
        rows += o.rows;
        empty_rows += o.empty_rows;
        empty_columns += o.empty_columns;
        first_empty_row = std::min(first_empty_row, o.first_empty_row);
        first_empty_column = std::min(first_empty_column, o.first_empty_column);
        identity_rows += o.identity_rows;
        nnz += o.nnz;
        zero_diagonal_rows += o.zero_diagonal_rows;
        largest = std::max(largest, o.largest);
        asymmetry = std::max(asymmetry, o.asymmetry);
        worst_ratio = std::min(worst_ratio, o.worst_ratio);
        min_row_length = std::min(min_row_length, o.min_row_length);
        max_row_length = std::max(max_row_length, o.max_row_length);
        positive_diagonal = positive_diagonal && o.positive_diagonal;
        weakly_dominant = weakly_dominant && o.weakly_dominant;
        strictly_dominant = strictly_dominant && o.strictly_dominant;
        has_main_diagonal = has_main_diagonal && o.has_main_diagonal;
        zero_row_sums = zero_row_sums && o.zero_row_sums;
    }
};

// What the entries of one diagonal (one offset j - i) hold: any, and whether all are one value
// (on the main diagonal, the identity rows' 1 aside: `identity_only` while no other row was
// seen).
struct DiagonalMeasures {
    bool occupied = false;
    bool constant = true;
    double value = 0.0;  // the value of every entry while constant
    bool identity_only = false;

    void merge(const DiagonalMeasures& o) {
        if (!o.occupied || (occupied && o.identity_only)) return;
        if (occupied && !identity_only) {
            constant = constant && o.constant && value == o.value;
        } else {
            *this = o;
        }
    }
};

// What a range of rows holds on one diagonal: its first counted entry (a nonzero, the identity
// rows' 1 on the main diagonal aside), and whether every counted entry equals it.
template <typename T>
struct DiagonalScan {
    bool found = false;
    T first = T(0);
    bool same = true;

    void see(T value) {
        if (!found) {
            found = true;
            first = value;
        }
        same = same && first == value;  // false for a NaN, as for the whole's first
    }
};

// The scans of consecutive ranges of rows (in their order) joined into the whole's for diagonal
// d: its first is the first range's that found one, and every counted entry of every range
// equals it (== being an equivalence on the values that are not NaN); none where no range found
// an entry.
template <typename T>
std::optional<DiagonalScan<T>> join_scans(const std::vector<std::vector<DiagonalScan<T>>>& scans,
                                          int d) {
    std::optional<DiagonalScan<T>> whole;
    for (const auto& range : scans) {
        if (range.empty()) continue;  // a thread of the team that was not started
        const DiagonalScan<T>& scan = range[static_cast<std::size_t>(d)];
        if (!scan.found) continue;
        if (!whole) {
            whole = scan;
        } else {
            whole->same = whole->same && scan.same && whole->first == scan.first;
        }
    }
    return whole;
}

// The rows of a DIA matrix as the analysis measures them: measure() takes one row's entries
// (those outside the matrix and exact zeros are not entries) into the row measures and the
// diagonals' scans, in diagonal order, as the CSR analysis of to_csr(a) would.
template <typename T>
class DiaRows {
public:
    explicit DiaRows(const DiaData<T>& a) : a_(a), main_(a.find_diagonal(0)) {
        for (int d = 0; d < a.num_diagonals(); ++d) {
            const int offset = a.offsets[static_cast<std::size_t>(d)];
            mirror_.push_back(a.find_diagonal(-offset));
            reach_ = std::max<std::int64_t>(reach_, std::abs(offset));
        }
    }

    // Rows [begin, end) of the window (the whole's rows from whole_begin on); `entries` holds
    // num_diagonals() values of scratch. Returns whether one is an identity row (its one entry
    // a 1 on the main diagonal). The rows whose every entry, transposed entry and column entry
    // lies inside the matrix are measured without asking; a grid's 5 or 7 diagonals with their
    // count known to the compiler.
    bool measure(std::int64_t begin, std::int64_t end, std::int64_t whole_begin, T* entries,
                 DiagonalScan<T>* scans, RowMeasures& part) const {
        switch (a_.num_diagonals()) {
            case 5:
                return measure_rows<5>(begin, end, whole_begin, entries, scans, part);
            case 7:
                return measure_rows<7>(begin, end, whole_begin, entries, scans, part);
            default:
                return measure_rows<0>(begin, end, whole_begin, entries, scans, part);
        }
    }

private:
    // measure() for D diagonals (0: as many as the matrix has), the measures and scans kept in
    // locals that no pointer reaches (registers) while the rows are taken.
    template <int D>
    bool measure_rows(std::int64_t begin, std::int64_t end, std::int64_t whole_begin, T* entries,
                      DiagonalScan<T>* scans, RowMeasures& part) const {
        const std::int64_t inner_begin = std::clamp(reach_, begin, end);
        const std::int64_t inner_end = std::clamp(a_.n - reach_, inner_begin, end);
        bool identity = false;
        RowMeasures local = part;
        T local_entries[D > 0 ? D : 1];
        DiagonalScan<T> local_scans[D > 0 ? D : 1];
        if constexpr (D > 0) std::copy(scans, scans + D, local_scans);
        T* const e = D > 0 ? local_entries : entries;
        DiagonalScan<T>* const sc = D > 0 ? local_scans : scans;
        const auto rows = [&]<bool inner>(std::int64_t first, std::int64_t last) {
            for (std::int64_t i = first; i < last; ++i) {
                identity =
                    measure_row<inner, D>(i, whole_begin + (i - begin), e, sc, local) || identity;
            }
        };
        rows.template operator()<false>(begin, inner_begin);
        rows.template operator()<true>(inner_begin, inner_end);
        rows.template operator()<false>(inner_end, end);
        if constexpr (D > 0) std::copy(local_scans, local_scans + D, scans);
        part = local;
        return identity;
    }

    // Row i; `inner`: i is at least reach_ rows from either end of the window.
    template <bool inner, int D>
    bool measure_row(std::int64_t i, std::int64_t whole_row, T* entries, DiagonalScan<T>* scans,
                     RowMeasures& part) const {
        const int diagonals = D > 0 ? D : a_.num_diagonals();
        const std::int64_t n = a_.n;
        double diagonal = 0.0, off = 0.0, sum = 0.0;
        std::int32_t length = 0;
        bool column_empty = true;
        for (int d = 0; d < diagonals; ++d) {
            const T value = inner ? a_.at(d, i) : entry(d, i);
            entries[d] = value;
            const double v = static_cast<double>(value);
            // a_ij - a_ji, a_ji stored on the mirrored diagonal at row j.
            const std::int64_t j = i + a_.offsets[static_cast<std::size_t>(d)];
            const int m = mirror_[static_cast<std::size_t>(d)];
            const double mirrored = m < 0             ? 0.0
                                    : inner           ? static_cast<double>(a_.at(m, j))
                                    : j < 0 || j >= n ? 0.0
                                                      : static_cast<double>(entry(m, j));
            part.asymmetry = std::max(part.asymmetry, std::abs(v - mirrored));
            // Column i's entries a_ki lie at rows k = i - offset (in the window, as the
            // transposed entries do).
            const std::int64_t k = i - a_.offsets[static_cast<std::size_t>(d)];
            column_empty = column_empty &&
                           (inner ? a_.at(d, k) == T(0) : k < 0 || k >= n || entry(d, k) == T(0));
            if (value == T(0)) continue;
            ++length;
            sum += v;
            part.largest = std::max(part.largest, std::abs(v));
            if (d == main_) {
                diagonal += v;
            } else {
                off += std::abs(v);
            }
        }
        const bool identity = length == 1 && main_ >= 0 && entries[main_] == T(1);
        for (int d = 0; d < diagonals; ++d) {
            if (entries[d] != T(0) && !(d == main_ && identity)) scans[d].see(entries[d]);
        }
        if (length == 0) {
            ++part.empty_rows;
            part.first_empty_row = std::min(part.first_empty_row, whole_row);
        }
        if (column_empty) {
            ++part.empty_columns;
            part.first_empty_column = std::min(part.first_empty_column, whole_row);
        }
        part.rows += 1;
        part.nnz += length;
        if (identity) ++part.identity_rows;
        if (!(std::abs(sum) <= 1e-12 * (std::abs(diagonal) + off))) part.zero_row_sums = false;
        if (diagonal == 0.0) ++part.zero_diagonal_rows;
        if (main_ < 0 || entries[main_] == T(0)) part.has_main_diagonal = false;
        if (!(diagonal > 0.0)) part.positive_diagonal = false;
        if (std::abs(diagonal) < off) part.weakly_dominant = false;
        if (!(std::abs(diagonal) > off)) part.strictly_dominant = false;
        if (off > 0.0) part.worst_ratio = std::min(part.worst_ratio, std::abs(diagonal) / off);
        part.min_row_length = std::min(part.min_row_length, length);
        part.max_row_length = std::max(part.max_row_length, length);
        return identity;
    }

    T entry(int d, std::int64_t i) const {
        const std::int64_t j = i + a_.offsets[static_cast<std::size_t>(d)];
        return j >= 0 && j < a_.n ? a_.at(d, i) : T(0);
    }

    const DiaData<T>& a_;
    int main_;
    std::vector<int> mirror_;  // the diagonal with offset -offsets[d] (a_ji's), or -1
    std::int64_t reach_ = 0;   // the largest |offset|
};

}  // namespace

struct MatrixAnalysis::Measures {
    RowMeasures rows;
    std::map<std::int64_t, DiagonalMeasures> diagonals;  // by offset
    // The most diagonals a window stores (empty ones included): the stencil storage gives each
    // stored diagonal a mask bit, so the identity rows' flag needs one of them free.
    int stored_diagonals = 0;
};

MatrixAnalysis::MatrixAnalysis() : measures_(std::make_unique<Measures>()) {}
MatrixAnalysis::~MatrixAnalysis() = default;
MatrixAnalysis::MatrixAnalysis(MatrixAnalysis&&) noexcept = default;
MatrixAnalysis& MatrixAnalysis::operator=(MatrixAnalysis&&) noexcept = default;

// The same measures as the CSR analysis of to_csr(a) (entries outside the matrix and exact
// zeros are not entries), row by row in diagonal order, without building the CSR form.
template <typename T>
void MatrixAnalysis::add(const DiaData<T>& a, std::int64_t begin, std::int64_t end,
                         std::int64_t window_first) {
    const WindowRows rows{begin, end, window_first + begin};
    add(a, std::span(&rows, 1));
}

template <typename T>
void MatrixAnalysis::add(const DiaData<T>& a, std::span<const WindowRows> runs,
                         std::span<const int> whole_offsets) {
    check_dia("matrix analysis", a);
    measures_->stored_diagonals = std::max(measures_->stored_diagonals, a.num_diagonals());
    if (!whole_offsets.empty() &&
        whole_offsets.size() != static_cast<std::size_t>(a.num_diagonals())) {
        throw std::invalid_argument("matrix analysis: " + std::to_string(whole_offsets.size()) +
                                    " offsets in the whole for a window of " +
                                    std::to_string(a.num_diagonals()) + " diagonals");
    }
    // The runs in chunks of at most 4096 rows, the threads' units of work.
    struct Chunk {
        std::int64_t begin, end, first;
    };
    std::vector<Chunk> chunks;
    for (const WindowRows& run : runs) {
        if (run.begin < 0 || run.end > a.n || run.begin > run.end) {
            throw std::invalid_argument("matrix analysis: rows [" + std::to_string(run.begin) +
                                        ", " + std::to_string(run.end) + ") outside a window of " +
                                        std::to_string(a.n) + " rows");
        }
        for (std::int64_t b = run.begin; b < run.end; b += 4096) {
            chunks.push_back({b, std::min(run.end, b + 4096), run.first + (b - run.begin)});
        }
    }
    const auto chunk_count = static_cast<std::int64_t>(chunks.size());
    const int diagonals = a.num_diagonals();
    // One pass: each thread measures a contiguous range of the chunks (a static schedule gives
    // thread t the t-th range), and the ranges' diagonal scans are joined in their order.
    const auto threads = static_cast<std::size_t>(omp_get_max_threads());
    std::vector<std::vector<DiagonalScan<T>>> scans(threads);
    std::vector<RowMeasures> parts(threads);
    std::vector<char> any_identity(threads, 0);
    const DiaRows<T> rows(a);
#pragma omp parallel num_threads(static_cast <int>(threads))
    {
        const auto t = static_cast<std::size_t>(omp_get_thread_num());
        std::vector<DiagonalScan<T>> mine(static_cast<std::size_t>(diagonals));
        std::vector<T> entries(static_cast<std::size_t>(diagonals));
        RowMeasures part;
        bool identity = false;
#pragma omp for schedule(static) nowait
        for (std::int64_t c = 0; c < chunk_count; ++c) {
            identity = rows.measure(chunks[c].begin, chunks[c].end, chunks[c].first, entries.data(),
                                    mine.data(), part) ||
                       identity;
        }
        scans[t] = std::move(mine);
        parts[t] = part;
        any_identity[t] = identity ? 1 : 0;
    }
    RowMeasures total;
    for (const RowMeasures& part : parts) total.merge(part);
    measures_->rows.merge(total);
    const bool identity_rows =
        std::find(any_identity.begin(), any_identity.end(), 1) != any_identity.end();
    const int main = a.find_diagonal(0);
    for (int d = 0; d < diagonals; ++d) {
        // The diagonal's key among the measures: its offset in the whole.
        const std::int64_t key = whole_offsets.empty() ? a.offsets[static_cast<std::size_t>(d)]
                                                       : whole_offsets[static_cast<std::size_t>(d)];
        DiagonalMeasures found;
        found.occupied = true;
        const std::optional<DiagonalScan<T>> scan = join_scans(scans, d);
        if (!scan) {
            // No entry but the identity rows' (or none at all: then the main diagonal is
            // missing, as has_main_diagonal records).
            if (d != main || !identity_rows) continue;
            found.identity_only = true;
            found.value = 1.0;
        } else {
            found.constant = scan->same;
            found.value = static_cast<double>(scan->first);
        }
        measures_->diagonals[key].merge(found);
    }
}

MatrixProperties MatrixAnalysis::properties(double symmetry_tolerance) const {
    const RowMeasures& total = measures_->rows;
    const std::int64_t n = total.rows;
    int occupied = 0;
    bool constant = true;
    for (const auto& [offset, diagonal] : measures_->diagonals) {
        occupied += diagonal.occupied ? 1 : 0;
        constant = constant && diagonal.constant;
    }
    MatrixProperties p;
    p.rows = static_cast<std::int32_t>(n);
    p.nnz = total.nnz;
    p.num_diagonals = occupied;
    p.asymmetry = total.largest > 0.0 ? total.asymmetry / total.largest : 0.0;
    p.symmetric = p.asymmetry <= symmetry_tolerance;
    p.positive_diagonal = n > 0 && total.positive_diagonal;
    p.zero_diagonal_rows = static_cast<std::int32_t>(total.zero_diagonal_rows);
    p.weakly_dominant = total.weakly_dominant;
    p.strictly_dominant = total.strictly_dominant;
    p.chained_dominant = total.strictly_dominant;
    p.empty_rows = total.empty_rows;
    p.empty_columns = total.empty_columns;
    p.first_empty_row = total.empty_rows > 0 ? total.first_empty_row : -1;
    p.first_empty_column = total.empty_columns > 0 ? total.first_empty_column : -1;
    p.worst_dominance_ratio = total.worst_ratio;
    p.min_row_length = n > 0 ? total.min_row_length : 0;
    p.max_row_length = total.max_row_length;
    p.mean_row_length = n > 0 ? static_cast<double>(p.nnz) / static_cast<double>(n) : 0.0;
    p.zero_row_sums = n > 0 && total.zero_row_sums;
    const auto main = measures_->diagonals.find(0);
    const double main_value = main == measures_->diagonals.end() ? 1.0 : main->second.value;
    // The stencil storage gives every stored diagonal a mask bit, empty ones included.
    const int mask_bits = std::max(p.num_diagonals, measures_->stored_diagonals);
    p.constant_coefficients = n > 0 && mask_bits <= 8 && total.has_main_diagonal && constant &&
                              identity_rows_fit(total.identity_rows, mask_bits, main_value);
    return p;
}

std::vector<std::byte> MatrixAnalysis::to_bytes() const {
    static_assert(std::is_trivially_copyable_v<RowMeasures> &&
                  std::is_trivially_copyable_v<DiagonalMeasures>);
    const Measures& m = *measures_;
    const std::int64_t diagonals = static_cast<std::int64_t>(m.diagonals.size());
    std::vector<std::byte> bytes;
    const auto put = [&bytes](const auto& value) {
        const auto* first = reinterpret_cast<const std::byte*>(&value);
        bytes.insert(bytes.end(), first, first + sizeof value);
    };
    put(m.rows);
    put(m.stored_diagonals);
    put(diagonals);
    for (const auto& [offset, diagonal] : m.diagonals) {
        put(offset);
        put(diagonal);
    }
    return bytes;
}

void MatrixAnalysis::merge_bytes(std::span<const std::byte> bytes) {
    std::size_t at = 0;
    const auto get = [&](auto& value) {
        if (at + sizeof value > bytes.size()) {
            throw std::invalid_argument("matrix analysis: truncated measures");
        }
        std::memcpy(&value, bytes.data() + at, sizeof value);
        at += sizeof value;
    };
    RowMeasures rows;
    int stored = 0;
    std::int64_t diagonals = 0;
    get(rows);
    get(stored);
    get(diagonals);
    measures_->rows.merge(rows);
    measures_->stored_diagonals = std::max(measures_->stored_diagonals, stored);
    for (std::int64_t d = 0; d < diagonals; ++d) {
        std::int64_t offset = 0;
        DiagonalMeasures diagonal;
        get(offset);
        get(diagonal);
        measures_->diagonals[offset].merge(diagonal);
    }
}

template <typename T>
MatrixProperties analyze(const DiaData<T>& a, double symmetry_tolerance) {
    MatrixAnalysis analysis;
    analysis.add(a, 0, a.n);
    return analysis.properties(symmetry_tolerance);
}

std::string MatrixProperties::singularity() const {
    if (!structurally_singular()) return {};
    const auto lines = [](std::int64_t count, std::int64_t first, const char* kind) {
        return std::to_string(count) + " empty " + kind + (count == 1 ? "" : "s") + " (" +
               (count == 1 ? "" : "the first: ") + kind + " " + std::to_string(first) + ")";
    };
    std::string text = "structurally singular: ";
    if (empty_rows > 0) text += lines(empty_rows, first_empty_row, "row");
    if (empty_rows > 0 && empty_columns > 0) text += " and ";
    if (empty_columns > 0) text += lines(empty_columns, first_empty_column, "column");
    return text + ", counting from 0; A x = b has no solution or infinitely many";
}

std::string MatrixProperties::describe() const {
    char text[512];
    const char* dominance = strictly_dominant  ? "strictly diagonally dominant"
                            : chained_dominant ? "weakly chained diagonally dominant"
                            : weakly_dominant  ? "weakly diagonally dominant"
                                               : "not diagonally dominant";
    std::snprintf(text, sizeof text,
                  "%d rows, %lld nonzeros, %d diagonals, %s, %s, %s (worst row ratio %.3g)", rows,
                  static_cast<long long>(nnz), num_diagonals,
                  symmetric ? "symmetric" : "nonsymmetric",
                  positive_diagonal        ? "positive diagonal"
                  : zero_diagonal_rows > 0 ? "zero diagonal entries"
                                           : "diagonal not all positive",
                  dominance, worst_dominance_ratio);
    return std::string(text) + (zero_row_sums ? ", rows sum to zero (singular: A 1 = 0)" : "") +
           (structurally_singular() ? ", " + singularity() : "");
}

template MatrixProperties analyze(const CsrData<float>&, double);
template MatrixProperties analyze(const CsrData<double>&, double);
template MatrixProperties analyze(const DiaData<float>&, double);
template MatrixProperties analyze(const DiaData<double>&, double);
template void MatrixAnalysis::add(const DiaData<float>&, std::int64_t, std::int64_t, std::int64_t);
template void MatrixAnalysis::add(const DiaData<double>&, std::int64_t, std::int64_t, std::int64_t);
template void MatrixAnalysis::add(const DiaData<float>&, std::span<const WindowRows>,
                                  std::span<const int>);
template void MatrixAnalysis::add(const DiaData<double>&, std::span<const WindowRows>,
                                  std::span<const int>);

}  // namespace simrun::solvers
