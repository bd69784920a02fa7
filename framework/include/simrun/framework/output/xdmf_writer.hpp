#pragma once
// XDMF 3 description of the steps stored in a run's HDF5 file (see Hdf5RunWriter), so that
// ParaView opens the HDF5 data as a time series of node-centred fields on a CoRectMesh.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "simrun/framework/discretisation/grid.hpp"

namespace simrun::framework {

struct XdmfStep {
    std::int64_t step;
    double time;
    std::vector<std::string> field_names;
};

// HDF5 group holding one step: "/steps/<step zero-padded to 6 digits>". Throws
// std::invalid_argument for a negative step.
std::string step_group_path(std::int64_t step);

// The XDMF text: a temporal collection with one uniform grid per step (in the order given),
// each field an attribute whose data is "<h5_file_name>:<step_group_path(step)>/<field>".
// h5_file_name should be relative to the .xmf file's directory.
std::string make_xdmf(const Grid& grid, std::string_view h5_file_name,
                      std::span<const XdmfStep> steps);

}  // namespace simrun::framework
