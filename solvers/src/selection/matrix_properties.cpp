#include "simrun/solvers/selection/matrix_properties.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
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

// Per-row measures of a matrix, merged over threads and windows (and CSR blocks): every merge is a
// max, min, sum of integers or logical and, so the result does not depend on how the rows are
// split.
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

// The offsets j - i a range of rows stores entries on (zeros included), ascending, up to `few`
// (past them `many`: then count_diagonals counts them).
struct OffsetList {
    static constexpr std::size_t few = 64;
    std::vector<std::int64_t> seen;
    bool many = false;

    // One row's offsets, rising as its columns do: a walk along `seen` from its start.
    void see(std::int64_t offset, std::size_t& d) {
        while (d < seen.size() && seen[d] < offset) ++d;
        if (d < seen.size() && seen[d] == offset) return;
        if (seen.size() == few) {
            many = true;
            return;
        }
        seen.insert(seen.begin() + static_cast<std::ptrdiff_t>(d), offset);
    }
};

// The nonzero values of a range of rows by offset (identity rows aside), for the stencil test:
// each offset's first value, and whether every later value equals its offset's first; past 8
// offsets, none fits.
template <typename T>
struct OffsetValues {
    static constexpr std::int64_t none = std::numeric_limits<std::int64_t>::min();  // no j - i
    std::array<std::int64_t, 8> offsets = {none, none, none, none, none, none, none, none};
    std::array<T, 8> first{};
    int count = 0;
    bool same = true;  // the caller ands in see()'s answers
    bool fits = true;  // at most 8 offsets, and every row but the identity rows has a_ii != 0

    // The slot of `offset`, or -1 (all eight compared, no branch per slot).
    int find(std::int64_t offset) const {
        int found = -1;
        for (int s = 0; s < 8; ++s) {
            found = offsets[static_cast<std::size_t>(s)] == offset ? s : found;
        }
        return found;
    }
    // Whether `value` equals the first value of `offset` (true for the first, kept). `hint`:
    // the slot to try first (the one this entry's place in the row found last).
    bool see(std::int64_t offset, T value, int& hint) {
        const int s = offsets[static_cast<std::size_t>(hint)] == offset ? hint : find(offset);
        if (s < 0) return add(offset, value);
        hint = s;
        return first[static_cast<std::size_t>(s)] == value;
    }
    // The next range's (rows after these): its first values compared with the firsts seen.
    void join(const OffsetValues& next) {
        fits = fits && next.fits;
        same = same && next.same;
        for (int s = 0; s < next.count && fits; ++s) {
            const auto n = static_cast<std::size_t>(s);
            same = add(next.offsets[n], next.first[n]) && same;
        }
    }

private:
    bool add(std::int64_t offset, T value) {
        const int s = find(offset);
        if (s >= 0) return first[static_cast<std::size_t>(s)] == value;
        if (count == 8) {
            fits = false;
        } else {
            const auto n = static_cast<std::size_t>(count++);
            offsets[n] = offset;
            first[n] = value;
        }
        return true;
    }
};

// One thread's measures of a block of rows of a CSR matrix (merged in the blocks' order).
template <typename T>
struct CsrMeasures {
    bool valid = true;  // the rows met check_csr's conditions
    RowMeasures rows;   // its asymmetry: from the entries below the diagonal
    bool any_strict = false;
    std::int64_t upper = 0, mirrored = 0;  // entries above the diagonal; lower ones with a mirror
    OffsetList offsets;
    OffsetValues<T> values;
    // Per place in a row (the 16th and after sharing one): where the last row found its mirrors
    // and its offsets' slots (the diagonal's last), tried first.
    std::array<std::int32_t, 16> mirror_hints{};
    std::array<int, 17> value_hints{};

    // The next block's measures (rows after these).
    void join(const CsrMeasures& o) {
        valid = valid && o.valid;
        rows.merge(o.rows);
        any_strict = any_strict || o.any_strict;
        upper += o.upper;
        mirrored += o.mirrored;
        std::vector<std::int64_t> joined;
        std::set_union(offsets.seen.begin(), offsets.seen.end(), o.offsets.seen.begin(),
                       o.offsets.seen.end(), std::back_inserter(joined));
        offsets.many = offsets.many || o.offsets.many || joined.size() > OffsetList::few;
        offsets.seen = std::move(joined);
        values.join(o.values);
    }
};

