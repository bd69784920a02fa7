#pragma once
// The one routine that makes a multigrid level from its window's rows (host, double), for the
// one build (build_partitioned.cpp), on one process as over ranks: its operator on the
// back-end, its smoother, its work vectors and its transfer to the next level.
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "multigrid/backend_rows.hpp"
#include "multigrid/level.hpp"
#include "multigrid/level_transfer.hpp"
#include "multigrid/smoother.hpp"
#include "simrun/solvers/matrices/dia_data.hpp"
#include "simrun/solvers/matrices/dia_matrix.hpp"

namespace simrun::solvers::multigrid {

BoxShape shape_of(const GridBox& box);

// The finest level's operator: the caller's (`given`, which outlives the hierarchy), one made
// by the caller (`owned`: the caller's converted to T), or made here in `storage` where the
// rows take it; else (and on every other level) as make_level_operator() makes it.
template <typename T>
struct FinestOperator {
    const DiaMatrix<T>* given = nullptr;
    std::unique_ptr<DiaMatrix<T>> owned;
    std::optional<DiaStorage> storage;
};

// A level's rows on its window, and its transfer to the next level: `coarsening` and its
// weights (level_transfer.hpp's layout), as the plan gives them (coarse_step.hpp), on the host
// or, for one process's levels made by the back-end, there (backend_rows.hpp: the rows in
// classes; the finest level's rows are the host's).
struct LevelRows {
    const DiaData<double>* rows = nullptr;
    const BackendRows* rows_on_backend = nullptr;
    const BoxCoarsening& coarsening;
    const std::vector<double>* weights = nullptr;
    const Array<double>* weights_on_backend = nullptr;
};

// Makes level number `index` (`level.box` and `level.shape` set: the window's): checks its
// diagonal (std::invalid_argument on the finest level, MultigridSetupError below, naming the
// point) and sets its Gershgorin bound of D^-1 A (this window's), its operator (`finest` on
// level 0), its vectors (r; b and x where `coarse_vectors`; zeroed where setup.zeroed), its
// smoother, and its transfer.
template <typename T>
void make_level(const std::shared_ptr<const Backend>& backend, const SmootherKind<T>& smoother,
                Level<T>& level, LevelRows& rows, std::size_t index, FinestOperator<T>& finest,
                const SmootherSetup& setup, bool coarse_vectors);

// A level's operator: the stencil storage where the coefficients are constant, else row
// classes where few kinds of rows, else general DIA.
template <typename T>
std::unique_ptr<DiaMatrix<T>> make_level_operator(const std::shared_ptr<const Backend>& backend,
                                                  const DiaData<T>& a);

}  // namespace simrun::solvers::multigrid
