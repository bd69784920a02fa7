#pragma once
// One process's levels: the plan (level_plan.hpp) over the partition of one part, made as the
// builder asks for each level, until a level is the last (last_level) or does not coarsen: the
// coarsest, solved by its dense inverse. Also the rest of a hierarchy over ranks below the level
// gathered whole on every rank, on each rank alone: no collective (the builder makes it inside
// all_or_none's local work).
//
// Made by the back-end (backend_rows.hpp) where one is given: the finest level's rows are the
// caller's, read on the back-end, and decided on the host from their classes where the caller's
// operator keeps them so (stencil or row-class storage), else from the rows; each level's weights
// and the next level's rows (the Galerkin product) are made there and stay there, each level
// below the finest decided from its row classes. A level whose rows take too many kinds of row, or
// whose couplings the host must follow one by one (local bases, a box too thin to decode the
// diagonals' steps), hands its rows to the host, which makes the rest as without a back-end:
// the rows taken as they lie, the next level's the Galerkin product coarse_step.hpp makes on the
// whole box once the level above is made (made()).
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "multigrid/backend_rows.hpp"
#include "multigrid/coarse_step.hpp"
#include "multigrid/level_plan.hpp"
#include "simrun/solvers/boxes/box.hpp"
#include "simrun/solvers/matrices/dia_data.hpp"
#include "simrun/solvers/matrices/dia_matrix.hpp"
#include "simrun/solvers/multigrid/multigrid_parameters.hpp"

namespace simrun::solvers::multigrid {

class WholeLevels final : public LevelPlan {
public:
    // `rows`: a matrix on the points of `box` (x fastest), which outlives the plan. With a
    // `backend`, the levels are made by it; `rows_on_backend`, where given, is `rows` there in
    // double (the solver's own operator, which outlives the plan), else the plan uploads them.
    // Throws std::invalid_argument where `parameters` are out of range or the rows are not the
    // box's points.
    // `decided`, where given (outliving the plan), is what an earlier plan of rows of the same
    // pattern decided for each level (Hierarchy::decisions()): the levels take it as it is,
    // measuring nothing, and the finest rows' couplings are not checked again.
    WholeLevels(const DiaData<double>& rows, const GridBox& box,
                const MultigridParameters& parameters,
                std::shared_ptr<const Backend> backend = nullptr,
                const DiaMatrix<double>* rows_on_backend = nullptr,
                const std::vector<LevelDecision>* decided = nullptr);

    // Checks the level's couplings (std::invalid_argument naming the first entry that couples
    // no neighbour) and plans it.
    PartitionedLevel* next_level() override;
    // The next level's rows from `level`'s, then `level`'s rows and weights released.
    void made(PartitionedLevel& level) override;
    GatheredPlan* gathered_end() override { return nullptr; }

    // How many levels below the finest had their rows made and kept by the back-end, and how
    // many levels had their transfer's weights made there.
    int levels_on_backend() const { return levels_on_backend_; }
    int weights_on_backend() const { return weights_on_backend_; }
    // Whether some row of the finest level couples to opposite neighbours more than `ratio`
    // times apart (has_coefficient_jumps; from its classes where the back-end holds it so).
    bool finest_jumps(double ratio) const;

private:
    // The level's rows: the caller's, the host's, or those made by the back-end (in classes;
    // handed to the host where they take too many kinds or the host must read them one by one).
    void take_rows();
    // Its coarsening (none for the coarsest) from its rows.
    BoxCoarsening decide(const DiagonalSteps& steps);
    // Its transfer's weights, on the back-end or on the host.
    void plan_transfer(const BoxCoarsening& coarsening, const DiagonalSteps& steps);
    // The rows of the level given last, read on the back-end.
    DiaView<double> rows_view();

    MultigridParameters parameters_;
    GridBox box_;  // the next level's box
    const DiaData<double>* finest_;
    DiaData<double> coarse_rows_;  // the next level's rows below the finest, on the host
    PartitionedLevel level_;       // the level given last
    CoarseStep step_;              // its step to the next level, without the coarse rows
    int index_ = 0;
    bool done_ = false;
    // Made by the back-end (null: on the host).
    std::shared_ptr<const Backend> backend_;
    const DiaMatrix<double>* finest_on_backend_;
    std::unique_ptr<DiaMatrix<double>> finest_uploaded_;
    std::optional<BackendRows> finest_classes_;  // the finest rows' classes, where it has some
    BackendRows rows_;                           // the level given last (below the finest)
    std::optional<BackendRows> next_;            // the next level's, once made
    Array<double> weights_;                      // the level given last's weights
    std::optional<DiagonalSteps> steps_;
    int levels_on_backend_ = 0;
    int weights_on_backend_ = 0;
    const std::vector<LevelDecision>* decided_;
};

}  // namespace simrun::solvers::multigrid
