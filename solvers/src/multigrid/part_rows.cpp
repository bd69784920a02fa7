#include "simrun/solvers/multigrid/part_rows.hpp"

#include <cstring>
#include <span>
#include <stdexcept>
#include <string>

#include "multigrid/level_transfer.hpp"

namespace simrun::solvers {

std::vector<BoxPart> all_parts(const Communicator& ranks, const BoxPart& part) {
    std::vector<BoxPart> parts;
    for (const auto& bytes : ranks.all_gather(std::as_bytes(std::span(&part, 1)))) {
        BoxPart theirs;
        std::memcpy(&theirs, bytes.data(), sizeof theirs);
        parts.push_back(theirs);
    }
    return parts;
}

namespace {

std::string part_text(const BoxPart& part) {
    std::string text = "[" + std::to_string(part.lower[0]) + ", " + std::to_string(part.upper[0]) +
                       ")";
    for (std::size_t axis = 1; axis < 3; ++axis) {
        text += " x [" + std::to_string(part.lower[axis]) + ", " +
                std::to_string(part.upper[axis]) + ")";
    }
    return text;
}

}  // namespace

void check_parts_tile(const std::vector<BoxPart>& parts, const GridBox& box) {
    std::int64_t total = 0;
    for (std::size_t r = 0; r < parts.size(); ++r) {
        const BoxPart& part = parts[r];
        if (part.empty() || intersection(part, whole_part(box)) != part) {
            throw std::invalid_argument("rank " + std::to_string(r) + "'s part " +
                                        part_text(part) + " is empty or not inside the " +
                                        box.describe() + " box");
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
    const std::vector<BoxPart> parts = all_parts(ranks, rows.part);
    const GridBox& box = rows.box;
    return all_or_none(ranks, [&] {
        check_parts_tile(parts, box);
        const BoxPart& part = rows.part;
        const BoxPart window = rows.window_part();
        const GridBox window_box = window.shape(box.dimension);
        if (rows.window.n != window.size()) {
            throw std::invalid_argument("the window's rows are " + std::to_string(rows.window.n) +
                                        ", its part's window has " +
                                        std::to_string(window.size()) + " points");
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
                block.inner.values.resize(block.inner.offsets.size() *
                                              static_cast<std::size_t>(part.size()),
                                          T(0));
            }
            return at;
        };
        for (int d = 0; d < rows.window.num_diagonals(); ++d) {
            const int offset = rows.window.offsets[static_cast<std::size_t>(d)];
            const bool unique = multigrid::offset_step_unique(offset, window_box);
            const auto step = multigrid::offset_step(offset, window_box);
            for_each_point(part, [&](std::int64_t i, std::int64_t j, std::int64_t k,
                                     std::int64_t row) {
                const std::int64_t from = window.index(i, j, k);
                const T value = rows.window.at(d, from);
                if (value == T(0)) return;
                const auto s = unique ? step : multigrid::entry_step(window_box, from, offset);
                if (!s) {
                    throw std::invalid_argument("row " + std::to_string(row) +
                                                " couples a point " + std::to_string(offset) +
                                                " apart in its " + window_box.describe() +
                                                " window, which is no neighbour");
                }
                const std::int64_t ni = i + (*s)[0], nj = j + (*s)[1], nk = k + (*s)[2];
                if (part.contains(ni, nj, nk)) {
                    block.inner.at(inner_diagonal(*s), row) += value;
                    return;
                }
                for (const int q : near) {
                    const BoxPart& theirs = parts[static_cast<std::size_t>(q)];
                    if (!theirs.contains(ni, nj, nk)) continue;
                    block.outside.add(row,
                                      first[static_cast<std::size_t>(q)] +
                                          theirs.index(ni, nj, nk) - first[rank],
                                      value);
                    break;
                }
            });
        }
        return block;
    });
}

template SplitBlock<float> split_part_rows(const Communicator&, const PartRows<float>&);
template SplitBlock<double> split_part_rows(const Communicator&, const PartRows<double>&);

}  // namespace simrun::solvers
