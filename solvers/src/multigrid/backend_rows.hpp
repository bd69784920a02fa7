#pragma once
// One process's levels made by the back-end (whole_levels.hpp): the set-up kernels of the kernel
// table (box_setup_points.hpp's arithmetic, the host's bits on the CPU) run on rows and weights
// that stay on the back-end. A level's rows come from the Galerkin product of the level above in
// DIA, and are kept as their classes where they take few kinds of row (a byte per row on the
// back-end and a table of rows): the host reads the classes (class_rows.hpp) to decide the
// level's coarsening, and never holds the rows. Where they take too many kinds, the host takes
// them whole and the levels below are made on the host.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "base/kernel_table.hpp"
#include "multigrid/box_entries.hpp"
#include "multigrid/class_rows.hpp"
#include "multigrid/level_transfer.hpp"
#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/matrices/dia_matrix.hpp"

namespace simrun::solvers::multigrid {

// A level's rows on the back-end: in the general storage as the Galerkin product makes them,
// then (classify_rows) as row classes.
struct BackendRows {
    std::int64_t n = 0;
    std::vector<int> offsets;
    Array<double> values;         // d * n + i, until classified
    Array<std::uint8_t> classes;  // a byte per row, once classified
    Array<double> class_values;   // the classes' rows, as host.table
    ClassRows host;               // the classes on the host

    // The rows as the set-up kernels read them.
    DiaView<double> view() const;
};

// The collapsed weights of `coarsening` from the rows `rows` (a view of back-end memory) on
// `fine`: slots x coarse points on the back-end.
Array<double> collapsed_weights(const std::shared_ptr<const Backend>& backend,
                                const DiaView<double>& rows, const DiagonalSteps& steps,
                                const GridBox& fine, const BoxCoarsening& coarsening);

// P^T A P on the coarse box from the rows `rows` and the weights `weights` (back-end), in the
// general storage.
BackendRows galerkin_rows(const std::shared_ptr<const Backend>& backend,
                          const DiaView<double>& rows, const DiagonalSteps& steps,
                          const GridBox& fine, const BoxCoarsening& coarsening,
                          const Array<double>& weights);

// The rows' classes found on the back-end (their values then released, unless `keep_values`);
// false, the rows left as they are, where they take more than max_value_classes kinds.
bool classify_rows(const std::shared_ptr<const Backend>& backend, BackendRows& rows,
                   bool keep_values = false);

// Whether no diagonal of `rows` whose step moves along several axes holds a nonzero entry (else
// Gauss-Seidel needs 2^dimension colours): from the classes' rows, whose entries outside the
// level are zero.
bool classes_along_axes(const ClassRows& rows, const DiagonalSteps& steps);

// The rows of `a` (on the back-end in double) as classes: its row classes, or the masks its
// stencil storage holds, one class per mask present; nothing in the general storage. The class
// bytes are copied on the back-end (from `a`, or the masks renamed on the host); entries whose
// column lies outside the matrix are zero, as `a` reads them.
std::optional<BackendRows> rows_in_classes(const std::shared_ptr<const Backend>& backend,
                                           const DiaMatrix<double>& a);

}  // namespace simrun::solvers::multigrid