// The arrays of a square CSR matrix as plain pointers, which the row loops keep in registers.
template <typename T>
struct CsrArrays {
    const std::int32_t* row_ptr;
    const std::int32_t* col;
    const T* values;
    std::int64_t nnz;
    std::int32_t n;

    explicit CsrArrays(const CsrData<T>& a)
        : row_ptr(a.row_ptr.data()),
          col(a.col.data()),
          values(a.values.data()),
          nnz(static_cast<std::int64_t>(a.col.size())),
          n(a.rows) {}
};

// Where a_ji lies in row j: first at `hint` places into the row (where the last one was found),
// else its columns below i counted where the row is short, else bisection. -1 where absent, -2
// where row j's bounds are invalid.
template <typename T>
[[gnu::always_inline]] inline std::int64_t mirror_index(const CsrArrays<T>& a, std::int32_t j,
                                                        std::int32_t i, std::int32_t& hint) {
    const std::int32_t* const col = a.col;
    const std::int32_t begin = a.row_ptr[j], end = a.row_ptr[j + 1];
    if (!(0 <= begin && begin <= end && end <= a.nnz)) return -2;
    if (hint < end - begin && col[begin + hint] == i) return begin + hint;
    std::int32_t at = begin;
    if (end - begin <= 16) {
        for (std::int32_t k = begin; k < end; ++k) at += col[k] < i ? 1 : 0;
    } else {
        at = static_cast<std::int32_t>(std::lower_bound(col + begin, col + end, i) - col);
    }
    if (!(at < end && col[at] == i)) return -1;
    hint = at - begin;
    return at;
}

// max |a_ij - 0| over the entries above the diagonal without a mirror a_ji (those with one were
// compared from below), on every core: needed only where the lower entries did not find as many
// mirrors as there are upper entries.
template <typename T>
double largest_unmirrored_upper(const CsrData<T>& a) {
    double asymmetry = 0.0;
#pragma omp parallel for schedule(static) reduction(max : asymmetry)
    for (std::int32_t i = 0; i < a.rows; ++i) {
        for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            std::int32_t hint = 0;
            if (a.col[k] <= i || mirror_index(CsrArrays<T>(a), a.col[k], i, hint) >= 0) continue;
            asymmetry = std::max(asymmetry, std::abs(static_cast<double>(a.values[k])));
        }
    }
    return asymmetry;
}

// The end of row i's part of the stencil test (MatrixProperties::constant_coefficients), its
// off-diagonal nonzeros seen already: a row without a nonzero a_ii breaks it, an identity row
// (its one nonzero a 1 on the diagonal) is counted apart, any other row's a_ii is seen.
template <typename T>
void end_stencil_row(std::int32_t nonzeros, bool has_diagonal, T diagonal_value,
                     std::int64_t& identity_rows, OffsetValues<T>& values, int& hint) {
    if (!values.fits) return;
    if (!has_diagonal) {
        values.fits = false;
    } else if (nonzeros == 1 && diagonal_value == T(1)) {
        ++identity_rows;
    } else {
        values.same = values.see(0, diagonal_value, hint) && values.same;
    }
}

