#include "simrun/solvers/distributed/part_rows.hpp"

#include <cstring>
#include <exception>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

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

template <typename T>
SplitBlock<T> split_part_rows(const Communicator& ranks, const PartRows<T>& rows) {
    const std::vector<Box> parts = all_parts(ranks, rows.part);
    const GridBox& box = rows.box;
    return all_or_none(ranks, [&] {
        check_parts_tile(parts, box);
        const Box& part = rows.part;
        const Box window = rows.window_part();
        const GridBox window_box = window.shape(box.dimension);
        if (rows.window.n != window.size()) {
            throw std::invalid_argument("the window's rows are " + std::to_string(rows.window.n) +
                                        ", its part's window has " + std::to_string(window.size()) +
                                        " points");
        }
        // The ranks' first rows, and those whose parts the window reaches.
        std::vector<std::int64_t> first{0};
        std::vector<int> near;
        for (std::size_t q = 0; q < parts.size(); ++q) {
            first.push_back(first.back() + parts[q].size());
            if (!intersection(parts[q], window).empty()) near.push_back(static_cast<int>(q));
        }
        const auto rank = static_cast<std::size_t>(ranks.rank());
        // Each entry's step: its diagonal's where the offset is one step only in the window,
        // else from the coordinates of its two points (a window of fewer than 3 points along
        // an axis). The part's own couplings go to the part's diagonal of that step.
        const GridBox part_box = part.shape(box.dimension);
        SplitBlock<T> block;
        block.inner.n = part.size();
        const auto inner_diagonal = [&](const std::array<std::int64_t, 3>& s) {
            const auto offset =
                static_cast<int>(s[0] + part_box.points[0] * (s[1] + part_box.points[1] * s[2]));
            int at = block.inner.find_diagonal(offset);
            if (at < 0) {
                at = block.inner.num_diagonals();
                block.inner.offsets.push_back(offset);
                block.inner.values.resize(
                    block.inner.offsets.size() * static_cast<std::size_t>(part.size()), T(0));
            }
            return at;
        };
        const int diagonals = rows.window.num_diagonals();
        std::vector<char> unique(static_cast<std::size_t>(diagonals));
        std::vector<std::array<std::int64_t, 3>> steps(static_cast<std::size_t>(diagonals));
        std::vector<int> inner(static_cast<std::size_t>(diagonals), -1);
        bool all_unique = true;
        for (int d = 0; d < diagonals; ++d) {
            const int offset = rows.window.offsets[static_cast<std::size_t>(d)];
            const auto u = static_cast<std::size_t>(d);
            unique[u] = offset_step_unique(offset, window_box) ? 1 : 0;
            all_unique = all_unique && unique[u] != 0;
            if (unique[u] != 0) {
                steps[u] = *offset_step(offset, window_box);
                inner[u] = inner_diagonal(steps[u]);
            }
        }
        // One row's couplings: its own to the block, the others' (in diagonal order) to `out`.
        const auto split_row = [&](std::int64_t i, std::int64_t j, std::int64_t k,
                                   OutsideCouplings<T>& out) {
            const std::int64_t from = window.index(i, j, k), row = part.index(i, j, k);
            for (int d = 0; d < diagonals; ++d) {
                const auto u = static_cast<std::size_t>(d);
                const T value = rows.window.at(d, from);
                if (value == T(0)) continue;
                const int offset = rows.window.offsets[u];
                const auto s = unique[u] != 0 ? std::optional(steps[u])
                                              : entry_step(window_box, from, offset);
                if (!s) {
                    throw std::invalid_argument("row " + std::to_string(row) + " couples a point " +
                                                std::to_string(offset) + " apart in its " +
                                                window_box.describe() +
                                                " window, which is no neighbour");
                }
                const std::int64_t ni = i + (*s)[0], nj = j + (*s)[1], nk = k + (*s)[2];
                if (!window.contains(ni, nj, nk)) {
                    // (A step out of the window leaves the box: DIA would wrap it to another
                    // line.)
                    throw std::invalid_argument("row " + std::to_string(row) + " couples a point " +
                                                std::to_string(offset) + " apart outside the " +
                                                box.describe() + " box");
                }
                if (part.contains(ni, nj, nk)) {
                    block.inner.at(unique[u] != 0 ? inner[u] : inner_diagonal(*s), row) += value;
                    continue;
                }
                for (const int q : near) {
                    const Box& theirs = parts[static_cast<std::size_t>(q)];
                    if (!theirs.contains(ni, nj, nk)) continue;
                    out.add(
                        row,
                        first[static_cast<std::size_t>(q)] + theirs.index(ni, nj, nk) - first[rank],
                        value);
                    break;
                }
            }
        };
        if (!all_unique) {
            // A window of fewer than 3 points along an axis (small): row by row.
            for_each_point(part, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t) {
                split_row(i, j, k, block.outside);
            });
        } else {
            // Line by line on every core, each line's couplings outside kept apart and joined
            // in order (a line's rows are the block's next ones).
            const std::int64_t ny = part.points(1), lines = ny * part.points(2);
            std::vector<OutsideCouplings<T>> outside(static_cast<std::size_t>(lines));
            std::exception_ptr failure;
#pragma omp parallel for schedule(static)
            for (std::int64_t line = 0; line < lines; ++line) {
                try {
                    const std::int64_t j = part.lower[1] + line % ny, k = part.lower[2] + line / ny;
                    for (std::int64_t i = part.lower[0]; i < part.upper[0]; ++i) {
                        split_row(i, j, k, outside[static_cast<std::size_t>(line)]);
                    }
                } catch (...) {
#pragma omp critical
                    if (!failure) failure = std::current_exception();
                }
            }
            if (failure) std::rethrow_exception(failure);
            for (const OutsideCouplings<T>& mine : outside) {
                block.outside.rows.insert(block.outside.rows.end(), mine.rows.begin(),
                                          mine.rows.end());
                block.outside.columns.insert(block.outside.columns.end(), mine.columns.begin(),
                                             mine.columns.end());
                block.outside.values.insert(block.outside.values.end(), mine.values.begin(),
                                            mine.values.end());
            }
        }
        block.inner.sort_diagonals();
        return block;
    });
}

template SplitBlock<float> split_part_rows(const Communicator&, const PartRows<float>&);
template SplitBlock<double> split_part_rows(const Communicator&, const PartRows<double>&);

}  // namespace simrun::solvers
