#pragma once
// The run's enumerated settings, each with its one list of words (enum_names): the input file,
// the header, the reports and the HDF5 attributes all read and write these.
#include <array>

#include "simrun/solvers/base/enum_names.hpp"

namespace simrun::framework {

enum class TimeScheme { steady, backward_euler, crank_nicolson, explicit_euler };

// How the .vti data arrays are compressed: lz4 (the default: fast, so the writer thread keeps up
// with the time loop; smooth double fields shrink little with any compressor), zlib (smaller
// files, several times slower), or none.
enum class VtkCompression { none, lz4, zlib };

}  // namespace simrun::framework

namespace simrun::solvers {
template <>
inline constexpr std::array enum_names<framework::TimeScheme> = {
    EnumName<framework::TimeScheme>{framework::TimeScheme::steady, "steady"},
    EnumName<framework::TimeScheme>{framework::TimeScheme::backward_euler, "backward_euler"},
    EnumName<framework::TimeScheme>{framework::TimeScheme::crank_nicolson, "crank_nicolson"},
    EnumName<framework::TimeScheme>{framework::TimeScheme::explicit_euler, "explicit_euler"}};

template <>
inline constexpr std::array enum_names<framework::VtkCompression> = {
    EnumName<framework::VtkCompression>{framework::VtkCompression::lz4, "lz4"},
    EnumName<framework::VtkCompression>{framework::VtkCompression::zlib, "zlib"},
    EnumName<framework::VtkCompression>{framework::VtkCompression::none, "none"}};
}  // namespace simrun::solvers
