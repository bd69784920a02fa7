// Conversions between the host formats. CSR is the hub; every input is checked first, so a
// conversion never reads out of bounds and never produces a CSR that breaks its invariants.
#include "simrun/solvers/matrices/conversions.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "simrun/solvers/matrices/first_touch.hpp"

namespace simrun::solvers {
namespace {

constexpr std::int64_t max_index = max_csr_index;
static_assert(max_index == std::numeric_limits<std::int32_t>::max());

[[noreturn]] void fail(const char* function, const std::string& what) {
    throw std::invalid_argument(std::string(function) + ": " + what);
}

std::string str(std::int64_t value) { return std::to_string(value); }

std::string format_value(double value) {
    char buffer[32];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    return std::string(buffer, result.ptr);
}

std::string range(std::int64_t size) { return "[0, " + str(size) + ")"; }

void check_shape(const char* function, std::int64_t rows, std::int64_t cols) {
    if (rows < 0 || cols < 0) {
        fail(function, "negative size " + str(rows) + " x " + str(cols));
    }
}

void check_nnz(const char* function, std::int64_t nnz) {
    if (nnz > max_index) {
        fail(function, str(nnz) + " nonzeros exceed the 32-bit index limit of " + str(max_index));
    }
}

// Whether row i's columns lie in [0, cols) and strictly increase.
template <typename T>
bool columns_valid(const CsrData<T>& a, std::int32_t i) {
    bool valid = true;
    for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
        valid = valid && a.col[k] >= 0 && a.col[k] < a.cols &&
                (k == a.row_ptr[i] || a.col[k] > a.col[k - 1]);
    }
    return valid;
}

// Throws check_csr's message for row i, whose columns are not valid.
template <typename T>
[[noreturn]] void fail_columns(const char* function, const CsrData<T>& a, std::int32_t i) {
    for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
        if (a.col[k] < 0 || a.col[k] >= a.cols) {
            fail(function, "row " + str(i) + ": column index " + str(a.col[k]) + " out of range " +
                               range(a.cols));
        }
        if (k > a.row_ptr[i] && a.col[k] <= a.col[k - 1]) {
            fail(function, "row " + str(i) + ": columns not strictly increasing (" + str(a.col[k]) +
                               " after " + str(a.col[k - 1]) + ")");
        }
    }
    fail(function, "row " + str(i) + ": columns not valid");
}

// The CsrData invariants: row_ptr has rows + 1 non-decreasing entries from 0 to nnz, and each
// row's columns lie in [0, cols) and strictly increase.
template <typename T>
void check_csr(const char* function, const CsrData<T>& a) {
    check_shape(function, a.rows, a.cols);
    if (a.row_ptr.size() != static_cast<std::size_t>(a.rows) + 1) {
        fail(function, "row_ptr has " + str(static_cast<std::int64_t>(a.row_ptr.size())) +
                           " entries, expected rows + 1 = " + str(std::int64_t{a.rows} + 1));
    }
    if (a.col.size() != a.values.size()) {
        fail(function, "col has " + str(a.nnz()) + " entries but values has " +
                           str(static_cast<std::int64_t>(a.values.size())));
    }
    check_nnz(function, a.nnz());
    if (a.row_ptr.front() != 0) {
        fail(function, "row_ptr[0] is " + str(a.row_ptr.front()) + ", expected 0");
    }
    if (a.row_ptr.back() != a.nnz()) {
        fail(function,
             "row_ptr[rows] is " + str(a.row_ptr.back()) + ", expected nnz = " + str(a.nnz()));
    }
    // The first row where row_ptr decreases, then the first row whose columns break the
    // invariants (their message made by a scan of that row alone), found on every core.
    std::int64_t decreasing = a.rows;
#pragma omp parallel for schedule(static) reduction(min : decreasing)
    for (std::int32_t i = 0; i < a.rows; ++i) {
        if (a.row_ptr[i + 1] < a.row_ptr[i]) decreasing = std::min<std::int64_t>(decreasing, i);
    }
    if (decreasing < a.rows) {
        const auto i = static_cast<std::int32_t>(decreasing);
        fail(function, "row_ptr decreases at row " + str(i) + " (" + str(a.row_ptr[i]) + " then " +
                           str(a.row_ptr[i + 1]) + ")");
    }
    std::int64_t broken = a.rows;
#pragma omp parallel for schedule(static) reduction(min : broken)
    for (std::int32_t i = 0; i < a.rows; ++i) {
        if (!columns_valid(a, i)) broken = std::min<std::int64_t>(broken, i);
    }
    if (broken < a.rows) fail_columns(function, a, static_cast<std::int32_t>(broken));
}