// Row i into `m`: every measure of the CSR analysis, in one read of the row (and the mirrored
// entries' rows). reached[i]: the row is strictly dominant, or steps along a nonzero to a row
// of this block (from `block_begin`) reached before it. Rows that break check_csr's
// conditions (bounds, columns in range and rising) only clear m.valid.
template <typename T>
void measure_csr_row(const CsrArrays<T> a, std::int32_t i, std::int32_t block_begin, char* reached,
                     CsrMeasures<T>& m) {
    const std::int32_t begin = a.row_ptr[i], end = a.row_ptr[i + 1];
    if (!(0 <= begin && begin <= end && end <= a.nnz)) {
        m.valid = false;
        return;
    }
    double diagonal = 0.0, off = 0.0, sum = 0.0, largest = m.rows.largest,
           asymmetry = m.rows.asymmetry;
    std::int32_t nonzeros = 0;
    bool has_diagonal = false, reaches = false, same = true;
    T diagonal_value = T(0);
    std::size_t d = 0;
    std::int64_t upper = 0, mirrored = 0;
    for (std::int32_t k = begin; k < end; ++k) {
        const std::int32_t j = a.col[k];
        const T value = a.values[k];
        const auto position = static_cast<std::size_t>(std::min(k - begin, 15));
        // a_ij - a_ji once per pair, from the lower entry, its mirror in a row read already (a
        // diagonal entry: 0 or NaN, no max).
        const std::int64_t mirror = j < 0 || j >= a.n || (k > begin && !(a.col[k - 1] < j)) ? -2
                                    : j < i ? mirror_index(a, j, i, m.mirror_hints[position])
                                            : -1;
        if (mirror == -2) {
            m.valid = false;
            return;
        }
        const double v = static_cast<double>(value);
        largest = std::max(largest, std::abs(v));
        if (j < i) {
            const double w =
                mirror >= 0 ? static_cast<double>(a.values[static_cast<std::size_t>(mirror)]) : 0.0;
            asymmetry = std::max(asymmetry, std::abs(v - w));
            mirrored += mirror >= 0 ? 1 : 0;
        }
        upper += j > i ? 1 : 0;
        sum += v;
        if (j == i) {
            diagonal += v;
        } else {
            off += std::abs(v);
        }
        m.offsets.see(std::int64_t{j} - i, d);
        if (value == T(0)) continue;
        ++nonzeros;
        if (j == i) diagonal_value = value;
        has_diagonal = has_diagonal || j == i;
        if (j != i && m.values.fits) {
            same = m.values.see(std::int64_t{j} - i, value, m.value_hints[position]) && same;
        }
        reaches = reaches || (j >= block_begin && j < i && reached[j] != 0);
    }
    RowMeasures& r = m.rows;
    m.values.same = m.values.same && same;
    r.largest = largest;
    r.asymmetry = asymmetry;
    m.upper += upper;
    m.mirrored += mirrored;
    end_stencil_row(nonzeros, has_diagonal, diagonal_value, r.identity_rows, m.values,
                    m.value_hints[16]);
    if (nonzeros == 0) {
        ++r.empty_rows;
        r.first_empty_row = std::min<std::int64_t>(r.first_empty_row, i);
    }
    if (!(std::abs(sum) <= 1e-12 * (std::abs(diagonal) + off))) r.zero_row_sums = false;
    if (diagonal == 0.0) ++r.zero_diagonal_rows;
    if (!(diagonal > 0.0)) r.positive_diagonal = false;
    if (std::abs(diagonal) < off) r.weakly_dominant = false;
    const bool strict = std::abs(diagonal) > off;
    r.strictly_dominant = r.strictly_dominant && strict;
    m.any_strict = m.any_strict || strict;
    reached[i] = strict || reaches ? 1 : 0;
    if (off > 0.0) r.worst_ratio = std::min(r.worst_ratio, std::abs(diagonal) / off);
    r.min_row_length = std::min(r.min_row_length, end - begin);
    r.max_row_length = std::max(r.max_row_length, end - begin);
}

// Whether every row reaches a strictly dominant row along nonzero entries (row i steps to column
// j where a_ij != 0), given the rows `reached` already: a breadth-first search backwards from
// them, through A^T's rows.
template <typename T>
bool reaches_strict_rows(const CsrData<T>& at, std::vector<char>& reached) {
    std::vector<std::int32_t> queue;
    for (std::int32_t j = 0; j < at.rows; ++j) {
        if (reached[static_cast<std::size_t>(j)] != 0) queue.push_back(j);
    }
    for (std::size_t head = 0; head < queue.size(); ++head) {
        const std::int32_t j = queue[head];
        for (std::int32_t k = at.row_ptr[j]; k < at.row_ptr[j + 1]; ++k) {
            const std::int32_t i = at.col[k];  // a_ij, stored as A^T's (j, i)
            if (at.values[k] == T(0) || reached[static_cast<std::size_t>(i)] != 0) continue;
            reached[static_cast<std::size_t>(i)] = 1;
            queue.push_back(i);
        }
    }
    return queue.size() == static_cast<std::size_t>(at.rows);
}

