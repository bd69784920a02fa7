#pragma once
// A level's rows kept as classes, read as DiaData is (n, offsets, num_diagonals, at): the host's
// view of rows made on the back-end (backend_rows.hpp), from which a level's decisions are taken
// (its coarsening, its couplings' jumps, its smoother's bound) without the rows expanded: a byte
// per row and a few hundred rows of entries.
#include <cstdint>
#include <string>
#include <vector>

#include "simrun/solvers/boxes/box.hpp"
#include "simrun/solvers/matrices/dia_data.hpp"

namespace simrun::solvers::multigrid {

struct ClassRows {
    std::int64_t n = 0;
    std::vector<int> offsets;
    std::vector<std::uint8_t> of_row;  // row i's class
    std::vector<double> table;         // class c's entry of diagonal d at c * diagonals + d

    int num_diagonals() const { return static_cast<int>(offsets.size()); }
    std::size_t classes() const { return offsets.empty() ? 0 : table.size() / offsets.size(); }
    double at(int d, std::int64_t i) const {
        return table[of_row[static_cast<std::size_t>(i)] * offsets.size() +
                     static_cast<std::size_t>(d)];
    }
    // The classes' rows as a matrix of one row per class (entries whose column lies outside the
    // level are zero in every class): what a test of rows one by one reads.
    DiaData<double> class_table() const;
    // The rows whole (a coarsest level, a level handed to the host's path).
    DiaData<double> expanded() const;
};

// max_i sum_j |a_ij| / a_ii over the rows (every class is some row's), as the host's bound of a
// level's rows gives it; throws as throw_nonpositive_diagonal does for the first row whose
// diagonal entry is not positive.
double gershgorin_of_classes(const ClassRows& rows, const GridBox& box, std::size_t level);

// Throws for row `row` of level `level` on `box`, whose diagonal entry `value` is not positive:
// std::invalid_argument on the finest level (the input's), else MultigridSetupError.
[[noreturn]] void throw_nonpositive_diagonal(std::size_t level, const GridBox& box,
                                             std::int64_t row, double value);

}  // namespace simrun::solvers::multigrid