// Brings each row of `a` (row_ptr set, entries of a row contiguous but in any order) into CSR
// form: sorts by column, keeping the input order among equal columns, and sums repeats in that
// order, a_ij = ((v_1 + v_2) + v_3) + ..., so the result does not depend on the sort used.
template <typename T>
void sort_and_merge_rows(CsrData<T>& a) {
    std::vector<std::pair<std::int32_t, T>> scratch;
    std::int32_t out = 0;
    std::int32_t begin = 0;
    for (std::int32_t i = 0; i < a.rows; ++i) {
        const std::int32_t end = a.row_ptr[i + 1];
        const std::int32_t row_start = out;
        bool strictly_increasing = true;
        for (std::int32_t k = begin + 1; k < end && strictly_increasing; ++k) {
            strictly_increasing = a.col[k - 1] < a.col[k];
        }
        if (strictly_increasing) {
            for (std::int32_t k = begin; k < end; ++k, ++out) {
                a.col[out] = a.col[k];
                a.values[out] = a.values[k];
            }
        } else {
            scratch.clear();
            for (std::int32_t k = begin; k < end; ++k) scratch.emplace_back(a.col[k], a.values[k]);
            const auto by_column = [](const auto& x, const auto& y) { return x.first < y.first; };
            if (scratch.size() <= 32) {
                // Insertion sort: stable, and without stable_sort's buffer allocation per row.
                for (std::size_t k = 1; k < scratch.size(); ++k) {
                    auto entry = scratch[k];
                    std::size_t m = k;
                    for (; m > 0 && by_column(entry, scratch[m - 1]); --m) {
                        scratch[m] = scratch[m - 1];
                    }
                    scratch[m] = entry;
                }
            } else {
                std::stable_sort(scratch.begin(), scratch.end(), by_column);
            }
            for (const auto& [column, value] : scratch) {
                if (out > row_start && a.col[out - 1] == column) {
                    a.values[out - 1] += value;
                } else {
                    a.col[out] = column;
                    a.values[out] = value;
                    ++out;
                }
            }
        }
        a.row_ptr[i + 1] = out;
        begin = end;
    }
    a.col.resize(static_cast<std::size_t>(out));
    a.values.resize(static_cast<std::size_t>(out));
}

// The distinct offsets j - i holding entries, ascending, found on every core: a flag per
// diagonal d = j - i + rows - 1, read before it is set (so that the threads share the few lines
// a banded matrix sets, instead of taking them from each other at every entry).
template <typename T>
std::vector<int> flagged_offsets(const CsrData<T>& a) {
    const std::size_t diagonals =
        a.rows > 0 && a.cols > 0 ? static_cast<std::size_t>(a.rows) + a.cols - 1 : 0;
    std::vector<std::uint8_t> occupied(diagonals, 0);
#pragma omp parallel for schedule(static)
    for (std::int32_t i = 0; i < a.rows; ++i) {
        for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            std::atomic_ref<std::uint8_t> flag(
                occupied[static_cast<std::size_t>(std::int64_t{a.col[k]} - i + a.rows - 1)]);
            if (flag.load(std::memory_order_relaxed) == 0) flag.store(1, std::memory_order_relaxed);
        }
    }
    std::vector<int> offsets;
    for (std::size_t d = 0; d < diagonals; ++d) {
        if (occupied[d] != 0) offsets.push_back(static_cast<int>(std::int64_t(d) - (a.rows - 1)));
    }
    return offsets;
}