// Marks the rows still unreached that step along a nonzero to a reached row, on every core in
// sweeps over the rows (each thread its block, in place; backwards, then forwards, ...). Whether
// every row is reached; false once a sweep marks none (then none will: no order decides it);
// none after `sweeps` sweeps that all marked some.
template <typename T>
std::optional<bool> sweep_reached(const CsrData<T>& a, std::vector<char>& reached,
                                  std::int64_t unreached, int sweeps) {
    for (int s = 0; s < sweeps && unreached > 0; ++s) {
        std::int64_t marked = 0;
        const bool backwards = s % 2 == 0;
#pragma omp parallel for schedule(static) reduction(+ : marked)
        for (std::int32_t r = 0; r < a.rows; ++r) {
            const std::int32_t i = backwards ? a.rows - 1 - r : r;
            std::atomic_ref<char> row(reached[static_cast<std::size_t>(i)]);
            if (row.load(std::memory_order_relaxed) != 0) continue;
            for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
                std::atomic_ref<char> column(reached[static_cast<std::size_t>(a.col[k])]);
                if (a.values[k] == T(0) || column.load(std::memory_order_relaxed) == 0) continue;
                row.store(1, std::memory_order_relaxed);
                ++marked;
                break;
            }
        }
        if (marked == 0) return false;
        unreached -= marked;
    }
    if (unreached == 0) return true;
    return std::nullopt;
}

// How many of `flags` are 0, and the first, on every core.
void count_unset(const std::vector<char>& flags, std::int64_t& count, std::int64_t& first) {
    const auto n = static_cast<std::int64_t>(flags.size());
    std::int64_t unset = 0, first_unset = std::numeric_limits<std::int64_t>::max();
#pragma omp parallel for schedule(static) reduction(+ : unset) reduction(min : first_unset)
    for (std::int64_t i = 0; i < n; ++i) {
        if (flags[static_cast<std::size_t>(i)] != 0) continue;
        ++unset;
        first_unset = std::min(first_unset, i);
    }
    count = unset;
    first = unset > 0 ? first_unset : -1;
}

// The columns of `a` without a nonzero value: how many, and the first.
template <typename T>
void count_empty_columns(const CsrData<T>& a, std::int64_t& count, std::int64_t& first) {
    std::vector<char> used(static_cast<std::size_t>(a.cols), 0);
#pragma omp parallel for schedule(static)
    for (std::int32_t i = 0; i < a.rows; ++i) {
        for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            if (a.values[k] == T(0)) continue;
            std::atomic_ref<char> flag(used[static_cast<std::size_t>(a.col[k])]);
            if (flag.load(std::memory_order_relaxed) == 0) flag.store(1, std::memory_order_relaxed);
        }
    }
    count_unset(used, count, first);
}

// The rows' measures in one pass: each thread a contiguous block of rows, joined in block order
// (the stencil's first values as the rows' order gives them). reached: see measure_csr_row.
template <typename T>
CsrMeasures<T> measure_csr_rows(const CsrData<T>& a, std::vector<char>& reached) {
    const auto threads = static_cast<std::size_t>(omp_get_max_threads());
    std::vector<CsrMeasures<T>> parts(threads);
#pragma omp parallel num_threads(static_cast <int>(threads))
    {
        const auto t = static_cast<std::int64_t>(omp_get_thread_num());
        const auto team = static_cast<std::int64_t>(omp_get_num_threads());
        const auto begin = static_cast<std::int32_t>(a.rows * t / team);
        const auto end = static_cast<std::int32_t>(a.rows * (t + 1) / team);
        CsrMeasures<T> m;
        for (std::int32_t i = begin; i < end && m.valid; ++i) {
            measure_csr_row(CsrArrays<T>(a), i, begin, reached.data(), m);
        }
        parts[static_cast<std::size_t>(t)] = std::move(m);
    }
    CsrMeasures<T> whole = std::move(parts.front());
    for (std::size_t t = 1; t < threads; ++t) whole.join(parts[t]);
    return whole;
}

}  // namespace

