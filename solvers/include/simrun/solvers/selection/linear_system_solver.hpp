#pragma once
// A planned solve of A x = b on a back-end: the operator in the plan's format, the first
// method with its preconditioner, and the fallbacks, built when first needed and kept for
// later solves (a time loop solves with one matrix many times).
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "simrun/solvers/base/communication_times.hpp"
#include "simrun/solvers/distributed/distributed_matrix.hpp"
#include "simrun/solvers/distributed/part_rows.hpp"
#include "simrun/solvers/matrices/csr_data.hpp"
#include "simrun/solvers/matrices/dia_data.hpp"
#include "simrun/solvers/matrices/dia_matrix.hpp"
#include "simrun/solvers/matrices/linear_operator.hpp"
#include "simrun/solvers/methods/iterative_solver.hpp"
#include "simrun/solvers/preconditioners/preconditioner.hpp"
#include "simrun/solvers/selection/solver_selection.hpp"

namespace simrun::solvers {

struct SolveAttempt {
    SolverStep step;
    SolveResult result;
    std::string preconditioner_details;  // Preconditioner::describe() of the step's M
};

// Every method tried, in order; the last one's result is the outcome.
struct SolveReport {
    std::vector<SolveAttempt> attempts;
    const SolveResult& result() const { return attempts.back().result; }
    const SolverStep& step() const { return attempts.back().step; }
    bool converged() const { return result().converged(); }
    std::int64_t total_iterations() const;
    // For a singular system with the constants as its null space (SolverPlan::remove_constant):
    // the share of b the solve removed to make it compatible, ||c w|| / ||b|| (0 for
    // compatible data; see set_constant_removal_weights).
    std::optional<double> removed_constant;
    // Wall time of the solve, every attempt and check included (the back-end synchronised).
    double seconds = 0.0;
    // Of `seconds`: what this rank spent communicating with the other ranks (zero on one).
    CommunicationTimes communication;
};

template <typename T>
class LinearSystemSolver {
public:
    // Builds the operator (and the first method) now. Throws std::invalid_argument when the
    // matrix does not fit the format or the method (e.g. a zero diagonal for Jacobi).
    LinearSystemSolver(std::shared_ptr<const Backend> backend, CsrData<T> matrix, SolverPlan plan,
                       MethodParameters parameters);
    // The same from a DIA matrix. With the plan's format DIA or stencil the matrix goes to the
    // back-end as it is and no host copy is kept: the steps that need a host form later (SOR,
    // SSOR, BiCG's transpose) take it back from the back-end when they are first built. Other
    // formats go through CSR (std::invalid_argument beyond its 32-bit index limits).
    LinearSystemSolver(std::shared_ptr<const Backend> backend, DiaData<T> matrix, SolverPlan plan,
                       MethodParameters parameters);
    // Over the ranks of the back-end's communicator: this rank's block of rows as its own
    // couplings and those outside it (distributed_matrix.hpp), from any split of the rows (a
    // grid's boxes). Multigrid over ranks starts from a grid's slabs, given as DIA rows above:
    // std::invalid_argument where the plan names it over several ranks, or where one rank is
    // given couplings outside its block.
    LinearSystemSolver(std::shared_ptr<const Backend> backend, SplitBlock<T> block, SolverPlan plan,
                       MethodParameters parameters);
    // Over the ranks of a process grid: this rank's part of the box and its rows on the part's
    // window (part_rows.hpp), split here for the distributed product; multigrid over the
    // ranks starts from them. On one rank the part is the whole box, and the window's rows the
    // matrix. Collective.
    LinearSystemSolver(std::shared_ptr<const Backend> backend, PartRows<T> rows, SolverPlan plan,
                       MethodParameters parameters);
    ~LinearSystemSolver();

    // Solves from the initial guess in x; each fallback restarts from that same guess. x holds
    // the last attempt's iterate, or the initial guess again when that attempt met NaN or Inf.
    // A method's "converged" is confirmed on b - A x recomputed (one product more): when that
    // misses the tolerance the method restarts from x (at most twice), and a last miss ends the
    // solve as stagnated (no fallback reaches below the precision's limit either).
    SolveReport solve(const Array<T>& b, Array<T>& x) const;
    // For SolverPlan::remove_constant: b is made compatible (1'b = 0) as b - c w with
    // c = 1'b / 1'w; w = 1 unless given here. A discretisation whose rows are scaled by
    // quadrature weights (halved at a folded boundary) passes those, so that what is removed is
    // the mean of the source, not a spurious source along the boundary. Throws
    // DimensionMismatch for the wrong size, std::invalid_argument when 1'w = 0.
    void set_constant_removal_weights(std::span<const T> weights);

