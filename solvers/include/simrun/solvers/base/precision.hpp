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

}  // namespace simrun::solvers
