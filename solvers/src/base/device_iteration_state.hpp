#pragma once
// What every method whose scalars stay on the back-end shares (cg_device_state.hpp,
// bicgstab_device_state.hpp): its steps run as fused kernels (unified/fused_steps.hpp) that
// reduce into a workspace of partial sums, and its state records ||r_k|| for the host to read
// once per batch of iterations.
#include <cstdint>

namespace simrun::solvers {

// ||r_k|| of the last residual_history_capacity iterations: a batch is never longer.
inline constexpr int residual_history_capacity = 64;

// Partial sums a fused step's reduction may use: at most fused_step_sums per block, at most
// 2048 blocks (more than a GPU of 132 SMs holds at once with 256 threads per block), in two
// sets (a persistent kernel's consecutive steps alternate between them).
inline constexpr int fused_reduction_blocks = 2048;
inline constexpr int fused_step_sums = 4;
inline constexpr int fused_reduction_slots = 2 * fused_step_sums * fused_reduction_blocks;

// The workspace of a method's fused steps, on the back-end: fused_reduction_slots values and
// one counter that is zero between kernels (the last block of each kernel that uses it resets
// it).
template <typename T>
struct FusedWorkspace {
    T* partials;
    unsigned* ticket;
};

}  // namespace simrun::solvers