// The analysis in one parallel pass over the rows (each entry's mirror a_ji found by bisection
// in row j), which also checks the rows as check_csr does: a matrix that fails is handed to
// count_diagonals for its message. It reads row_ptr, col and values once (16 bytes per double
// entry), and more only for a nonsymmetric matrix (its columns' flags) or a weakly dominant one
// whose search does not end in the pass (the transpose and a search backwards).
template <typename T>
MatrixProperties analyze(const CsrData<T>& a, double symmetry_tolerance) {
    if (a.rows != a.cols) {
        throw std::invalid_argument("matrix analysis: the matrix is " + std::to_string(a.rows) +
                                    " x " + std::to_string(a.cols) + ", not square");
    }
    const bool shaped = a.rows >= 0 && a.row_ptr.size() == static_cast<std::size_t>(a.rows) + 1 &&
                        a.col.size() == a.values.size() && a.nnz() <= max_csr_index &&
                        a.row_ptr.front() == 0 && a.row_ptr.back() == a.nnz();
    std::vector<char> reached(shaped ? static_cast<std::size_t>(a.rows) : 0, 0);
    CsrMeasures<T> m;
    m.valid = shaped;
    if (shaped) m = measure_csr_rows(a, reached);
    if (!m.valid) {
        (void)count_diagonals(a);  // throws check_csr's message
        throw std::invalid_argument("matrix analysis: malformed CSR matrix");
    }
    MatrixProperties p;
    p.rows = a.rows;
    p.nnz = a.nnz();
    const RowMeasures& r = m.rows;
    p.num_diagonals = m.offsets.many ? count_diagonals(a) : static_cast<int>(m.offsets.seen.size());
    const double asymmetry =
        m.upper == m.mirrored ? r.asymmetry : std::max(r.asymmetry, largest_unmirrored_upper(a));
    p.asymmetry = r.largest > 0.0 ? asymmetry / r.largest : 0.0;
    p.symmetric = p.asymmetry <= symmetry_tolerance;
    p.zero_row_sums = a.rows > 0 && r.zero_row_sums;
    p.positive_diagonal = a.rows > 0 && r.positive_diagonal;
    p.weakly_dominant = r.weakly_dominant;
    p.strictly_dominant = r.strictly_dominant;
    p.zero_diagonal_rows = static_cast<std::int32_t>(r.zero_diagonal_rows);
    p.worst_dominance_ratio = r.worst_ratio;
    p.min_row_length = a.rows > 0 ? r.min_row_length : 0;
    p.max_row_length = r.max_row_length;
    p.mean_row_length = a.rows > 0 ? static_cast<double>(p.nnz) / a.rows : 0.0;
    const OffsetValues<T>& values = m.values;
    const int main = values.find(0);
    p.constant_coefficients =
        a.rows > 0 && p.num_diagonals <= 8 && values.fits && values.same &&
        identity_rows_fit(
            r.identity_rows, p.num_diagonals,
            main < 0 ? 1.0 : static_cast<double>(values.first[static_cast<std::size_t>(main)]));
    p.empty_rows = r.empty_rows;
    p.first_empty_row = r.empty_rows > 0 ? r.first_empty_row : -1;
    // An exactly symmetric matrix is its own transpose: its columns are its rows.
    const bool mirrored = asymmetry == 0.0;
    if (mirrored) {
        p.empty_columns = p.empty_rows;
        p.first_empty_column = p.first_empty_row;
    } else {
        count_empty_columns(a, p.empty_columns, p.first_empty_column);
    }
    p.chained_dominant = p.strictly_dominant;
    if (p.weakly_dominant && !p.strictly_dominant && m.any_strict) {
        std::int64_t unreached = 0, first_unreached = -1;
        count_unset(reached, unreached, first_unreached);
        // The pass reached most rows; a few sweeps reach the rest (a row ordering's worst case
        // needs as many sweeps as it has rows, then a search backwards through A^T finishes).
        const std::optional<bool> swept = sweep_reached(a, reached, unreached, 4);
        CsrData<T> transposed;
        if (!swept && !mirrored) transposed = transpose(a);
        p.chained_dominant =
            swept ? *swept : reaches_strict_rows(mirrored ? a : transposed, reached);
    }
    return p;
}

namespace {

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
