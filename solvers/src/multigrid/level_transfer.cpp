// The transfer's layout helpers (level_transfer.hpp): the weight slots per coarse point, a
// level's operator without its empty diagonals, and the coarse points' weight classes.
#include "multigrid/level_transfer.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "base/kernel_table.hpp"
#include "matrices/value_classes.hpp"

namespace simrun::solvers::multigrid {

int transfer_slots(int dimension) { return dimension == 1 ? 3 : dimension == 2 ? 9 : 27; }

DiaData<double> without_empty_diagonals(DiaData<double> a) {
    a.keep_diagonals([&](int d) {
        if (a.offsets[static_cast<std::size_t>(d)] == 0) return true;
        const auto begin = a.values.begin() + d * a.n;
        return std::any_of(begin, begin + a.n, [](double v) { return v != 0.0; });
    });
    return a;
}

std::optional<WeightClasses> weight_classes(const std::vector<double>& weights,
                                            std::int64_t coarse_points, int slots) {
    return classify_values<double>(
        coarse_points, slots, max_transfer_slots, [&](int slot, std::int64_t i) {
            return weights[static_cast<std::size_t>(slot * coarse_points + i)];
        });
}

}  // namespace simrun::solvers::multigrid
