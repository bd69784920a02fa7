#include "simrun/solvers/multigrid/multigrid_hierarchy.hpp"

#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "multigrid/hierarchy.hpp"
#include "multigrid/host_values.hpp"
#include "multigrid/level_transfer.hpp"
#include "multigrid/partitioned_levels.hpp"
#include "multigrid/whole_levels.hpp"

namespace simrun::solvers {

std::optional<MultigridParameters::Problem> MultigridParameters::problem() const {
    if (pre_sweeps < 0 || pre_sweeps > 100) return Problem{"pre_sweeps", "must be in [0, 100]"};
    if (post_sweeps < 0 || post_sweeps > 100) return Problem{"post_sweeps", "must be in [0, 100]"};
    if (pre_sweeps + post_sweeps == 0) {
        return Problem{"pre_sweeps", "and post_sweeps must not both be 0 (no smoothing)"};
    }
    if (coarsest_size < 1 || coarsest_size > 4096) {
        return Problem{"coarsest_size", "must be in [1, 4096] (the coarsest level is inverted)"};
    }
    if (max_levels < 1 || max_levels > 100) return Problem{"max_levels", "must be in [1, 100]"};
    if (gather_size && (*gather_size < 0 || *gather_size > (std::int64_t{1} << 24))) {
        return Problem{"gather_size", "must be in [0, 16777216] (points gathered on every rank)"};
    }
    if (slow_colour_axes && *slow_colour_axes > 7) {
        return Problem{"slow_colour_axes", "must be in [0, 7] (a bit per axis)"};
    }
    return std::nullopt;
}

std::int64_t gather_size_on(const MultigridParameters& parameters, BackendKind kind) {
    return parameters.gather_size.value_or(kind == BackendKind::cuda ? 65536 : 0);
}

void MultigridParameters::validate() const {
    if (const auto p = problem()) {
        throw std::invalid_argument(std::string("multigrid: ") + p->key + " " + p->message);
    }
}

namespace {

template <typename V>
void check_fine_operator(const DiaData<V>& fine, const DiaMatrix<V>* fine_operator) {
    if (fine_operator != nullptr && static_cast<std::int64_t>(fine_operator->size()) != fine.n) {
        throw std::invalid_argument("multigrid: the fine operator has " +
                                    std::to_string(fine_operator->size()) + " rows, the matrix " +
                                    std::to_string(fine.n));
    }
}

template <typename V>
std::optional<DiaStorage> storage_of(const DiaMatrix<V>* fine_operator) {
    return fine_operator != nullptr ? std::optional(fine_operator->storage()) : std::nullopt;
}

// `fine` in double for the set-up: itself where it is double (no copy).
template <typename V, typename Build>
void in_double(const DiaData<V>& fine, Build&& build) {
    if constexpr (std::is_same_v<V, double>) {
        build(fine);
    } else {
        build(multigrid::convert_dia<double>(fine));
    }
}

// Over ranks, from the planner's plan, the cycle V or W by the finest rows the ranks read (where
// it is not resolved already); `size`: this rank's points of the finest level.
template <typename T>
void build_over_ranks(multigrid::Hierarchy<T>& parts, multigrid::PartitionedHierarchy plan,
                      std::size_t size, std::optional<DiaStorage> fine_storage) {
    parts.resolve_cycle(plan.finest_jumps);
    multigrid::FinestOperator<T> finest;
    finest.storage = fine_storage;
    parts.build(plan, size, std::move(finest));
}

// Over slabs: this rank's block of whole planes.
template <typename T>
void build_slabs(multigrid::Hierarchy<T>& parts, const DiaData<double>& block, const GridBox& box,
                 std::optional<DiaStorage> fine_storage) {
    const MultigridParameters planned = parts.planned_parameters();
    build_over_ranks(parts,
                     multigrid::plan_partitioned_levels(parts.backend(), block, box, planned),
                     static_cast<std::size_t>(block.n), fine_storage);
}

// One process: the partition of one part, `fine` on the whole box, its levels made by the
// back-end (`fine_in_double`: `fine` there in double, where the caller has it).
// `decided`: an earlier hierarchy's decisions, taken as they are (its cycle resolved already).
template <typename T>
void build_one_process(multigrid::Hierarchy<T>& parts, const DiaData<double>& fine,
                       const GridBox& box, multigrid::FinestOperator<T> finest,
                       const DiaMatrix<double>* fine_in_double,
                       const std::vector<multigrid::LevelDecision>* decided = nullptr) {
    multigrid::WholeLevels plan(fine, box, parts.parameters(), parts.backend(), fine_in_double,
                                decided);
    // V or W by the finest level's jumps, read from its classes where the back-end has them.
    if (decided == nullptr) parts.resolve_cycle(plan.finest_jumps(multigrid::cycle_jump_ratio));
    parts.build(plan, static_cast<std::size_t>(box.size()), std::move(finest));
}

// The finest level's operator from the caller's `fine_operator` in V: itself where V is T, else
// converted to T on the back-end (none given: made by the build).
template <typename T, typename V>
multigrid::FinestOperator<T> finest_from(const DiaMatrix<V>* fine_operator) {
    multigrid::FinestOperator<T> finest;
    if constexpr (std::is_same_v<V, T>) {
        finest.given = fine_operator;
    } else {
        if (fine_operator != nullptr) finest.owned = std::make_unique<DiaMatrix<T>>(*fine_operator);
    }
    return finest;
}

// `a` where it is the double matrix, else null.
template <typename V>
const DiaMatrix<double>* in_double_only(const DiaMatrix<V>* a) {
    if constexpr (std::is_same_v<V, double>) {
        return a;
    } else {
        return nullptr;
    }
}

}  // namespace

template <typename T>
MultigridHierarchy<T>::MultigridHierarchy(std::shared_ptr<const Backend> backend,
                                          const DiaData<T>& fine, const GridBox& box,
                                          const MultigridParameters& parameters,
                                          const DiaMatrix<T>* fine_operator)
    : parts_(std::make_unique<multigrid::Hierarchy<T>>(std::move(backend), parameters)) {
    check_fine_operator(fine, fine_operator);
    in_double(fine, [&](const DiaData<double>& fine_double) {
        if (parts_->split()) {
            build_slabs(*parts_, fine_double, box, storage_of(fine_operator));
        } else {
            build_one_process(*parts_, fine_double, box, finest_from<T>(fine_operator),
                              in_double_only(fine_operator));
        }
    });
}

template <typename T>
MultigridHierarchy<T>::MultigridHierarchy(std::shared_ptr<const Backend> backend,
                                          const DiaData<OtherValue>& fine, const GridBox& box,
                                          const MultigridParameters& parameters,
                                          const DiaMatrix<OtherValue>* fine_operator)
    : parts_(std::make_unique<multigrid::Hierarchy<T>>(std::move(backend), parameters)) {
    check_fine_operator(fine, fine_operator);
    if (parts_->split()) {
        in_double(fine, [&](const DiaData<double>& fine_double) {
            build_slabs(*parts_, fine_double, box, storage_of(fine_operator));
        });
        return;
    }
    in_double(fine, [&](const DiaData<double>& fine_double) {
        build_one_process(*parts_, fine_double, box, finest_from<T>(fine_operator),
                          in_double_only(fine_operator));
    });
}

template <typename T>
MultigridHierarchy<T>::MultigridHierarchy(std::shared_ptr<const Backend> backend,
                                          const PartRows<double>& rows,
                                          const MultigridParameters& parameters,
                                          const DiaMatrix<T>* fine_operator)
    : parts_(std::make_unique<multigrid::Hierarchy<T>>(std::move(backend), parameters)),
      from_part_rows_(true) {
    if (!parts_->split()) {
        // One process: its part is the whole box, and the window the part.
        build_one_process(*parts_, rows.window, rows.box, {}, nullptr);
        return;
    }
    const MultigridParameters planned = parts_->planned_parameters();
    build_over_ranks(*parts_, multigrid::plan_partitioned_levels(parts_->backend(), rows, planned),
                     static_cast<std::size_t>(rows.part.size()), storage_of(fine_operator));
}

template <typename T>
MultigridHierarchy<T>::~MultigridHierarchy() = default;

template <typename T>
template <typename V>
void MultigridHierarchy<T>::refresh_rows(const DiaData<V>& fine,
                                         const DiaMatrix<V>* fine_operator) {
    if (from_part_rows_) {
        throw std::logic_error(
            "multigrid: a hierarchy built from a part's rows is refreshed by building it anew");
    }
    check_fine_operator(fine, fine_operator);
    // The finest level's box (over slabs the whole box: its partition's).
    const GridBox box = parts_->summaries().front().box;
    // Made whole before the old levels go: a failure leaves the hierarchy as it was.
    auto fresh = std::make_unique<multigrid::Hierarchy<T>>(parts_->backend(), parts_->parameters());
    in_double(fine, [&](const DiaData<double>& fine_double) {
        if (fresh->split()) {
            build_slabs(*fresh, fine_double, box, storage_of(fine_operator));
        } else {
            build_one_process(*fresh, fine_double, box, finest_from<T>(fine_operator),
                              in_double_only(fine_operator), &parts_->decisions());
        }
    });
    parts_ = std::move(fresh);
}

template <typename T>
void MultigridHierarchy<T>::refresh(const DiaData<T>& fine, const DiaMatrix<T>* fine_operator) {
    refresh_rows(fine, fine_operator);
}

template <typename T>
void MultigridHierarchy<T>::refresh(const DiaData<OtherValue>& fine,
                                    const DiaMatrix<OtherValue>* fine_operator) {
    refresh_rows(fine, fine_operator);
}

template <typename T>
void MultigridHierarchy<T>::cycle(const Array<T>& b, Array<T>& x) const {
    parts_->cycle(b, x);
}

template <typename T>
void MultigridHierarchy<T>::cycle_from_zero(const Array<T>& b, Array<T>& x) const {
    parts_->cycle_from_zero(b, x);
}

template <typename T>
std::vector<double> MultigridHierarchy<T>::time_levels(const Array<T>& b, Array<T>& x,
                                                       int cycles) const {
    return parts_->time_levels(b, x, cycles);
}

template <typename T>
double MultigridHierarchy<T>::bytes_per_cycle() const {
    return parts_->bytes_per_cycle();
}

template <typename T>
const std::vector<MultigridLevelSummary>& MultigridHierarchy<T>::levels() const {
    return parts_->summaries();
}

template <typename T>
std::string MultigridHierarchy<T>::describe() const {
    return parts_->describe();
}

template <typename T>
const MultigridParameters& MultigridHierarchy<T>::parameters() const {
    return parts_->parameters();
}

template <typename T>
const std::shared_ptr<const Backend>& MultigridHierarchy<T>::backend() const {
    return parts_->backend();
}

template <typename T>
std::size_t MultigridHierarchy<T>::size() const {
    return parts_->size();
}

template class MultigridHierarchy<float>;
template class MultigridHierarchy<double>;

}  // namespace simrun::solvers
