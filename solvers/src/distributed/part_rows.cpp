#include "simrun/solvers/distributed/part_rows.hpp"

#include <array>
#include <cstring>
#include <exception>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "boxes/box_steps.hpp"

namespace simrun::solvers {

std::vector<Box> all_parts(const Communicator& ranks, const Box& part) {
    std::vector<Box> parts;
    for (const auto& bytes : ranks.all_gather(std::as_bytes(std::span(&part, 1)))) {
        Box theirs;
        std::memcpy(&theirs, bytes.data(), sizeof theirs);
        parts.push_back(theirs);
    }
    return parts;
}

namespace {

std::string part_text(const Box& part) {
    std::string text =
        "[" + std::to_string(part.lower[0]) + ", " + std::to_string(part.upper[0]) + ")";
    for (std::size_t axis = 1; axis < 3; ++axis) {
        text += " x [" + std::to_string(part.lower[axis]) + ", " +
                std::to_string(part.upper[axis]) + ")";
    }
    return text;
}

}  // namespace

void check_parts_tile(const std::vector<Box>& parts, const GridBox& box) {
    std::int64_t total = 0;
    for (std::size_t r = 0; r < parts.size(); ++r) {
        const Box& part = parts[r];
        if (part.empty() || intersection(part, whole_part(box)) != part) {
            throw std::invalid_argument("rank " + std::to_string(r) + "'s part " + part_text(part) +
                                        " is empty or not inside the " + box.describe() + " box");
        }
        for (std::size_t q = 0; q < r; ++q) {
            if (!intersection(part, parts[q]).empty()) {
                throw std::invalid_argument("the parts of ranks " + std::to_string(q) + " and " +
                                            std::to_string(r) + " overlap");
            }
        }
        total += part.size();
    }
    if (total != box.size()) {
        throw std::invalid_argument("the ranks' parts hold " + std::to_string(total) +
                                    " points of the " + box.describe() + " box, which has " +
                                    std::to_string(box.size()));
    }
}

namespace {

// A part's window rows split into the part's block (its own couplings) and the couplings to
// the other ranks' points, row by row.
template <typename T>
class RowSplitter {
public:
    RowSplitter(const PartRows<T>& rows, const std::vector<Box>& parts, std::size_t rank)
        : rows_(rows),
          parts_(parts),
          rank_(rank),
          part_(rows.part),
          window_(rows.window_part()),
          window_box_(window_.shape(rows.box.dimension)),
          part_box_(part_.shape(rows.box.dimension)) {
        if (rows.window.n != window_.size()) {
            throw std::invalid_argument("the window's rows are " + std::to_string(rows.window.n) +
                                        ", its part's window has " +
                                        std::to_string(window_.size()) + " points");
        }
        // The ranks' first rows, and those whose parts the window reaches.
        first_.push_back(0);
        for (std::size_t q = 0; q < parts_.size(); ++q) {
            first_.push_back(first_.back() + parts_[q].size());
            if (!intersection(parts_[q], window_).empty()) near_.push_back(static_cast<int>(q));
        }
        block_.inner.n = part_.size();
        learn_steps();
    }

    // Whether every diagonal's offset is one step only in the window (its rows then split
    // independently, line by line in parallel).
    bool all_unique() const { return all_unique_; }
    const Box& part() const { return part_; }

    // One row's couplings: its own to the block, the others' (in diagonal order) to `out`.
    void split_row(std::int64_t i, std::int64_t j, std::int64_t k, OutsideCouplings<T>& out);

    SplitBlock<T>& block() { return block_; }

private:
    void learn_steps();
    int inner_diagonal(const std::array<std::int64_t, 3>& s);
    void add_outside(std::int64_t row, std::int64_t ni, std::int64_t nj, std::int64_t nk, T value,
                     OutsideCouplings<T>& out) const;

