#include "simrun/solvers/selection/linear_system_solver.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "methods/residual_monitor.hpp"
#include "simrun/solvers/base/vector_ops.hpp"
#include "simrun/solvers/distributed/distributed_matrix.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/matrices/matrix_factory.hpp"
#include "simrun/solvers/methods/bicg.hpp"
#include "simrun/solvers/methods/bicgstab.hpp"
#include "simrun/solvers/methods/conjugate_gradient.hpp"
#include "simrun/solvers/methods/gmres.hpp"
#include "simrun/solvers/methods/stationary_methods.hpp"
#include "simrun/solvers/multigrid/multigrid_preconditioner.hpp"
#include "simrun/solvers/multigrid/multigrid_setup_error.hpp"
#include "simrun/solvers/preconditioners/incomplete_lu.hpp"

namespace simrun::solvers {

std::int64_t SolveReport::total_iterations() const {
    std::int64_t total = 0;
    for (const auto& attempt : attempts) total += attempt.result.iterations;
    return total;
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The operator in the plan's format from CSR rows. A DIA or stencil operator is made from DIA
// rows converted once, which `rows` keeps for the steps' set-up (a multigrid hierarchy starts
// from them: no copy back from the back-end); zeros are +0 in stencil storage, as its host_data
// gives them.
template <typename T>
std::unique_ptr<LinearOperator<T>> operator_from_csr(std::shared_ptr<const Backend> backend,
                                                     const CsrData<T>& matrix, Format format,
                                                     std::optional<DiaData<T>>& rows) {
    if (format != Format::dia && format != Format::stencil) {
        return make_operator(std::move(backend), matrix, format);
    }
    const bool stencil = format == Format::stencil;
    rows = to_dia(matrix, 64, stencil ? DiaZeros::positive : DiaZeros::as_given);
    return std::make_unique<DiaMatrix<T>>(std::move(backend), *rows,
                                          stencil ? DiaStorage::stencil : DiaStorage::general);
}

// Over ranks, the steps that start from the block as given (its couplings to the other ranks'
// rows included): multigrid's hierarchy (from a grid's slabs) and BiCG's transpose.
bool uses_multigrid(const SolverStep& step) {
    return step.preconditioner == PreconditionerKind::multigrid;
}
bool uses_bicg(const SolverStep& step) { return step.method == Method::bicg; }
bool any_step(const SolverPlan& plan, bool (*uses)(const SolverStep&)) {
    return uses(plan.first) || std::any_of(plan.fallbacks.begin(), plan.fallbacks.end(), uses);
}

}  // namespace

template <typename T>
struct LinearSystemSolver<T>::Built {
    std::unique_ptr<Preconditioner<T>> preconditioner;
    std::unique_ptr<IterativeSolver<T>> method;
    // Where the plan's multigrid could not be set up: why, and what stands in its place.
    std::string substitution;
};

template <typename T>
LinearSystemSolver<T>::LinearSystemSolver(std::shared_ptr<const Backend> backend, CsrData<T> matrix,
                                          SolverPlan plan, MethodParameters parameters)
    : backend_(std::move(backend)),
      host_(std::move(matrix)),
      plan_(std::move(plan)),
      parameters_(parameters) {
    if (backend_->communicator().size() > 1) {
        throw std::invalid_argument(
            "a CSR matrix is not split over ranks: give each rank its block's DIA rows");
    }
    from_csr_ = true;
    std::optional<DiaData<T>> rows;
    operator_ = operator_from_csr(backend_, *host_, plan_.format, rows);
    built_.resize(1 + plan_.fallbacks.size());
    first_step_from(rows ? &*rows : nullptr);
}

template <typename T>
LinearSystemSolver<T>::LinearSystemSolver(std::shared_ptr<const Backend> backend, DiaData<T> matrix,
                                          SolverPlan plan, MethodParameters parameters)
    : backend_(std::move(backend)), plan_(std::move(plan)), parameters_(parameters) {
    rows_pattern_.emplace(matrix.n, matrix.offsets);
    start_from_rows(std::move(matrix));
}

template <typename T>
void LinearSystemSolver<T>::start_from_rows(DiaData<T> matrix) {
    // Over several ranks the matrix is this rank's block of rows, its couplings to the
    // neighbouring ranks' rows among them (a grid's slabs): a hierarchy over ranks starts from
    // it as given.
    std::optional<OutsideCouplings<T>> outside;
    all_or_none(backend_->communicator(), [&] {
        if (backend_->communicator().size() == 1) return;
        if (any_step(plan_, uses_multigrid)) block_ = matrix;
        SplitBlock<T> split = split_block(std::move(matrix));
        matrix = std::move(split.inner);
        outside = std::move(split.outside);
    });
    build(std::move(matrix), std::move(outside));
}

template <typename T>
LinearSystemSolver<T>::LinearSystemSolver(std::shared_ptr<const Backend> backend,
                                          SplitBlock<T> block, SolverPlan plan,
                                          MethodParameters parameters)
    : backend_(std::move(backend)), plan_(std::move(plan)), parameters_(parameters) {
    const bool distributed = backend_->communicator().size() > 1;
    if (!distributed && block.outside.size() > 0) {
        throw std::invalid_argument(std::to_string(block.outside.size()) +
                                    " couplings outside the block, on one rank");
    }
    if (distributed && any_step(plan_, uses_multigrid)) {
        throw std::invalid_argument(
            "multigrid over ranks starts from a grid's slabs: give each rank its block's DIA "
            "rows with their couplings beyond it");
    }
    build(std::move(block.inner),
          distributed ? std::optional(std::move(block.outside)) : std::nullopt);
}

template <typename T>
LinearSystemSolver<T>::LinearSystemSolver(std::shared_ptr<const Backend> backend, PartRows<T> rows,
                                          SolverPlan plan, MethodParameters parameters)
    : backend_(std::move(backend)), plan_(std::move(plan)), parameters_(parameters) {
    const Communicator& ranks = backend_->communicator();
    if (ranks.size() == 1) {
        if (rows.part != whole_part(rows.box) || rows.window.n != rows.box.size()) {
            throw std::invalid_argument("one rank's part is not the whole " + rows.box.describe() +
                                        " box");
        }
        build(std::move(rows.window), std::nullopt);
        return;
    }
    SplitBlock<T> split = split_part_rows(ranks, rows);
    if (any_step(plan_, uses_multigrid)) {
        // The hierarchy is set up in double.
        DiaData<double> window{rows.window.n, rows.window.offsets, {}};
        window.values.assign(rows.window.values.begin(), rows.window.values.end());
        part_rows_ = PartRows<double>{rows.box, rows.part, std::move(window)};
    }
    rows.window = {};
    build(std::move(split.inner), std::move(split.outside));
}

template <typename T>
void LinearSystemSolver<T>::build(DiaData<T> matrix, std::optional<OutsideCouplings<T>> outside) {
    const auto start = std::chrono::steady_clock::now();
    // The block's own part goes to the back-end first, on each rank alone (all_or_none: a rank
    // that cannot stops every rank before the collective DistributedMatrix set-up).
    all_or_none(backend_->communicator(), [&] {
        // BiCG's transpose over ranks starts from the block as split.
        if (outside && any_step(plan_, uses_bicg)) transpose_source_ = {matrix, *outside};
        if (plan_.format == Format::dia || plan_.format == Format::stencil) {
            operator_ = std::make_unique<DiaMatrix<T>>(
                backend_, matrix,
                plan_.format == Format::stencil ? DiaStorage::stencil : DiaStorage::general);
        } else {
            host_ = to_csr(matrix);
            operator_ = make_operator(backend_, *host_, plan_.format);
        }
    });
    if (outside) {
        operator_ =
            std::make_unique<DistributedMatrix<T>>(std::move(operator_), std::move(*outside));
    }
    backend_->synchronize();
    operator_seconds_ = seconds_since(start);
    built_.resize(1 + plan_.fallbacks.size());
    // The first step's set-up (a multigrid hierarchy) reads the host matrix while it is here,
    // rather than copying it back from the back-end. Over ranks it reads the block, and the
    // host's copy of the block's own part goes first (the back-end has it).
    if (outside) matrix = {};
    first_step_from(outside ? nullptr : &matrix);
    // The copies of the block stay only for a fallback that will need them.
    const auto later = [&](bool (*uses)(const SolverStep&)) {
        return std::any_of(plan_.fallbacks.begin(), plan_.fallbacks.end(), uses);
    };
    if (!later(uses_multigrid)) {
        block_.reset();
        part_rows_.reset();
    }
    if (!later(uses_bicg)) transpose_source_.reset();
}

template <typename T>
LinearSystemSolver<T>::~LinearSystemSolver() = default;

template <typename T>
void LinearSystemSolver<T>::retire_steps() {
    // One process's hierarchies are made again as they were decided; the other steps, and
    // every step over ranks, are built afresh from the new rows when first needed.
    refreshed_.clear();
    refreshed_.resize(built_.size());
    const bool one_process = backend_->communicator().size() == 1;
    for (std::size_t i = 0; i < built_.size(); ++i) {
        if (one_process && built_[i] && built_[i]->substitution.empty() &&
            dynamic_cast<MultigridPreconditioner<T>*>(built_[i]->preconditioner.get())) {
            refreshed_[i] = std::move(built_[i]->preconditioner);
        }
    }
    built_.clear();  // the methods read the operator: they go first
    built_.resize(1 + plan_.fallbacks.size());
    transpose_.reset();
}

template <typename T>
void LinearSystemSolver<T>::first_step_from(const DiaData<T>* rows) {
    construction_matrix_ = rows;
    try {
        method(0);
    } catch (...) {
        construction_matrix_ = nullptr;  // (update_values keeps the object: no dangling rows)
        throw;
    }
    construction_matrix_ = nullptr;
}

template <typename T>
template <typename Rebuild>
void LinearSystemSolver<T>::with_steps_retired(Rebuild&& rebuild) {
    retire_steps();
    try {
        rebuild();
    } catch (...) {
        refreshed_.clear();
        throw;
    }
    refreshed_.clear();
}

template <typename T>
typename LinearSystemSolver<T>::UpdateTimes LinearSystemSolver<T>::update_values(
    DiaData<T> matrix) {
    if (!rows_pattern_) {
        throw std::logic_error(
            "update_values: the solver was not built from DIA rows; make a new solver");
    }
    if (matrix.n != rows_pattern_->first || matrix.offsets != rows_pattern_->second) {
        throw std::invalid_argument(
            "update_values: the new rows are " + std::to_string(matrix.n) + " rows of " +
            std::to_string(matrix.offsets.size()) + " diagonals, not the solver's " +
            std::to_string(rows_pattern_->first) + " rows of " +
            std::to_string(rows_pattern_->second.size()) + " diagonals at the same offsets");
    }
    const auto start = std::chrono::steady_clock::now();
    with_steps_retired([&] {
        host_.reset();
        start_from_rows(std::move(matrix));
    });
    backend_->synchronize();
    return {operator_seconds_, seconds_since(start) - operator_seconds_};
}

template <typename T>
typename LinearSystemSolver<T>::UpdateTimes LinearSystemSolver<T>::update_values(
    CsrData<T> matrix) {
    if (!from_csr_) {
        throw std::logic_error(
            "update_values: the solver was not built from CSR rows; make a new solver");
    }
    if (matrix.rows != host_->rows || matrix.row_ptr != host_->row_ptr ||
        matrix.col != host_->col || matrix.values.size() != host_->values.size()) {
        throw std::invalid_argument(
            "update_values: the new rows (" + std::to_string(matrix.rows) + " rows, " +
            std::to_string(matrix.values.size()) +
            " entries) are not on the solver's pattern (the same row pointers and columns)");
    }
    // Made before anything goes: where it fails the solver keeps its old values.
    const auto start = std::chrono::steady_clock::now();
    std::optional<DiaData<T>> rows;
    std::unique_ptr<LinearOperator<T>> made =
        operator_from_csr(backend_, matrix, plan_.format, rows);
    backend_->synchronize();
    const double operator_seconds = seconds_since(start);
    const auto steps_start = std::chrono::steady_clock::now();
    with_steps_retired([&] {
        host_ = std::move(matrix);
        operator_ = std::move(made);
        first_step_from(rows ? &*rows : nullptr);
    });
    backend_->synchronize();
    return {operator_seconds, seconds_since(steps_start)};
}

template <typename T>
const DiaMatrix<T>* LinearSystemSolver<T>::dia_operator() const {
    // A distributed operator's pointwise parts (its diagonal) are its block's own.
    if (const auto* split = dynamic_cast<const DistributedMatrix<T>*>(operator_.get())) {
        return dynamic_cast<const DiaMatrix<T>*>(&split->inner());
    }
    return dynamic_cast<const DiaMatrix<T>*>(operator_.get());
}

template <typename T>
const CsrData<T>& LinearSystemSolver<T>::host_csr() const {
    if (!host_) host_ = to_csr(dia_operator()->host_data());
    return *host_;
}

template <typename T>
std::vector<T> LinearSystemSolver<T>::host_diagonal() const {
    if (const DiaMatrix<T>* dia = dia_operator()) return dia->diagonal().to_host();
    return diagonal_of(*host_);
}

template <typename T>
std::unique_ptr<LinearOperator<T>> LinearSystemSolver<T>::make_transpose() const {
    if (transpose_source_) {
        // Over ranks: this rank's block of A^T's rows, the transpose of its own block and the
        // other ranks' couplings into it (collective).
        const Communicator& ranks = backend_->communicator();
        SplitBlock<T> split = transpose_block(ranks, *transpose_source_);
        std::unique_ptr<LinearOperator<T>> inner;
        all_or_none(ranks, [&] {
            inner = std::make_unique<DiaMatrix<T>>(backend_, split.inner, DiaStorage::general);
        });
        return std::make_unique<DistributedMatrix<T>>(std::move(inner), std::move(split.outside));
    }
    if (const DiaMatrix<T>* dia = dia_operator()) {
        // The transpose of a stencil with identity rows need not be a stencil (columns of
        // the identity rows may hold other rows' couplings): general storage then.
        DiaData<T> transposed = transpose(dia->host_data());
        if (dia->is_stencil()) {
            try {
                return std::make_unique<DiaMatrix<T>>(backend_, transposed, DiaStorage::stencil);
            } catch (const std::invalid_argument&) {
            }
        }
        return std::make_unique<DiaMatrix<T>>(backend_, transposed, DiaStorage::general);
    }
    return make_operator(backend_, transpose(*host_), plan_.format);
}

template <typename T>
const IterativeSolver<T>& LinearSystemSolver<T>::method(std::size_t index) const {
    if (built_[index]) return *built_[index]->method;
    // Built on each rank alone (a preconditioner's set-up, a fallback's when first needed):
    // all_or_none stops every rank where one cannot, before the solve's collectives. Over ranks
    // two set-ups are collective themselves (a multigrid hierarchy, BiCG's transpose): they run
    // between the guarded local parts, with guards of their own.
    const Communicator& ranks = backend_->communicator();
    const SolverStep& step = index == 0 ? plan_.first : plan_.fallbacks[index - 1];
    auto built = std::make_unique<Built>();
    if ((block_ || part_rows_) && step.preconditioner == PreconditionerKind::multigrid) {
        // Over ranks the hierarchy starts from the block with its couplings, a grid's slabs, or
        // from the part of a process grid (the operator, the block's own part, gives the
        // finest level's storage).
        MultigridParameters multigrid = plan_.multigrid;
        multigrid.symmetric = step.method == Method::cg;
        built->preconditioner = block_
                                    ? make_multigrid_preconditioner<T>(
                                          backend_, *block_, *plan_.grid, multigrid, dia_operator())
                                    : make_multigrid_preconditioner<T>(backend_, *part_rows_,
                                                                       multigrid, dia_operator());
    }
    if (transpose_source_ && step.method == Method::bicg && !transpose_) {
        transpose_ = make_transpose();
    }
    all_or_none(ranks, [&] {
        switch (step.preconditioner) {
            case PreconditionerKind::none:
                break;
            case PreconditionerKind::jacobi:
                built->preconditioner =
                    std::make_unique<JacobiPreconditioner<T>>(backend_, host_diagonal());
                break;
            case PreconditionerKind::ssor:
                // (Over ranks the sweeps hold the block's own entries, not the operator's.)
                built->preconditioner = std::make_unique<SsorPreconditioner<T>>(
                    backend_, host_csr(), static_cast<T>(parameters_.omega),
                    ranks.size() > 1 ? nullptr : operator_.get());
                break;
            case PreconditionerKind::ilu0:
                built->preconditioner =
                    std::make_unique<IluPreconditioner<T>>(backend_, host_csr());
                break;
            case PreconditionerKind::multigrid: {
                // CG needs the symmetric cycle; BiCGStab takes the one that contracts more.
                if (built->preconditioner) break;  // over ranks, built above
                MultigridParameters multigrid = plan_.multigrid;
                multigrid.symmetric = step.method == Method::cg;
                const DiaMatrix<T>* dia = dia_operator();
                const DiaData<T> copied = construction_matrix_ != nullptr ? DiaData<T>{}
                                          : dia != nullptr                ? dia->host_data()
                                                                          : to_dia(*host_);
                // The finest level is the solver's own operator (built_ is destroyed first).
                const DiaData<T>& rows =
                    construction_matrix_ != nullptr ? *construction_matrix_ : copied;
                try {
                    if (index < refreshed_.size() && refreshed_[index]) {
                        // New values on the rows: the hierarchy as it was decided.
                        auto& kept = static_cast<MultigridPreconditioner<T>&>(*refreshed_[index]);
                        kept.refresh(rows, dia);
                        built->preconditioner = std::move(refreshed_[index]);
                    } else {
                        built->preconditioner = make_multigrid_preconditioner<T>(
                            backend_, rows, *plan_.grid, multigrid, dia);
                    }
                } catch (const MultigridSetupError& e) {
                    // A hierarchy the operator defeats says nothing against the system: the
                    // selector's own choice gives way (a named multigrid fails, as it must).
                    if (plan_.preconditioner_named) throw;
                    substitute_for_multigrid(*built, e.what());
                }
                break;
            }
        }
        const Preconditioner<T>* m = built->preconditioner.get();
        // A step with others after it is stopped when it stalls (solver_selection.hpp).
        MethodParameters parameters = parameters_;
        if (index < plan_.fallbacks.size()) {
            parameters.criteria.progress_window =
                std::max<std::int64_t>(200, parameters.criteria.max_iterations / 10);
        }
        switch (step.method) {
            case Method::jacobi:
                built->method =
                    std::make_unique<WeightedJacobi<T>>(*operator_, host_diagonal(), parameters);
                break;
            case Method::sor:
                // Over ranks host_csr() is the block's own part of the distributed operator.
                built->method = std::make_unique<MulticolourSor<T>>(
                    backend_, host_csr(), parameters,
                    backend_->communicator().size() > 1 ? operator_.get() : nullptr);
                break;
            case Method::cg:
                built->method = std::make_unique<ConjugateGradient<T>>(*operator_, m, parameters);
                break;
            case Method::bicg:
                if (!transpose_) transpose_ = make_transpose();
                built->method = std::make_unique<BiConjugateGradient<T>>(*operator_, *transpose_, m,
                                                                         parameters);
                break;
            case Method::bicgstab:
                built->method = std::make_unique<BiCgStab<T>>(*operator_, m, parameters);
                break;
            case Method::gmres:
                parameters.restart = std::max(parameters.restart, step.restart);
                built->method = std::make_unique<Gmres<T>>(*operator_, m, parameters);
                break;
        }
        built_[index] = std::move(built);
    });
    return *built_[index]->method;
}

template <typename T>
void LinearSystemSolver<T>::substitute_for_multigrid(Built& built, const std::string& why) const {
    const std::vector<T> diagonal = host_diagonal();
    const bool invertible =
        std::none_of(diagonal.begin(), diagonal.end(), [](T value) { return value == T(0); });
    if (invertible) {
        built.preconditioner = std::make_unique<JacobiPreconditioner<T>>(backend_, diagonal);
    }
    built.substitution = why + "; multigrid's set-up failed, so " +
                         (invertible ? "jacobi" : "no preconditioner") + " in its place";
}

template <typename T>
std::string LinearSystemSolver<T>::preconditioner_details() const {
    method(0);
    if (!built_[0]->substitution.empty()) return built_[0]->substitution;
    const Preconditioner<T>* m = built_[0]->preconditioner.get();
    return m != nullptr ? m->describe() : std::string();
}

template <typename T>
void LinearSystemSolver<T>::set_constant_removal_weights(std::span<const T> weights) {
    const std::size_t n = operator_->size();
    if (weights.size() != n) {
        throw DimensionMismatch("set_constant_removal_weights: " + std::to_string(weights.size()) +
                                " weights for " + std::to_string(n) + " rows");
    }
    double sum = 0;
    for (const T w : weights) sum += static_cast<double>(w);
    sum = backend_->communicator().sum(sum);
    if (sum == 0) throw std::invalid_argument("set_constant_removal_weights: the weights sum to 0");
    removal_weights_ = Array<T>::from_host(backend_, weights);
}

template <typename T>
SolveReport LinearSystemSolver<T>::solve(const Array<T>& b, Array<T>& x) const {
    backend_->synchronize();  // work queued before the solve is not the solve's
    backend_->collect_device_halo_times();
    // Over ranks, every rank starts the clock together: a rank done with its set-up (or its
    // step) early would otherwise count its wait for the others in its solve's first sums.
    if (backend_->communicator().size() > 1) backend_->communicator().barrier();
    const auto start = std::chrono::steady_clock::now();
    const CommunicationTimes communication_before = backend_->communicator().times();
    SolveReport report;
    // A singular system with the constants as null space is solved on the rest: b' = b - c w
    // with 1'b' = 0, which A x = b' can meet (the range of symmetric A is orthogonal to 1).
    const Array<T>* rhs = &b;
    if (plan_.remove_constant) {
        if (ones_.size() != b.size()) {
            ones_ = Array<T>(backend_, b.size());
            fill(ones_, T(1));
            projected_ = Array<T>(backend_, b.size());
        }
        const Array<T>& w = removal_weights_.size() == b.size() ? removal_weights_ : ones_;
        const double c = static_cast<double>(dot(b, ones_)) / static_cast<double>(dot(w, ones_));
        copy(b, projected_);
        axpy(static_cast<T>(-c), w, projected_);
        const double norm = static_cast<double>(norm2(b));
        report.removed_constant =
            norm > 0 ? std::abs(c) * static_cast<double>(norm2(w)) / norm : 0.0;
        rhs = &projected_;
    }
    // Keep the initial guess for fallbacks and for a non-finite outcome (one buffer, reused).
    if (initial_.size() != x.size()) initial_ = Array<T>(backend_, x.size());
    copy(x, initial_);
    const Array<T>& initial = initial_;
    for (std::size_t index = 0; index <= plan_.fallbacks.size(); ++index) {
        if (index > 0) copy(initial, x);
        SolverStep step = index == 0 ? plan_.first : plan_.fallbacks[index - 1];
        SolveResult result = method(index).solve(*rhs, x);
        if (result.converged()) confirm(index, *rhs, x, result);
        const Built& built = *built_[index];
        const Preconditioner<T>* m = built.preconditioner.get();
        std::string details = m != nullptr ? m->describe() : "";
        if (!built.substitution.empty()) {
            // The step as it ran: its multigrid replaced, and why.
            step.preconditioner =
                m != nullptr ? PreconditionerKind::jacobi : PreconditionerKind::none;
            step.reason += "; " + built.substitution;
            details = built.substitution;
        }
        report.attempts.push_back({step, std::move(result), details});
        // Interrupted: the caller asked to stop, so no later method is built.
        const SolveStatus status = report.result().status;
        if (report.converged() || status == SolveStatus::stagnated ||
            status == SolveStatus::interrupted) {
            break;
        }
    }
    // A structurally singular matrix has no unique solution: one that meets the tolerance is
    // one of many (or b lies in a range the tolerance cannot tell from it), never "converged".
    if (!plan_.singular.empty() && report.converged()) {
        report.attempts.back().result.status = SolveStatus::singular;
    }
    // A method that met NaN or Inf may have left them in x: give back the initial guess, never
    // a non-finite "solution".
    if (report.result().status == SolveStatus::non_finite) copy(initial, x);
    // The solution of zero mean (x is fixed only up to a constant).
    if (plan_.remove_constant) {
        // Over ranks the dot is the whole vector's, and so must the count be.
        const double rows = backend_->communicator().sum(static_cast<double>(x.size()));
        const T mean = static_cast<T>(static_cast<double>(dot(x, ones_)) / rows);
        axpy(-mean, ones_, x);
    }
    backend_->synchronize();
    report.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    backend_->collect_device_halo_times();
    report.communication = backend_->communicator().times() - communication_before;
    return report;
}

// The method's residual is a recurrence that drifts from b - A x in finite precision (and can
// underflow to 0); the recomputed one decides. A miss restarts the method from x (its start forms
// b - A x afresh: residual replacement), at most twice, appending to the same result.
template <typename T>
void LinearSystemSolver<T>::confirm(std::size_t index, const Array<T>& b, Array<T>& x,
                                    SolveResult& result) const {
    const double target = std::max(parameters_.criteria.relative_tolerance * result.rhs_norm,
                                   parameters_.criteria.absolute_tolerance);
    if (residual_.size() != x.size()) residual_ = Array<T>(backend_, x.size());
    // b - A x as every method's start forms it (residual_monitor.hpp).
    const auto recompute = [&] { return compute_residual(*operator_, b, x, residual_, false); };
    // Whether ||b - A x|| (just recomputed into residual_) is finite and meets the target;
    // where ||b|| overflows a double (the methods solved the system scaled), compared with
    // rtol ||b|| as fraction and exponent, so that neither side is Inf.
    const WideNorm b_norm = std::isfinite(result.rhs_norm) ? WideNorm{} : wide_norm2(b);
    const auto finite = [&](double residual) {
        if (std::isfinite(result.rhs_norm) || std::isfinite(residual)) {
            return std::isfinite(residual);
        }
        const WideNorm r = wide_norm2(residual_);
        return r.fraction == 0 || r.finite_nonzero();
    };
    const auto meets = [&](double residual) {
        if (std::isfinite(result.rhs_norm)) return residual <= target;
        const WideNorm r = wide_norm2(residual_);
        return r.fraction == 0 ||
               (r.finite_nonzero() &&
                std::ldexp(r.fraction / b_norm.fraction, r.exponent - b_norm.exponent) <=
                    parameters_.criteria.relative_tolerance);
    };
    double residual = recompute();
    for (int restart = 0; restart < 2 && finite(residual) && !meets(residual); ++restart) {
        SolveResult again = method(index).solve(b, x);
        result.iterations += again.iterations;
        // The restart's own iteration 0 is the point the history already ends at: one entry
        // per iteration stays (iterations + 1 in all).
        if (!again.residual_history.empty()) {
            result.residual_history.insert(result.residual_history.end(),
                                           again.residual_history.begin() + 1,
                                           again.residual_history.end());
        }
        if (!again.converged()) {
            result.status = again.status;
            result.final_residual = again.final_residual;
            result.breakdown_quantity = again.breakdown_quantity;
            result.breakdown_value = again.breakdown_value;
            result.breakdown_degree = again.breakdown_degree;
            return;
        }
        residual = recompute();
    }
    result.final_residual = residual;
    result.status = !finite(residual) ? SolveStatus::non_finite
                    : meets(residual) ? SolveStatus::converged
                                      : SolveStatus::stagnated;
}

template class LinearSystemSolver<float>;
template class LinearSystemSolver<double>;

}  // namespace simrun::solvers