// The same for a matrix of valid rows (check_csr): each thread keeps the few offsets its rows
// hold in order, walked along each row as its columns rise, and the threads' lists are joined;
// past `few` offsets in one list, the flags above count them.
template <typename T>
std::vector<int> occupied_offsets(const CsrData<T>& a) {
    constexpr std::size_t few = 64;
    std::vector<int> offsets;
    bool many = false;
#pragma omp parallel
    {
        std::vector<int> seen;  // ascending
        bool over = false;
#pragma omp for schedule(static) nowait
        for (std::int32_t i = 0; i < a.rows; ++i) {
            std::size_t d = 0;
            for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1] && !over; ++k, ++d) {
                const int offset = a.col[k] - i;
                while (d < seen.size() && seen[d] < offset) ++d;
                if (d < seen.size() && seen[d] == offset) continue;
                over = seen.size() == few;
                if (!over) seen.insert(seen.begin() + static_cast<std::ptrdiff_t>(d), offset);
            }
        }
#pragma omp critical
        {
            many = many || over;
            std::vector<int> joined;
            std::set_union(offsets.begin(), offsets.end(), seen.begin(), seen.end(),
                           std::back_inserter(joined));
            offsets = std::move(joined);
        }
    }
    return many || offsets.size() > few ? flagged_offsets(a) : offsets;
}

}  // namespace

template <typename T>
CsrData<T> to_csr(const CooData<T>& coo) {
    constexpr const char* function = "to_csr(COO)";
    check_shape(function, coo.rows, coo.cols);
    if (coo.row.size() != coo.values.size() || coo.col.size() != coo.values.size()) {
        fail(function, "row, col and values have " +
                           str(static_cast<std::int64_t>(coo.row.size())) + ", " +
                           str(static_cast<std::int64_t>(coo.col.size())) + " and " +
                           str(coo.nnz()) + " entries, expected equal");
    }
    check_nnz(function, coo.nnz());
    const auto nnz = static_cast<std::int32_t>(coo.nnz());

    CsrData<T> csr;
    csr.rows = coo.rows;
    csr.cols = coo.cols;
    csr.row_ptr.assign(static_cast<std::size_t>(coo.rows) + 1, 0);
    for (std::int32_t k = 0; k < nnz; ++k) {
        if (coo.row[k] < 0 || coo.row[k] >= coo.rows) {
            fail(function, "entry " + str(k) + ": row index " + str(coo.row[k]) + " out of range " +
                               range(coo.rows));
        }
        if (coo.col[k] < 0 || coo.col[k] >= coo.cols) {
            fail(function, "entry " + str(k) + ": column index " + str(coo.col[k]) +
                               " out of range " + range(coo.cols));
        }
        ++csr.row_ptr[coo.row[k] + 1];
    }
    // Counting sort by row, stable: row_ptr[i + 1] = sum_{r <= i} count_r.
    for (std::int32_t i = 0; i < coo.rows; ++i) csr.row_ptr[i + 1] += csr.row_ptr[i];
    std::vector<std::int32_t> next(csr.row_ptr.begin(), csr.row_ptr.end() - 1);
    csr.col.resize(static_cast<std::size_t>(nnz));
    csr.values.resize(static_cast<std::size_t>(nnz));
    for (std::int32_t k = 0; k < nnz; ++k) {
        const std::int32_t slot = next[coo.row[k]]++;
        csr.col[slot] = coo.col[k];
        csr.values[slot] = coo.values[k];
    }
    sort_and_merge_rows(csr);
    return csr;
}

