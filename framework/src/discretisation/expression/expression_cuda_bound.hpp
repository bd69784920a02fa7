#pragma once
// How far a Program's CUDA rendering (expression_cuda) may compute from the host's program and
// muParser: the error model against which a device value is judged before it is used.
#include "expression_program.hpp"

namespace simrun::framework::expression {

// How far cuda_function's value of `program` at (x, y, z, t) may be from Program::run's (the
// host's, muParser's): each function's documented largest errors on CUDA and in glibc, in ulps
// of its value, carried through the program to first order (a derivative times its input's
// bound; sums add bounds; a comparison, select or rint whose input is within its bound of the
// step takes the whole step). 0 where the program calls no function.
double cuda_difference_bound(const Program& program, double x, double y, double z, double t);

}  // namespace simrun::framework::expression
