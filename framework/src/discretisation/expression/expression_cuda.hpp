#pragma once
// A Program rendered as CUDA C++, for kernels compiled at run time (the device's data term):
// the program's operations in its order, with CUDA's math functions (within 1 or 2 units in the
// last place of the host's; expression_cuda_bound says how far, and their agreement is checked
// where they run).
#include <string>

#include "expression_program.hpp"

namespace simrun::framework::expression {

// CUDA C++ source of `__device__ double NAME(double x, double y, double z, double t)`
// computing `program`, to be placed after cuda_support.
std::string cuda_function(const Program& program, const std::string& name);
// The functions those call, to be placed once before them.
extern const char* const cuda_support;

}  // namespace simrun::framework::expression