template <typename T>
CsrData<T> to_csr(const DiaData<T>& dia, bool drop_zeros) {
    constexpr const char* function = "to_csr(DIA)";
    check_dia(function, dia);
    const auto n = static_cast<std::int32_t>(dia.n);
    const int diagonals = dia.num_diagonals();
    // Entry (i, i + offset_d) exists when the column is in [0, n) and (optionally) it is nonzero.
    const auto kept = [&](std::int32_t i, int d) {
        const std::int64_t j = std::int64_t{i} + dia.offsets[d];
        return j >= 0 && j < n && !(drop_zeros && dia.at(d, i) == T(0));
    };
    std::int64_t nnz = 0;
    for (std::int32_t i = 0; i < n; ++i) {
        for (int d = 0; d < diagonals; ++d) nnz += kept(i, d) ? 1 : 0;
    }
    check_nnz(function, nnz);

    CsrData<T> csr;
    csr.rows = n;
    csr.cols = n;
    csr.row_ptr.assign(static_cast<std::size_t>(n) + 1, 0);
    csr.col.reserve(static_cast<std::size_t>(nnz));
    csr.values.reserve(static_cast<std::size_t>(nnz));
    for (std::int32_t i = 0; i < n; ++i) {
        for (int d = 0; d < diagonals; ++d) {
            if (!kept(i, d)) continue;
            csr.col.push_back(i + dia.offsets[d]);
            csr.values.push_back(dia.at(d, i));
        }
        csr.row_ptr[i + 1] = static_cast<std::int32_t>(csr.col.size());
    }
    return csr;
}

template <typename T>
void check_dia(const char* function, const DiaData<T>& dia) {
    if (dia.n < 0) fail(function, "negative size " + str(dia.n));
    if (dia.n > max_index) {
        fail(function,
             "size " + str(dia.n) + " exceeds the 32-bit index limit of " + str(max_index));
    }
    const auto expected = dia.offsets.size() * static_cast<std::size_t>(dia.n);
    if (dia.values.size() != expected) {
        fail(function, str(static_cast<std::int64_t>(dia.offsets.size())) + " diagonals of " +
                           str(dia.n) + " rows need " + str(static_cast<std::int64_t>(expected)) +
                           " values, got " + str(static_cast<std::int64_t>(dia.values.size())));
    }
    for (std::size_t d = 1; d < dia.offsets.size(); ++d) {
        if (dia.offsets[d] <= dia.offsets[d - 1]) {
            fail(function, "offsets must be sorted and distinct (" + str(dia.offsets[d]) +
                               " after " + str(dia.offsets[d - 1]) + ")");
        }
    }
}

std::int64_t dia_slots(std::int64_t n, std::span<const int> offsets) {
    std::int64_t slots = 0;
    for (const int offset : offsets) slots += std::max<std::int64_t>(0, n - std::abs(offset));
    return slots;
}

template <typename T>
CsrData<T> to_csr(const EllData<T>& ell) {
    constexpr const char* function = "to_csr(ELL)";
    check_shape(function, ell.rows, ell.cols);
    if (ell.width < 0) fail(function, "negative width " + str(ell.width));
    const auto slots = static_cast<std::size_t>(ell.width) * static_cast<std::size_t>(ell.rows);
    if (ell.col.size() != slots || ell.values.size() != slots) {
        fail(function,
             "col and values have " + str(static_cast<std::int64_t>(ell.col.size())) + " and " +
                 str(static_cast<std::int64_t>(ell.values.size())) +
                 " entries, expected width * rows = " + str(static_cast<std::int64_t>(slots)));
    }
    if (ell.row_length.size() != static_cast<std::size_t>(ell.rows)) {
        fail(function, "row_length has " + str(static_cast<std::int64_t>(ell.row_length.size())) +
                           " entries, expected rows = " + str(ell.rows));
    }
    std::int64_t nnz = 0;
    for (std::int32_t i = 0; i < ell.rows; ++i) {
        if (ell.row_length[i] < 0 || ell.row_length[i] > ell.width) {
            fail(function, "row " + str(i) + ": length " + str(ell.row_length[i]) +
                               " out of range [0, width = " + str(ell.width) + "]");
        }
        nnz += ell.row_length[i];
    }
    check_nnz(function, nnz);

    CsrData<T> csr;
    csr.rows = ell.rows;
    csr.cols = ell.cols;
    csr.row_ptr.assign(static_cast<std::size_t>(ell.rows) + 1, 0);
    csr.col.reserve(static_cast<std::size_t>(nnz));
    csr.values.reserve(static_cast<std::size_t>(nnz));
    for (std::int32_t i = 0; i < ell.rows; ++i) {
        for (std::int32_t k = 0; k < ell.row_length[i]; ++k) {
            const std::size_t slot = ell.slot(k, i);
            if (ell.col[slot] < 0 || ell.col[slot] >= ell.cols) {
                fail(function, "row " + str(i) + ", entry " + str(k) + ": column index " +
                                   str(ell.col[slot]) + " out of range " + range(ell.cols));
            }
            csr.col.push_back(ell.col[slot]);
            csr.values.push_back(ell.values[slot]);
        }
        csr.row_ptr[i + 1] = static_cast<std::int32_t>(csr.col.size());
    }
    sort_and_merge_rows(csr);
    return csr;
}