    // New values for the matrix on the same rows, as a time step of another size gives
    // (I/dt - L): DIA rows of the DIA constructor's size and diagonals, or CSR rows of the CSR
    // constructor's pattern (row pointers and columns). The plan stays (method, preconditioner,
    // format, fallbacks; nothing is analysed again); the operator is uploaded again and the steps
    // built so far are made again from it, the first step's multigrid hierarchy on one process
    // without deciding anything again (MultigridHierarchy::refresh; a fallback's is built anew
    // when first needed). The plan is trusted, not checked: the new values must keep what it was
    // chosen for (symmetry for CG; constants in the null space where it removes them; the same
    // empty rows). Collective over ranks. Throws
    // std::logic_error for a solver built otherwise (from a split block or a part's rows),
    // std::invalid_argument where the rows differ or no longer fit the plan's format (stencil
    // storage of rows whose coefficients are no longer constant: the old values stay), and what
    // a step's set-up throws (the steps are then built again at the next solve).
    // Returns the seconds of its two parts (the back-end synchronised after each).
    struct UpdateTimes {
        double operator_seconds = 0;  // the rows converted to the plan's format and uploaded
        double steps_seconds = 0;     // the old steps released, the first step's made again
    };
    UpdateTimes update_values(DiaData<T> matrix);
    UpdateTimes update_values(CsrData<T> matrix);

    const SolverPlan& plan() const { return plan_; }
    // What the first step's preconditioner is made of, where there is more to say than its
    // name: for multigrid its hierarchy ("8 levels: 2049x2049 -> ... -> 15x15 (direct),
    // V(1,1) symmetric red-black Gauss-Seidel"); empty otherwise.
    std::string preconditioner_details() const;
    const LinearOperator<T>& matrix() const { return *operator_; }
    // The CSR rows the solver was made from, or last given to update_values; null where it was
    // made from DIA rows or a split block.
    const CsrData<T>* csr_rows() const { return from_csr_ ? &*host_ : nullptr; }
    const std::shared_ptr<const Backend>& backend() const { return backend_; }

private:
    struct Built;
    const IterativeSolver<T>& method(std::size_t index) const;
    // Decides a converged result of method `index` on ||b - A x|| (see solve).
    void confirm(std::size_t index, const Array<T>& b, Array<T>& x, SolveResult& result) const;
    // The host CSR form: the matrix given, or (DIA) made from the back-end's copy when first
    // needed.
    const CsrData<T>& host_csr() const;
    // The main diagonal on the host.
    std::vector<T> host_diagonal() const;
    // A^T in the operator's format (for BiCG).
    std::unique_ptr<LinearOperator<T>> make_transpose() const;
    // This rank's rows (DIA constructor, update_values): over ranks split into its block's own
    // and those outside it, then built.
    void start_from_rows(DiaData<T> matrix);
    // Before new values: the steps built so far go (their multigrid preconditioners kept in
    // refreshed_ on one process), and BiCG's transpose.
    void retire_steps();
    // retire_steps(), then `rebuild` (new rows, the first step built), the kept hierarchies
    // dropped however it ends.
    template <typename Rebuild>
    void with_steps_retired(Rebuild&& rebuild);
    // The first step built, its set-up reading `rows` (the host's rows, or null: from the
    // back-end) while it runs, and never after.
    void first_step_from(const DiaData<T>* rows);
    // The operator (split over ranks where `outside` is given) and the first step, from the
    // block's own rows.
    void build(DiaData<T> matrix, std::optional<OutsideCouplings<T>> outside);
    // The operator as a DIA matrix, or nullptr for the other formats.
    const DiaMatrix<T>* dia_operator() const;
    // Puts Jacobi (none where a diagonal entry is 0) in place of a multigrid whose set-up
    // failed for `why`, recording both in `built`.
    void substitute_for_multigrid(Built& built, const std::string& why) const;

    std::shared_ptr<const Backend> backend_;
    mutable std::optional<CsrData<T>> host_;
    SolverPlan plan_;
    MethodParameters parameters_;
    std::unique_ptr<LinearOperator<T>> operator_;
    mutable std::unique_ptr<LinearOperator<T>> transpose_;  // for BiCG
    mutable std::vector<std::unique_ptr<Built>> built_;     // per step of the chain
    mutable Array<T> initial_;                              // the initial guess of a solve
    mutable Array<T> residual_;                             // b - A x, recomputed
    // The host DIA matrix while the constructor or update_values builds the first step, else
    // null.
    const DiaData<T>* construction_matrix_ = nullptr;
    // Over ranks, with multigrid in the chain: this rank's block of rows as given (the
    // couplings to the neighbours' rows included), which a hierarchy over ranks starts from.
    std::optional<DiaData<T>> block_;
    // Over a process grid, with multigrid in the chain: this rank's part, which the hierarchy
    // starts from.
    std::optional<PartRows<double>> part_rows_;
    // Over ranks, with BiCG in the chain: the block split, which its transpose starts from.
    std::optional<SplitBlock<T>> transpose_source_;
    // The rows' size and diagonals, where the solver was built from DIA rows (update_values;
    // from CSR rows, host_ holds their pattern).
    std::optional<std::pair<std::int64_t, std::vector<int>>> rows_pattern_;
    bool from_csr_ = false;
    // The seconds build() took to make the operator (update_values reports them).
    double operator_seconds_ = 0;
    // During update_values: the multigrid preconditioners of the steps built before, made
    // again from the new rows as they were decided (a step without one: null).
    mutable std::vector<std::unique_ptr<Preconditioner<T>>> refreshed_;
    // For remove_constant: 1, the weights w (1 when none were given), and b - c w.
    mutable Array<T> ones_, removal_weights_, projected_;
};

}  // namespace simrun::solvers
