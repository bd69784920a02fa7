#pragma once
// A matrix on a box of points split over ranks in a process grid (a part of the box per rank,
// the parts' cuts the same along each axis, as a grid's boxes are): each rank gives the rows
// of its part's points on its window, the part with one point more on each side where the box
// goes on, so that every row's couplings to the neighbouring parts' points are there. What
// multigrid over a process grid starts from (multigrid_hierarchy.hpp), and, split, what the
// distributed product takes (distributed_matrix.hpp).
#include <vector>

#include "simrun/solvers/base/communicator.hpp"
#include "simrun/solvers/matrices/dia_data.hpp"
#include "simrun/solvers/distributed/distributed_matrix.hpp"
#include "simrun/solvers/boxes/box.hpp"

namespace simrun::solvers {

template <typename T>
struct PartRows {
    GridBox box;   // the whole box
    Box part;  // this rank's points
    // The rows of the part's points on the window grown(part, box, 1), its points x fastest,
    // its neighbour offsets (a step of s along each axis is the offset s_x + w_x (s_y + w_y s_z)
    // for a window of w_x x w_y points); the window's other rows are not read.
    DiaData<T> window;

    Box window_part() const { return grown(part, box, 1); }
};

// Every rank's part, in rank order (collective).
std::vector<Box> all_parts(const Communicator& ranks, const Box& part);

// Throws std::invalid_argument where the parts (every rank's, in rank order) are empty, leave
// the box, overlap or leave points of it out.
void check_parts_tile(const std::vector<Box>& parts, const GridBox& box);

// The rows split for the distributed product (collective): the part's own couplings (a DIA
// matrix of the part's points, x fastest) and those to the other parts' points, in the ranks'
// numbering (the parts in rank order, each part's points x fastest). Throws
// std::invalid_argument, on every rank alike, where the parts do not tile the box or the
// window is not the part's.
template <typename T>
SplitBlock<T> split_part_rows(const Communicator& ranks, const PartRows<T>& rows);

}  // namespace simrun::solvers