template <typename T>
CsrData<T> to_csr(const DenseData<T>& dense) {
    constexpr const char* function = "to_csr(dense)";
    check_shape(function, dense.rows, dense.cols);
    const auto entries =
        static_cast<std::size_t>(dense.rows) * static_cast<std::size_t>(dense.cols);
    if (dense.values.size() != entries) {
        fail(function,
             "values has " + str(static_cast<std::int64_t>(dense.values.size())) +
                 " entries, expected rows * cols = " + str(static_cast<std::int64_t>(entries)));
    }
    const auto nnz = std::count_if(dense.values.begin(), dense.values.end(),
                                   [](T value) { return value != T(0); });
    check_nnz(function, nnz);

    CsrData<T> csr;
    csr.rows = dense.rows;
    csr.cols = dense.cols;
    csr.row_ptr.assign(static_cast<std::size_t>(dense.rows) + 1, 0);
    csr.col.reserve(static_cast<std::size_t>(nnz));
    csr.values.reserve(static_cast<std::size_t>(nnz));
    for (std::int32_t i = 0; i < dense.rows; ++i) {
        for (std::int32_t j = 0; j < dense.cols; ++j) {
            if (dense.at(i, j) == T(0)) continue;
            csr.col.push_back(j);
            csr.values.push_back(dense.at(i, j));
        }
        csr.row_ptr[i + 1] = static_cast<std::int32_t>(csr.col.size());
    }
    return csr;
}

template <typename T>
CooData<T> to_coo(const CsrData<T>& csr) {
    check_csr("to_coo", csr);
    CooData<T> coo;
    coo.rows = csr.rows;
    coo.cols = csr.cols;
    coo.row.resize(csr.col.size());
    for (std::int32_t i = 0; i < csr.rows; ++i) {
        std::fill(coo.row.begin() + csr.row_ptr[i], coo.row.begin() + csr.row_ptr[i + 1], i);
    }
    coo.col = csr.col;
    coo.values = csr.values;
    return coo;
}

template <typename T>
EllData<T> to_ell(const CsrData<T>& csr) {
    check_csr("to_ell", csr);
    EllData<T> ell;
    ell.rows = csr.rows;
    ell.cols = csr.cols;
    ell.row_length.resize(static_cast<std::size_t>(csr.rows));
    for (std::int32_t i = 0; i < csr.rows; ++i) {
        ell.row_length[i] = csr.row_length(i);
        ell.width = std::max(ell.width, ell.row_length[i]);
    }
    const auto slots = static_cast<std::size_t>(ell.width) * static_cast<std::size_t>(ell.rows);
    ell.col.assign(slots, 0);
    ell.values.assign(slots, T(0));
    for (std::int32_t i = 0; i < csr.rows; ++i) {
        for (std::int32_t k = 0; k < ell.row_length[i]; ++k) {
            ell.col[ell.slot(k, i)] = csr.col[csr.row_ptr[i] + k];
            ell.values[ell.slot(k, i)] = csr.values[csr.row_ptr[i] + k];
        }
    }
    return ell;
}

