// The coefficient-jump test (level_transfer.hpp's has_coefficient_jumps), for float and double
// operators.
#include <algorithm>
#include <cstdint>

#include "multigrid/level_transfer.hpp"

namespace simrun::solvers::multigrid {

template <typename V>
bool has_coefficient_jumps(const DiaData<V>& a, double ratio) {
    bool jumps = false;
    for (int d = 0; d < a.num_diagonals(); ++d) {
        const int offset = a.offsets[static_cast<std::size_t>(d)];
        const int opposite = offset > 0 ? a.find_diagonal(-offset) : -1;
        if (opposite < 0) continue;
#pragma omp parallel for schedule(static) reduction(|| : jumps)
        for (std::int64_t i = 0; i < a.n; ++i) {
            const double up = -static_cast<double>(a.at(d, i)),
                         down = -static_cast<double>(a.at(opposite, i));
            if (up > 0 && down > 0 && std::max(up, down) > ratio * std::min(up, down)) {
                jumps = true;
            }
        }
    }
    return jumps;
}

template bool has_coefficient_jumps(const DiaData<float>&, double);
template bool has_coefficient_jumps(const DiaData<double>&, double);

}  // namespace simrun::solvers::multigrid
