#pragma once
// The floating-point type a solve runs in: its words are the command line's (--precision), the
// reports' and the benchmark's.
#include <array>

#include "simrun/solvers/base/enum_names.hpp"

namespace simrun::solvers {

enum class Precision { double_precision, single_precision };

template <>
inline constexpr std::array enum_names<Precision> = {
    EnumName<Precision>{Precision::double_precision, "double"},
    EnumName<Precision>{Precision::single_precision, "float"}};

// The unit roundoff u of the precision (half the distance from 1 to the next value): no
// relative residual is reliably reached below it.
constexpr double unit_roundoff(Precision precision) {
    return precision == Precision::double_precision ? 0x1p-53 : 0x1p-24;
}

}  // namespace simrun::solvers