    const PartRows<T>& rows_;
    const std::vector<Box>& parts_;
    std::size_t rank_;
    const Box& part_;
    Box window_;
    GridBox window_box_, part_box_;
    std::vector<std::int64_t> first_;
    std::vector<int> near_;
    SplitBlock<T> block_;
    // Per diagonal of the window: whether its offset is one step only, that step, and the
    // part's diagonal of it.
    std::vector<char> unique_;
    std::vector<std::array<std::int64_t, 3>> steps_;
    std::vector<int> inner_;
    bool all_unique_ = true;
};

// The part's diagonal of step `s` (added where new).
template <typename T>
int RowSplitter<T>::inner_diagonal(const std::array<std::int64_t, 3>& s) {
    const auto offset =
        static_cast<int>(s[0] + part_box_.points[0] * (s[1] + part_box_.points[1] * s[2]));
    DiaData<T>& inner = block_.inner;
    int at = inner.find_diagonal(offset);
    if (at < 0) {
        at = inner.num_diagonals();
        inner.offsets.push_back(offset);
        inner.values.resize(inner.offsets.size() * static_cast<std::size_t>(part_.size()), T(0));
    }
    return at;
}

// Each entry's step: its diagonal's where the offset is one step only in the window, else from
// the coordinates of its two points (a window of fewer than 3 points along an axis). The part's
// own couplings go to the part's diagonal of that step.
template <typename T>
void RowSplitter<T>::learn_steps() {
    const auto diagonals = static_cast<std::size_t>(rows_.window.num_diagonals());
    unique_.assign(diagonals, 0);
    steps_.resize(diagonals);
    inner_.assign(diagonals, -1);
    for (std::size_t u = 0; u < diagonals; ++u) {
        const int offset = rows_.window.offsets[u];
        unique_[u] = offset_step_unique(offset, window_box_) ? 1 : 0;
        all_unique_ = all_unique_ && unique_[u] != 0;
        if (unique_[u] != 0) {
            steps_[u] = *offset_step(offset, window_box_);
            inner_[u] = inner_diagonal(steps_[u]);
        }
    }
}

// A coupling of `row` to the point (ni, nj, nk) of another rank's part.
template <typename T>
void RowSplitter<T>::add_outside(std::int64_t row, std::int64_t ni, std::int64_t nj,
                                 std::int64_t nk, T value, OutsideCouplings<T>& out) const {
    for (const int q : near_) {
        const Box& theirs = parts_[static_cast<std::size_t>(q)];
        if (!theirs.contains(ni, nj, nk)) continue;
        out.add(row, first_[static_cast<std::size_t>(q)] + theirs.index(ni, nj, nk) - first_[rank_],
                value);
        break;
    }
}

template <typename T>
void RowSplitter<T>::split_row(std::int64_t i, std::int64_t j, std::int64_t k,
                               OutsideCouplings<T>& out) {
    const std::int64_t from = window_.index(i, j, k), row = part_.index(i, j, k);
    for (int d = 0; d < rows_.window.num_diagonals(); ++d) {
        const auto u = static_cast<std::size_t>(d);
        const T value = rows_.window.at(d, from);
        if (value == T(0)) continue;
        const int offset = rows_.window.offsets[u];
        const auto s =
            unique_[u] != 0 ? std::optional(steps_[u]) : entry_step(window_box_, from, offset);
        if (!s) {
            throw std::invalid_argument("row " + std::to_string(row) + " couples a point " +
                                        std::to_string(offset) + " apart in its " +
                                        window_box_.describe() + " window, which is no neighbour");
        }
        const std::int64_t ni = i + (*s)[0], nj = j + (*s)[1], nk = k + (*s)[2];
        if (!window_.contains(ni, nj, nk)) {
            // (A step out of the window leaves the box: DIA would wrap it to another line.)
            throw std::invalid_argument("row " + std::to_string(row) + " couples a point " +
                                        std::to_string(offset) + " apart outside the " +
                                        rows_.box.describe() + " box");
        }
        if (part_.contains(ni, nj, nk)) {
            block_.inner.at(unique_[u] != 0 ? inner_[u] : inner_diagonal(*s), row) += value;
            continue;
        }
        add_outside(row, ni, nj, nk, value, out);
    }
}

// Line by line on every core (every diagonal's step known: no diagonal is added), each line's
// couplings outside kept apart and joined in order (a line's rows are the block's next ones).
template <typename T>
void split_lines_in_parallel(RowSplitter<T>& splitter) {
    const Box& part = splitter.part();
    const std::int64_t ny = part.points(1), lines = ny * part.points(2);
    std::vector<OutsideCouplings<T>> outside(static_cast<std::size_t>(lines));
    std::exception_ptr failure;
#pragma omp parallel for schedule(static)
    for (std::int64_t line = 0; line < lines; ++line) {
        try {
            const std::int64_t j = part.lower[1] + line % ny, k = part.lower[2] + line / ny;
            for (std::int64_t i = part.lower[0]; i < part.upper[0]; ++i) {
                splitter.split_row(i, j, k, outside[static_cast<std::size_t>(line)]);
            }
        } catch (...) {
#pragma omp critical
            if (!failure) failure = std::current_exception();
        }
    }
    if (failure) std::rethrow_exception(failure);
    OutsideCouplings<T>& all = splitter.block().outside;
    for (const OutsideCouplings<T>& mine : outside) {
        all.rows.insert(all.rows.end(), mine.rows.begin(), mine.rows.end());
        all.columns.insert(all.columns.end(), mine.columns.begin(), mine.columns.end());
        all.values.insert(all.values.end(), mine.values.begin(), mine.values.end());
    }
}

}  // namespace

template <typename T>
SplitBlock<T> split_part_rows(const Communicator& ranks, const PartRows<T>& rows) {
    const std::vector<Box> parts = all_parts(ranks, rows.part);
    return all_or_none(ranks, [&] {
        check_parts_tile(parts, rows.box);
        RowSplitter<T> splitter(rows, parts, static_cast<std::size_t>(ranks.rank()));
        if (splitter.all_unique()) {
            split_lines_in_parallel(splitter);
        } else {
            // A window of fewer than 3 points along an axis (small): row by row.
            for_each_point(rows.part,
                           [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t) {
                               splitter.split_row(i, j, k, splitter.block().outside);
                           });
        }
        SplitBlock<T> block = std::move(splitter.block());
        block.inner.sort_diagonals();
        return block;
    });
}

template SplitBlock<float> split_part_rows(const Communicator&, const PartRows<float>&);
template SplitBlock<double> split_part_rows(const Communicator&, const PartRows<double>&);

}  // namespace simrun::solvers
