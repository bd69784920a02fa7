#pragma once
// What the Galerkin product's point function (box_setup_points.hpp's galerkin_row) reads besides
// the rows and the weights: the table of where a row's terms go for the coarse points inside the
// box, and the coarse operator's layout. Made on the host (galerkin_operator.cpp), small (a few
// thousand entries); the back-end's copy is made from its vectors.
#include <cstdint>
#include <memory>
#include <vector>

#include "base/kernel_table.hpp"
#include "multigrid/box_entries.hpp"
#include "multigrid/level_transfer.hpp"
#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/boxes/box.hpp"

namespace simrun::solvers::multigrid {

struct GalerkinTable {
    // GalerkinTableView's arrays (kernel_table.hpp), in the order the general sum takes them.
    std::vector<int> fine_slot;
    std::vector<std::int64_t> fine_offset;
    std::vector<std::int64_t> begin;
    std::vector<int> reach_step;
    std::vector<std::int64_t> reach_column;
    std::vector<int> reach_slot;

    // The table for rows whose diagonals take `steps` on `fine`, coarsened by `coarsening`.
    GalerkinTable(const DiagonalSteps& steps, const GridBox& fine, const BoxCoarsening& coarsening);
    // Its view on the host.
    GalerkinTableView view() const;
};

// The table's copy on a back-end.
struct GalerkinTableOnBackend {
    Array<int> fine_slot;
    Array<std::int64_t> fine_offset;
    Array<std::int64_t> begin;
    Array<int> reach_step;
    Array<std::int64_t> reach_column;
    Array<int> reach_slot;

    GalerkinTableOnBackend(const std::shared_ptr<const Backend>& backend,
                           const GalerkinTable& table);
    GalerkinTableView view() const;
};

// The coarse operator's layout on `coarse` (its 3^dimension neighbour offsets, returned, and each
// coarse stencil step's diagonal in `layout`).
std::vector<int> galerkin_layout(const GridBox& coarse, GalerkinLayout& layout);

}  // namespace simrun::solvers::multigrid