template <typename T>
DiaData<T> to_dia(const CsrData<T>& csr, int max_diagonals, DiaZeros zeros) {
    constexpr const char* function = "to_dia";
    check_csr(function, csr);
    if (csr.rows != csr.cols) {
        fail(function,
             "DIA holds square matrices only, got " + str(csr.rows) + " x " + str(csr.cols));
    }
    if (max_diagonals < 0) fail(function, "negative max_diagonals " + str(max_diagonals));

    DiaData<T> dia;
    dia.n = csr.rows;
    dia.offsets = occupied_offsets(csr);
    if (dia.offsets.size() > static_cast<std::size_t>(max_diagonals)) {
        fail(function, "the matrix has " + str(static_cast<std::int64_t>(dia.offsets.size())) +
                           " distinct diagonals, more than " +
                           "max_diagonals = " + str(max_diagonals));
    }
    resize_first_touched(dia.values, static_cast<std::size_t>(dia.n), dia.offsets.size());
    const bool positive = zeros == DiaZeros::positive;
    // Columns rise along a row, so its offsets j - i rise too: one forward scan per row.
#pragma omp parallel for schedule(static)
    for (std::int32_t i = 0; i < csr.rows; ++i) {
        const std::int32_t begin = csr.row_ptr[i];
        const std::int32_t end = csr.row_ptr[i + 1];
        if (begin == end) continue;
        auto d = std::lower_bound(dia.offsets.begin(), dia.offsets.end(), csr.col[begin] - i) -
                 dia.offsets.begin();
        for (std::int32_t k = begin; k < end; ++k) {
            while (dia.offsets[d] < csr.col[k] - i) ++d;
            const T value = csr.values[k];
            dia.at(static_cast<int>(d), i) = positive && value == T(0) ? T(0) : value;
        }
    }
    return dia;
}

template <typename T>
DenseData<T> to_dense(const CsrData<T>& csr, std::int64_t max_entries) {
    constexpr const char* function = "to_dense";
    check_csr(function, csr);
    const std::int64_t entries = std::int64_t{csr.rows} * csr.cols;
    if (entries > max_entries) {
        fail(function, str(csr.rows) + " x " + str(csr.cols) + " = " + str(entries) +
                           " entries exceed max_entries = " + str(max_entries));
    }
    DenseData<T> dense;
    dense.rows = csr.rows;
    dense.cols = csr.cols;
    dense.values.assign(static_cast<std::size_t>(entries), T(0));
    for (std::int32_t i = 0; i < csr.rows; ++i) {
        for (std::int32_t k = csr.row_ptr[i]; k < csr.row_ptr[i + 1]; ++k) {
            dense.at(i, csr.col[k]) = csr.values[k];
        }
    }
    return dense;
}

template <typename T>
CsrData<T> transpose(const CsrData<T>& csr) {
    check_csr("transpose", csr);
    CsrData<T> t;
    t.rows = csr.cols;
    t.cols = csr.rows;
    t.row_ptr.assign(static_cast<std::size_t>(t.rows) + 1, 0);
    for (const std::int32_t j : csr.col) ++t.row_ptr[j + 1];
    // Counting sort by column; scanning rows in order leaves each new row's columns sorted.
    for (std::int32_t j = 0; j < t.rows; ++j) t.row_ptr[j + 1] += t.row_ptr[j];
    std::vector<std::int32_t> next(t.row_ptr.begin(), t.row_ptr.end() - 1);
    t.col.resize(csr.col.size());
    t.values.resize(csr.values.size());
    for (std::int32_t i = 0; i < csr.rows; ++i) {
        for (std::int32_t k = csr.row_ptr[i]; k < csr.row_ptr[i + 1]; ++k) {
            const std::int32_t slot = next[csr.col[k]]++;
            t.col[slot] = i;
            t.values[slot] = csr.values[k];
        }
    }
    return t;
}

