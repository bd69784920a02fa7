#include "simrun/framework/stencil_assembly.hpp"

#include <algorithm>

namespace simrun::framework {

std::vector<int> stencil_offsets(const Grid& grid) {
    std::vector<int> offsets{0};
    for (int axis = 0; axis < grid.dimension(); ++axis) {
        offsets.push_back(static_cast<int>(grid.stride(axis)));
        offsets.push_back(-static_cast<int>(grid.stride(axis)));
    }
    std::sort(offsets.begin(), offsets.end());
    return offsets;
}

}  // namespace simrun::framework
