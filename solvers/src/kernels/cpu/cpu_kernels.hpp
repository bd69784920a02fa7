#pragma once
#include "base/kernel_table.hpp"

namespace simrun::solvers::cpu {

// The CPU back-end's kernels (OpenMP). Reductions are deterministic for any thread count.
template <typename T>
const KernelTable<T>& kernel_table();

}  // namespace simrun::solvers::cpu