template <typename T>
DiaData<T> transpose(const DiaData<T>& dia) {
    check_dia("transpose(DIA)", dia);
    DiaData<T> t;
    t.n = dia.n;
    const int diagonals = dia.num_diagonals();
    for (int d = diagonals - 1; d >= 0; --d) t.offsets.push_back(-dia.offsets[d]);
    t.values.assign(dia.values.size(), T(0));
    for (int d = 0; d < diagonals; ++d) {
        const int offset = dia.offsets[d];
        const int td = diagonals - 1 - d;
        // A^T(i, i - offset) = A(i - offset, i) for rows with i - offset in [0, n).
        const std::int64_t begin = std::max<std::int64_t>(0, offset);
        const std::int64_t end = std::min<std::int64_t>(dia.n, dia.n + offset);
#pragma omp parallel for schedule(static)
        for (std::int64_t i = begin; i < end; ++i) t.at(td, i) = dia.at(d, i - offset);
    }
    return t;
}

template <typename T>
int count_diagonals(const CsrData<T>& csr) {
    check_csr("count_diagonals", csr);
    return static_cast<int>(occupied_offsets(csr).size());
}

template <typename To, typename From>
CsrData<To> convert_values(const CsrData<From>& csr) {
    constexpr const char* function = "convert_values";
    check_csr(function, csr);
    CsrData<To> out;
    out.rows = csr.rows;
    out.cols = csr.cols;
    out.row_ptr = csr.row_ptr;
    out.col = csr.col;
    out.values.resize(csr.values.size());
    for (std::int32_t i = 0; i < csr.rows; ++i) {
        for (std::int32_t k = csr.row_ptr[i]; k < csr.row_ptr[i + 1]; ++k) {
            out.values[k] = static_cast<To>(csr.values[k]);
            if (std::isfinite(csr.values[k]) && !std::isfinite(out.values[k])) {
                fail(function, "value " + format_value(static_cast<double>(csr.values[k])) +
                                   " at (" + str(i) + ", " + str(csr.col[k]) +
                                   ") overflows the target type");
            }
        }
    }
    return out;
}

#define SIMRUN_INSTANTIATE_CONVERSIONS(T)                                                 \
    template CsrData<T> to_csr(const CooData<T>& coo);                                    \
    template CsrData<T> to_csr(const DiaData<T>& dia, bool drop_zeros);                   \
    template CsrData<T> to_csr(const EllData<T>& ell);                                    \
    template CsrData<T> to_csr(const DenseData<T>& dense);                                \
    template CooData<T> to_coo(const CsrData<T>& csr);                                    \
    template EllData<T> to_ell(const CsrData<T>& csr);                                    \
    template DiaData<T> to_dia(const CsrData<T>& csr, int max_diagonals, DiaZeros zeros); \
    template DenseData<T> to_dense(const CsrData<T>& csr, std::int64_t max_entries);      \
    template CsrData<T> transpose(const CsrData<T>& csr);                                 \
    template DiaData<T> transpose(const DiaData<T>& dia);                                 \
    template void check_dia(const char* function, const DiaData<T>& dia);                 \
    template int count_diagonals(const CsrData<T>& csr);

SIMRUN_INSTANTIATE_CONVERSIONS(float)
SIMRUN_INSTANTIATE_CONVERSIONS(double)
#undef SIMRUN_INSTANTIATE_CONVERSIONS

template CsrData<float> convert_values<float, double>(const CsrData<double>& csr);
template CsrData<double> convert_values<double, float>(const CsrData<float>& csr);
template CsrData<double> convert_values<double, double>(const CsrData<double>& csr);
template CsrData<float> convert_values<float, float>(const CsrData<float>& csr);

}  // namespace simrun::solvers
