#include "simrun/solvers/multigrid/multigrid_hierarchy.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "base/kernel_table.hpp"
#include "multigrid/box_exchange.hpp"
#include "multigrid/box_levels.hpp"
#include "multigrid/coarsest_inverse.hpp"
#include "multigrid/level_transfer.hpp"
#include "multigrid/slab_exchange.hpp"
#include "multigrid/slab_levels.hpp"
#include "simrun/solvers/base/vector_ops.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/matrices/dia_matrix.hpp"
#include "simrun/solvers/multigrid/multigrid_setup_error.hpp"

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

template <typename T>
struct MultigridHierarchy<T>::Level {
    GridBox box;
    BoxShape shape{};
    // The level's operator (all levels but the coarsest; owned, or the caller's on the finest
    // level), and its inverse diagonal for the Chebyshev smoother.
    std::unique_ptr<DiaMatrix<T>> owned_a;
    const DiaMatrix<T>* a = nullptr;
    Array<T> inverse_diagonal;
    int colours = 2;
    int main = 0;                // the diagonal of offset 0
    double chebyshev_upper = 0;  // Gershgorin bound of the spectrum of D^-1 A
    // To the next coarser level: the weights, or their classes.
    BoxTransferView<T> transfer{};
    Array<T> weights;
    Array<std::uint8_t> weight_class;
    Array<T> class_weights;
    // Work vectors: the residual (and the Chebyshev direction); on coarse levels the right
    // side and the correction; for two-colour Gauss-Seidel, the vector a sweep writes into
    // (a sweep reads x and writes another vector; the iterate moves between the two).
    Array<T> r, d, b, x, swept;
    // The coarsest level: its dense inverse.
    Array<T> inverse;
    DenseView<T> inverse_view{};
    // Over ranks, a level split in slabs (box and shape are its window's): the exchange of the
    // window's halo; what turns a colour of the whole box into the window's (its first plane's
    // parity); where this rank's points start in the window, and where the transfer's coarse
    // points start in the next level's vectors.
    std::unique_ptr<multigrid::SlabHalo<T>> halo;
    int colour_flip = 0;
    std::size_t own_offset = 0, coarse_offset = 0;
    // Where the level's red-black sweeps are fused over ranks: this rank's points next to the
    // halo (in the window's coordinates, disjoint ranges), whose second colour is swept again
    // after the exchange.
    std::vector<BoxRange> boundary;
    // Over ranks, where the next level is split over fewer ranks: the transfer's coarse window
    // and the moves that fill it and empty it.
    std::unique_ptr<multigrid::LevelHandoff<T>> handoff;
    // Over ranks, whether this rank holds planes of the level (a level split over fewer ranks
    // leaves the last ones none: they only take part in the levels below's collectives).
    bool holds = true;
    // Over ranks, the level gathered whole (b and x its size): one process's hierarchy of the
    // rest, and its gather (where each rank's points start in it).
    std::unique_ptr<MultigridHierarchy<T>> gathered;
    std::unique_ptr<multigrid::LevelGather<T>> gather;
    // Over a process grid (box and shape are the window's: the part grown by a point): the
    // exchange of the window's halo; the axes the level is split along (a colour's parity bit
    // along them says which colours it reads across the ranks); on the finest level where this
    // rank's points lie in the window; where the next level is gathered, the transfer's coarse
    // window (this rank's part of it grown by a point) and the gather.
    std::unique_ptr<multigrid::BoxHalo<T>> box_halo;
    unsigned split_axes = 0;
    Array<std::int64_t> own_index;
    Array<T> coarse_b, coarse_x;
    std::unique_ptr<multigrid::BoxGather<T>> box_gather;
    void exchange(T* window) const {
        if (halo) halo->exchange(window);
        if (box_halo) box_halo->exchange(window);
    }
};

namespace {

BoxShape shape_of(const GridBox& box) {
    return {box.dimension, {box.points[0], box.points[1], box.points[2]}};
}

// The points of `own` (a part of the window, in its coordinates) next to the window's halo, as
// disjoint ranges: along each axis in turn, the layer before and after where the window goes
// on, without the layers already taken.
std::vector<BoxRange> boundary_ranges(const Box& own, const GridBox& window) {
    std::vector<BoxRange> ranges;
    Box rest = own;
    for (std::size_t axis = 0; axis < static_cast<std::size_t>(window.dimension); ++axis) {
        const auto add = [&](std::int64_t at) {
            BoxRange range{};
            for (std::size_t a = 0; a < 3; ++a) {
                range.lower[a] = rest.lower[a];
                range.upper[a] = rest.upper[a];
            }
            range.lower[axis] = at;
            range.upper[axis] = at + 1;
            if (range.size() > 0) ranges.push_back(range);
        };
        if (rest.lower[axis] > 0 && rest.points(axis) > 0) add(rest.lower[axis]++);
        if (rest.upper[axis] < window.points[axis] && rest.points(axis) > 0) {
            add(--rest.upper[axis]);
        }
    }
    return ranges;
}

// The values in To, converted on every core.
template <typename To, typename From>
std::vector<To> converted_values(const std::vector<From>& values) {
    std::vector<To> converted(values.size());
    const auto n = static_cast<std::int64_t>(values.size());
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
        converted[static_cast<std::size_t>(i)] =
            static_cast<To>(values[static_cast<std::size_t>(i)]);
    }
    return converted;
}

template <typename T>
Array<T> upload(const std::shared_ptr<const Backend>& backend, const std::vector<double>& values) {
    const std::vector<T> converted = converted_values<T>(values);
    return Array<T>::from_host(backend, converted);
}

// max_i sum_j |a_ij| / a_ii, checking that every a_ii is positive.
double gershgorin_of_scaled(const DiaData<double>& a, std::vector<double>& inverse_diagonal,
                            const GridBox& box, std::size_t level) {
    const int main = a.find_diagonal(0);
    inverse_diagonal.assign(static_cast<std::size_t>(a.n), 0.0);
    double bound = 0;
    std::int64_t first_bad = a.n;
#pragma omp parallel for schedule(static) reduction(max : bound) reduction(min : first_bad)
    for (std::int64_t i = 0; i < a.n; ++i) {
        const double diagonal = main >= 0 ? a.at(main, i) : 0.0;
        double sum = 0;
        for (int d = 0; d < a.num_diagonals(); ++d) {
            const std::int64_t j = i + a.offsets[static_cast<std::size_t>(d)];
            if (j >= 0 && j < a.n) sum += std::abs(a.at(d, i));
        }
        if (!(diagonal > 0) || !std::isfinite(diagonal)) {
            first_bad = std::min(first_bad, i);
            continue;
        }
        inverse_diagonal[static_cast<std::size_t>(i)] = 1.0 / diagonal;
        bound = std::max(bound, sum / diagonal);
    }
    if (first_bad < a.n) {
        const auto c = box.coordinates(first_bad);
        const std::string message = "multigrid: level " + std::to_string(level) + " (" +
                                    box.describe() + ") row " + std::to_string(first_bad) +
                                    " at (" + std::to_string(c[0]) + ", " + std::to_string(c[1]) +
                                    ", " + std::to_string(c[2]) + ") has diagonal entry " +
                                    std::to_string(main >= 0 ? a.at(main, first_bad) : 0.0) +
                                    "; the smoothers need positive diagonal entries";
        // The given matrix's own diagonal is the input's; a coarse level's is the set-up's.
        if (level == 0) throw std::invalid_argument(message);
        throw MultigridSetupError(message);
    }
    return bound;
}

template <typename To, typename From>
DiaData<To> convert_dia(const DiaData<From>& a) {
    return DiaData<To>{a.n, a.offsets, converted_values<To>(a.values)};
}

}  // namespace

template <typename T>
void MultigridHierarchy<T>::resolve_cycle(bool jumps_on_this_rank) {
    if (parameters_.cycle != MultigridCycle::automatic) return;
    const bool jumps = split() ? backend_->communicator().max(jumps_on_this_rank ? 1.0 : 0.0) > 0
                               : jumps_on_this_rank;
    parameters_.cycle = jumps ? MultigridCycle::w : MultigridCycle::v;
}

template <typename T>
MultigridHierarchy<T>::MultigridHierarchy(std::shared_ptr<const Backend> backend,
                                          const DiaData<T>& fine, const GridBox& box,
                                          const MultigridParameters& parameters,
                                          const DiaMatrix<T>* fine_operator)
    : backend_(std::move(backend)), parameters_(parameters) {
    if (fine_operator != nullptr && static_cast<std::int64_t>(fine_operator->size()) != fine.n) {
        throw std::invalid_argument("multigrid: the fine operator has " +
                                    std::to_string(fine_operator->size()) + " rows, the matrix " +
                                    std::to_string(fine.n));
    }
    resolve_cycle(multigrid::has_coefficient_jumps(fine, multigrid::cycle_jump_ratio));
    // Set up in double: the fine matrix itself when it is double (no copy).
    if constexpr (std::is_same_v<T, double>) {
        if (split()) {
            build_split(fine, box, fine_operator);
        } else {
            build(fine, box, fine_operator);
        }
    } else {
        if (split()) {
            build_split(convert_dia<double>(fine), box, fine_operator);
        } else {
            build(convert_dia<double>(fine), box, fine_operator);
        }
    }
}

template <typename T>
MultigridHierarchy<T>::MultigridHierarchy(std::shared_ptr<const Backend> backend,
                                          const DiaData<double>& whole, const GridBox& box,
                                          const MultigridParameters& parameters, OnThisRank)
    : backend_(std::move(backend)), parameters_(parameters), on_this_rank_(true) {
    resolve_cycle(multigrid::has_coefficient_jumps(whole, multigrid::cycle_jump_ratio));
    build(whole, box, nullptr);
}

template <typename T>
MultigridHierarchy<T>::MultigridHierarchy(std::shared_ptr<const Backend> backend,
                                          const DiaData<OtherValue>& fine, const GridBox& box,
                                          const MultigridParameters& parameters,
                                          const DiaMatrix<OtherValue>* fine_operator)
    : backend_(std::move(backend)), parameters_(parameters) {
    if (fine_operator != nullptr && static_cast<std::int64_t>(fine_operator->size()) != fine.n) {
        throw std::invalid_argument("multigrid: the fine operator has " +
                                    std::to_string(fine_operator->size()) + " rows, the matrix " +
                                    std::to_string(fine.n));
    }
    resolve_cycle(multigrid::has_coefficient_jumps(fine, multigrid::cycle_jump_ratio));
    if (split()) {
        // Set up in double: a double fine matrix itself (no copy).
        if constexpr (std::is_same_v<OtherValue, double>) {
            build_split(fine, box, fine_operator);
        } else {
            build_split(convert_dia<double>(fine), box, fine_operator);
        }
        return;
    }
    auto converted =
        fine_operator != nullptr ? std::make_unique<DiaMatrix<T>>(*fine_operator) : nullptr;
    if constexpr (std::is_same_v<T, double>) {
        build(convert_dia<double>(fine), box, nullptr, std::move(converted));
    } else {
        build(fine, box, nullptr, std::move(converted));
    }
}

template <typename T>
void MultigridHierarchy<T>::build(const DiaData<double>& fine, const GridBox& box,
                                  const DiaMatrix<T>* fine_operator,
                                  std::unique_ptr<DiaMatrix<T>> fine_owned) {
    parameters_.validate();
    size_ = static_cast<std::size_t>(box.size());
    if (fine.n != box.size()) {
        throw std::invalid_argument("multigrid: the matrix has " + std::to_string(fine.n) +
                                    " rows but the box " + box.describe() + " has " +
                                    std::to_string(box.size()) + " points");
    }
    // Each level's operator: the fine matrix, then each Galerkin product.
    std::optional<DiaData<double>> owned;
    const DiaData<double>* level_matrix = &fine;
    GridBox level_box = box;
    for (std::size_t level = 0;; ++level) {
        const DiaData<double>& a = *level_matrix;
        auto current = std::make_unique<Level>();
        current->box = level_box;
        current->shape = shape_of(level_box);
        const bool along_axes = multigrid::check_box_couplings(a, level_box);
        current->colours = along_axes ? 2 : 1 << level_box.dimension;
        const bool last_allowed = level + 1 >= static_cast<std::size_t>(parameters_.max_levels);
        multigrid::BoxCoarsening coarsening;
        if (level_box.size() > parameters_.coarsest_size && !last_allowed) {
            coarsening = multigrid::choose_coarsening(a, level_box);
        }
        if (!coarsening.coarsens()) {
            if (level_box.size() > 4096) {
                throw MultigridSetupError(
                    "multigrid: the box " + level_box.describe() + " cannot be coarsened below " +
                    std::to_string(level_box.size()) + " points, too many to solve directly");
            }
            const multigrid::CoarsestInverse coarsest = multigrid::invert_coarsest(to_csr(a));
            current->inverse = upload<T>(backend_, coarsest.inverse.values);
            current->inverse_view = {coarsest.inverse.rows, coarsest.inverse.cols,
                                     current->inverse.data()};
            if (level > 0) {
                current->b = Array<T>(backend_, static_cast<std::size_t>(level_box.size()));
                current->x = Array<T>(backend_, static_cast<std::size_t>(level_box.size()));
            }
            summaries_.push_back({level_box, 0, 0});
            levels_.push_back(std::move(current));
            break;
        }
        std::vector<double> inverse_diagonal;
        current->chebyshev_upper = gershgorin_of_scaled(a, inverse_diagonal, level_box, level);
        if (parameters_.smoother == MultigridSmoother::chebyshev) {
            current->inverse_diagonal = upload<T>(backend_, inverse_diagonal);
        }
        if (level == 0 && fine_operator != nullptr) {
            current->a = fine_operator;
        } else if (level == 0 && fine_owned) {
            current->owned_a = std::move(fine_owned);
            current->a = current->owned_a.get();
        } else {
            if constexpr (std::is_same_v<T, double>) {
                current->owned_a = make_level_operator(a);
            } else {
                current->owned_a = make_level_operator(convert_dia<T>(a));
            }
            current->a = current->owned_a.get();
        }
        current->main = a.find_diagonal(0);
        const auto n = static_cast<std::size_t>(level_box.size());
        current->r = Array<T>(backend_, n);
        if (parameters_.smoother == MultigridSmoother::chebyshev) {
            current->d = Array<T>(backend_, n);
            fill(current->d, T(0));
        }
        if (level > 0) {
            current->b = Array<T>(backend_, n);
            current->x = Array<T>(backend_, n);
        }
        if (parameters_.smoother == MultigridSmoother::red_black_gauss_seidel &&
            current->colours == 2 &&
            backend_->kernels<T>().fuses_red_black_sweep(current->a->view(), current->shape)) {
            current->swept = Array<T>(backend_, n);
        }
        const std::vector<double> weights =
            multigrid::operator_interpolation(a, level_box, coarsening);
        set_transfer(*current, weights, coarsening);
        summaries_.push_back(
            {level_box, current->a->view().num_diagonals, current->colours, current->a->storage()});
        levels_.push_back(std::move(current));
        owned = multigrid::galerkin_operator(a, level_box, coarsening, weights);
        level_matrix = &*owned;
        level_box = coarsening.coarse;
    }
}

template <typename T>
template <typename Fine>
void MultigridHierarchy<T>::build_split(const DiaData<double>& block, const GridBox& box,
                                        const DiaMatrix<Fine>* fine_operator) {
    parameters_.validate();
    size_ = static_cast<std::size_t>(block.n);
    const Communicator& ranks = backend_->communicator();
    MultigridParameters planned = parameters_;
    planned.gather_size = gather_size_on(parameters_, backend_->kind());
    multigrid::SlabHierarchy plan = multigrid::plan_slab_hierarchy(ranks, block, box, planned);
    for (std::size_t l = 0; l < plan.levels.size(); ++l) {
        multigrid::SlabLevel& slab = plan.levels[l];
        auto current = std::make_unique<Level>();
        current->box = slab.window;
        current->shape = shape_of(slab.window);
        current->colours = slab.along_axes ? 2 : 1 << box.dimension;
        // Colour c of the whole box is the window's c, or with the last axis's parity bit
        // flipped where the window starts on an odd plane ((i + j + k) mod 2 with 2 colours).
        if ((slab.window_first_plane() & 1) != 0) {
            current->colour_flip = current->colours == 2 ? 1 : 1 << (box.dimension - 1);
        }
        current->holds = slab.holds();
        current->split_axes = 1u << (box.dimension - 1);
        split_holders_.push_back(slab.holders);
        all_or_none(ranks, [&] {
            if (!slab.holds()) return;
            set_split_level(
                *current, slab.window_operator, slab.window, slab.weights, slab.transfer, l,
                fine_operator != nullptr ? std::optional(fine_operator->storage()) : std::nullopt);
            current->own_offset = static_cast<std::size_t>(slab.halo_before ? slab.plane : 0);
            if (current->swept.size() > 0) {
                Box own = whole_part(slab.window);
                const auto slow = static_cast<std::size_t>(box.dimension - 1);
                own.lower[slow] = slab.halo_before ? 1 : 0;
                own.upper[slow] = own.lower[slow] + slab.planes;
                current->boundary = boundary_ranges(own, slab.window);
            }
            current->coarse_offset = static_cast<std::size_t>(slab.coarse_offset);
            if (slab.handoff) {
                const multigrid::SlabHandoff& h = *slab.handoff;
                current->handoff = std::make_unique<multigrid::LevelHandoff<T>>(
                    backend_, h.restricted, h.reached, h.held, h.plane);
            }
        });
        // The smoother's bound is the whole level's (every rank's rows).
        current->chebyshev_upper = ranks.max(current->chebyshev_upper);
        // Collective (a device halo is opened with the neighbours): outside all_or_none.
        current->halo = std::make_unique<multigrid::SlabHalo<T>>(backend_, slab.plane, slab.planes,
                                                                 slab.halo_before, slab.halo_after);
        summaries_.push_back(
            current->a != nullptr
                ? LevelSummary{slab.box, current->a->view().num_diagonals, current->colours,
                               current->a->storage()}
                : LevelSummary{slab.box, slab.window_operator.num_diagonals(), current->colours});
        levels_.push_back(std::move(current));
        // The level is on the back-end: its host rows and weights go before the next's are
        // converted.
        slab.window_operator = {};
        slab.weights = {};
    }
    auto gathered = gathered_level(plan.gathered, plan.gathered_box, plan.levels.size());
    // Collective (a device halo is opened with the neighbours): outside all_or_none.
    gathered->gather =
        std::make_unique<multigrid::LevelGather<T>>(backend_, std::move(plan.gathered_starts));
    levels_.push_back(std::move(gathered));
}

template <typename T>
std::unique_ptr<typename MultigridHierarchy<T>::Level> MultigridHierarchy<T>::gathered_level(
    const DiaData<double>& rows, const GridBox& box, std::size_t split_levels) {
    // The rest, gathered: one process's hierarchy on each rank, with the levels left.
    auto gathered = std::make_unique<Level>();
    gathered->box = box;
    gathered->shape = shape_of(box);
    MultigridParameters rest = parameters_;
    rest.max_levels = parameters_.max_levels - static_cast<int>(split_levels);
    all_or_none(backend_->communicator(), [&] {
        gathered->gathered = std::unique_ptr<MultigridHierarchy<T>>(
            new MultigridHierarchy<T>(backend_, rows, box, rest, OnThisRank{}));
        const auto n = static_cast<std::size_t>(box.size());
        gathered->b = Array<T>(backend_, n);
        gathered->x = Array<T>(backend_, n);
    });
    const auto& rest_levels = gathered->gathered->levels();
    summaries_.insert(summaries_.end(), rest_levels.begin(), rest_levels.end());
    split_levels_ = split_levels;
    return gathered;
}

template <typename T>
void MultigridHierarchy<T>::set_transfer(Level& level, const std::vector<double>& weights,
                                         const multigrid::BoxCoarsening& coarsening) const {
    BoxTransferView<T>& t = level.transfer;
    if (auto classes = multigrid::weight_classes(weights, coarsening.coarse.size(),
                                                 multigrid::transfer_slots(level.box.dimension))) {
        level.weight_class = Array<std::uint8_t>::from_host(backend_, classes->of_point);
        level.class_weights = upload<T>(backend_, classes->table);
        t.weight_class = level.weight_class.data();
        t.class_weights = level.class_weights.data();
    } else {
        level.weights = upload<T>(backend_, weights);
    }
    t.fine = level.shape;
    t.coarse = shape_of(coarsening.coarse);
    for (std::size_t axis = 0; axis < 3; ++axis) {
        t.step[axis] = coarsening.axes[axis].step;
        t.first[axis] = coarsening.axes[axis].first;
    }
    t.weights = level.weights.size() > 0 ? level.weights.data() : nullptr;
}

template <typename T>
void MultigridHierarchy<T>::set_split_level(Level& current, const DiaData<double>& window_rows,
                                            const GridBox& window,
                                            const std::vector<double>& weights,
                                            const multigrid::BoxCoarsening& transfer, std::size_t l,
                                            std::optional<DiaStorage> fine_storage) {
    std::vector<double> inverse_diagonal;
    current.chebyshev_upper = gershgorin_of_scaled(window_rows, inverse_diagonal, window, l);
    if (parameters_.smoother == MultigridSmoother::chebyshev) {
        current.inverse_diagonal = upload<T>(backend_, inverse_diagonal);
    }
    // The finest level in the storage of the solver's operator (its plan's format), where its
    // window takes it; the others as one process's.
    DiaData<T> converted;
    const DiaData<T>* in_t = nullptr;
    if constexpr (std::is_same_v<T, double>) {
        in_t = &window_rows;
    } else {
        converted = convert_dia<T>(window_rows);
        in_t = &converted;
    }
    if (l == 0 && fine_storage) {
        try {
            current.owned_a = std::make_unique<DiaMatrix<T>>(backend_, *in_t, *fine_storage);
        } catch (const std::invalid_argument&) {
        }
    }
    if (!current.owned_a) current.owned_a = make_level_operator(*in_t);
    current.a = current.owned_a.get();
    current.main = window_rows.find_diagonal(0);
    const auto n = static_cast<std::size_t>(window.size());
    current.r = Array<T>(backend_, n);
    current.b = Array<T>(backend_, n);
    current.x = Array<T>(backend_, n);
    // Zero once: halo points no kernel writes before the exchange (the finest b's, a coarse b's
    // beyond the restriction's reach) are read by the halo rows' sweeps.
    for (Array<T>* v : {&current.r, &current.b, &current.x}) fill(*v, T(0));
    if (parameters_.smoother == MultigridSmoother::chebyshev) {
        current.d = Array<T>(backend_, n);
        fill(current.d, T(0));
    }
    // Both colours of a sweep in one pass where the back-end fuses them (over ranks smooth()
    // then sweeps the second colour of the points next to the halo again, with the
    // neighbours').
    if (parameters_.smoother == MultigridSmoother::red_black_gauss_seidel && current.colours == 2 &&
        backend_->kernels<T>().fuses_red_black_sweep(current.a->view(), current.shape)) {
        current.swept = Array<T>(backend_, n);
        fill(current.swept, T(0));
    }
    set_transfer(current, weights, transfer);
}

template <typename T>
MultigridHierarchy<T>::MultigridHierarchy(std::shared_ptr<const Backend> backend,
                                          const PartRows<double>& rows,
                                          const MultigridParameters& parameters,
                                          const DiaMatrix<T>* fine_operator)
    : backend_(std::move(backend)), parameters_(parameters) {
    resolve_cycle(multigrid::has_coefficient_jumps(rows.window, multigrid::cycle_jump_ratio));
    if (!split()) {
        // One process: its part is the whole box, and the window the part.
        build(rows.window, rows.box, nullptr);
        return;
    }
    build_boxes(rows,
                fine_operator != nullptr ? std::optional(fine_operator->storage()) : std::nullopt);
}

template <typename T>
void MultigridHierarchy<T>::build_boxes(const PartRows<double>& rows,
                                        std::optional<DiaStorage> fine_storage) {
    parameters_.validate();
    boxes_ = true;
    size_ = static_cast<std::size_t>(rows.part.size());
    const Communicator& ranks = backend_->communicator();
    const int dimension = rows.box.dimension;
    MultigridParameters planned = parameters_;
    planned.gather_size = gather_size_on(parameters_, backend_->kind());
    multigrid::BoxHierarchy plan = multigrid::plan_box_hierarchy(ranks, rows, planned);
    const auto rank = static_cast<std::size_t>(ranks.rank());
    for (std::size_t l = 0; l < plan.levels.size(); ++l) {
        multigrid::BoxLevel& split = plan.levels[l];
        auto current = std::make_unique<Level>();
        const GridBox window = split.window.shape(dimension);
        current->box = window;
        current->shape = shape_of(window);
        current->colours = split.along_axes ? 2 : 1 << dimension;
        current->split_axes = split.split_axes;
        // Colour c of the whole box is the window's c with the parity of the window's first
        // point flipped in: (i + j + k) mod 2 with 2 colours, each axis's parity bit with more.
        for (std::size_t axis = 0; axis < 3; ++axis) {
            if ((split.window.lower[axis] & 1) == 0) continue;
            current->colour_flip ^= current->colours == 2 ? 1 : 1 << axis;
        }
        split_holders_.push_back(ranks.size());
        const bool next_gathered = l + 1 == plan.levels.size();
        all_or_none(ranks, [&] {
            set_split_level(*current, split.window_operator, window, split.weights, split.transfer,
                            l, fine_storage);
            if (current->swept.size() > 0) {
                Box own;
                for (std::size_t axis = 0; axis < 3; ++axis) {
                    own.lower[axis] = split.own.lower[axis] - split.window.lower[axis];
                    own.upper[axis] = split.own.upper[axis] - split.window.lower[axis];
                }
                current->boundary = boundary_ranges(own, window);
            }
            if (l == 0) {
                std::vector<std::int64_t> own;
                for_each_point(split.own,
                               [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t) {
                                   own.push_back(split.window.index(i, j, k));
                               });
                current->own_index = Array<std::int64_t>::from_host(backend_, own);
            }
            if (next_gathered) {
                const auto n = static_cast<std::size_t>(split.coarse_window.size());
                current->coarse_b = Array<T>(backend_, n);
                current->coarse_x = Array<T>(backend_, n);
            }
        });
        current->chebyshev_upper = ranks.max(current->chebyshev_upper);
        // Collective (a device halo is opened with the neighbours): outside all_or_none.
        current->box_halo =
            std::make_unique<multigrid::BoxHalo<T>>(backend_, split.box, split.parts);
        summaries_.push_back(
            {split.box, current->a->view().num_diagonals, current->colours, current->a->storage()});
        levels_.push_back(std::move(current));
        split.window_operator = {};
        split.weights = {};
    }
    auto gathered = gathered_level(plan.gathered, plan.gathered_box, plan.levels.size());
    // This rank's part of the gathered level lies in the level above's coarse window, or on the
    // finest level is the part itself.
    const Box window =
        plan.levels.empty() ? plan.gathered_parts[rank] : plan.levels.back().coarse_window;
    gathered->box_gather = std::make_unique<multigrid::BoxGather<T>>(backend_, plan.gathered_box,
                                                                     plan.gathered_parts, window);
    levels_.push_back(std::move(gathered));
}

template <typename T>
MultigridHierarchy<T>::~MultigridHierarchy() = default;

template <typename T>
std::unique_ptr<DiaMatrix<T>> MultigridHierarchy<T>::make_level_operator(
    const DiaData<T>& a) const {
    // Constant coefficients (the fine level of a constant-coefficient grid problem) keep the
    // stencil storage: a mask byte per row instead of the diagonals' values; few kinds of rows
    // (the Galerkin levels of such a problem: inner rows, sides, corners) a class byte per row.
    for (const DiaStorage storage : {DiaStorage::stencil, DiaStorage::classes}) {
        try {
            return std::make_unique<DiaMatrix<T>>(backend_, a, storage);
        } catch (const std::invalid_argument&) {
        }
    }
    return std::make_unique<DiaMatrix<T>>(backend_, a, DiaStorage::general);
}

template <typename T>
std::string MultigridHierarchy<T>::describe() const {
    std::string text =
        std::to_string(summaries_.size()) + (summaries_.size() == 1 ? " level: " : " levels: ");
    for (std::size_t l = 0; l < summaries_.size(); ++l) {
        text += (l > 0 ? " -> " : "") + summaries_[l].box.describe();
    }
    const char* cycle = parameters_.cycle == MultigridCycle::v   ? "V"
                        : parameters_.cycle == MultigridCycle::w ? "W"
                                                                 : "F";
    text += std::string(" (direct), ") + cycle + "(" + std::to_string(parameters_.pre_sweeps) +
            "," + std::to_string(parameters_.post_sweeps) + ") " +
            (parameters_.symmetric ? "symmetric " : "") +
            (parameters_.smoother == MultigridSmoother::chebyshev ? "Chebyshev"
                                                                  : "red-black Gauss-Seidel");
    if (split()) {
        const GridBox& gathered = summaries_[split_levels_].box;
        // The levels split over fewer ranks, by how many hold them.
        std::string fewer;
        for (std::size_t l = 0; l < split_levels_; ++l) {
            if (split_holders_[l] == backend_->communicator().size()) continue;
            fewer +=
                summaries_[l].box.describe() + " on " + std::to_string(split_holders_[l]) + ", ";
        }
        text += ", over " + std::to_string(backend_->communicator().size()) + " ranks (" + fewer +
                (split_levels_ == 0 ? std::string("every level") : "from " + gathered.describe()) +
                " gathered on each)";
    }
    return text;
}

template <typename T>
void MultigridHierarchy<T>::check_sizes(const Array<T>& b, const Array<T>& x) const {
    const std::size_t n = size_;
    if (b.size() != n || x.size() != n) {
        throw DimensionMismatch("MultigridHierarchy::cycle: the box has " + std::to_string(n) +
                                " points but b has " + std::to_string(b.size()) + " and x " +
                                std::to_string(x.size()));
    }
}

template <typename T>
void MultigridHierarchy<T>::cycle(const Array<T>& b, Array<T>& x) const {
    check_sizes(b, x);
    if (split()) return run_split(b, x, nullptr);
    // The whole cycle is one recorded unit (on CUDA a graph: one launch instead of a few per
    // level), recorded again when it is asked of other vectors.
    const T* b_data = b.data();
    T* x_data = x.data();
    recorded_.run(*backend_, b_data, x_data, [this, b_data, x_data] {
        run_cycle(0, b_data, x_data, parameters_.cycle, nullptr);
    });
}

template <typename T>
void MultigridHierarchy<T>::cycle_from_zero(const Array<T>& b, Array<T>& x) const {
    check_sizes(b, x);
    if (split()) return run_split(b, x, nullptr, true);
    fill(x, T(0));
    cycle(b, x);
}

template <typename T>
std::size_t MultigridHierarchy<T>::finest_own_offset() const {
    const Level& finest = *levels_.front();
    return finest.gathered
               ? static_cast<std::size_t>(
                     finest.gather
                         ->starts()[static_cast<std::size_t>(backend_->communicator().rank())])
               : finest.own_offset;
}

template <typename T>
T* MultigridHierarchy<T>::own_b() const {
    return split() && !boxes_ ? levels_.front()->b.data() + finest_own_offset() : nullptr;
}

template <typename T>
const T* MultigridHierarchy<T>::own_x() const {
    return split() && !boxes_ ? levels_.front()->x.data() + finest_own_offset() : nullptr;
}

template <typename T>
void MultigridHierarchy<T>::cycle_own_b_from_zero() const {
    if (!split() || boxes_) {
        throw std::logic_error("multigrid: cycle_own_b_from_zero without a slab's window");
    }
    Level& finest = *levels_.front();
    // The window zeroed: n + 2 planes written instead of n read and written and a halo
    // exchanged.
    fill(finest.x, T(0));
    run_cycle(0, finest.b.data(), finest.x.data(), parameters_.cycle, nullptr, true);
}

template <typename T>
void MultigridHierarchy<T>::run_split(const Array<T>& b, Array<T>& x, std::vector<double>* seconds,
                                      bool from_zero) const {
    // b and x into the finest level's vectors (a window, or the level gathered whole), x's
    // halo from the neighbours (or, from zero, the window zeroed); after the cycle x back from
    // them. Not recorded: host-staged exchanges wait on the host, the device halos count their
    // exchanges (and so their slots) on the host, and the coarse level is gathered through the
    // host. (A recording in parts, the gathers between them, the exchanges counted on the
    // device, was measured no faster on four GPUs: docs/benchmarks.md.)
    Level& finest = *levels_.front();
    if (boxes_) {
        // Over a process grid the part's points are scattered into the finest window, or
        // where the finest level is gathered, the part is its own window.
        const KernelTable<T>& kernels = backend_->kernels<T>();
        if (from_zero) fill(finest.x, T(0));
        if (finest.box_gather) {
            run_cycle(0, b.data(), x.data(), parameters_.cycle, seconds, from_zero);
            return;
        }
        const std::size_t n = finest.own_index.size();
        kernels.scatter(*backend_, n, finest.own_index.data(), b.data(), finest.b.data());
        if (!from_zero) {
            kernels.scatter(*backend_, n, finest.own_index.data(), x.data(), finest.x.data());
            finest.exchange(finest.x.data());
        }
        run_cycle(0, finest.b.data(), finest.x.data(), parameters_.cycle, seconds, from_zero);
        kernels.gather(*backend_, n, finest.own_index.data(), finest.x.data(), x.data());
        return;
    }
    const std::size_t bytes = size_ * sizeof(T);
    backend_->copy(own_b(), b.data(), bytes);
    if (from_zero) {
        fill(finest.x, T(0));
    } else {
        backend_->copy(finest.x.data() + finest_own_offset(), x.data(), bytes);
        finest.exchange(finest.x.data());
    }
    run_cycle(0, finest.b.data(), finest.x.data(), parameters_.cycle, seconds, from_zero);
    backend_->copy(x.data(), own_x(), bytes);
}

template <typename T>
T* MultigridHierarchy<T>::smooth(Level& level, const T* b, T* x, T* spare, int sweeps,
                                 bool forward) const {
    const KernelTable<T>& kernels = backend_->kernels<T>();
    const DiaView<T> a = level.a->view();
    if (level.swept.size() > 0) {
        // Both colours in one pass (fused on this back-end), from one vector into the other.
        for (int sweep = 0; sweep < sweeps; ++sweep) {
            const int first = (forward ? 0 : 1) ^ level.colour_flip;
            kernels.box_red_black_sweep(*backend_, a, level.main, level.shape, first, b, x, spare);
            std::swap(x, spare);
            if (level.halo || level.box_halo) {
                // Over ranks the pass read the halo as it was before the neighbours' sweep, so
                // the second colour of this rank's points next to the halo (which reads the
                // first colour across) is not yet the one-process sweep's; everything else is.
                // With the neighbours' points after their pass (their first colour now right),
                // that colour is swept again on those points, and the halo exchanged again: the
                // same exchanges as a colour at a time, and one pass over the level instead of
                // two.
                level.exchange(x);
                for (const BoxRange& part : level.boundary) {
                    kernels.box_colour_sweep_part(*backend_, a, level.main, level.shape, 1 - first,
                                                  part, b, x);
                }
                level.exchange(x);
            }
        }
        return x;
    }
    if (parameters_.smoother == MultigridSmoother::red_black_gauss_seidel) {
        // Over ranks a colour's new values cross to the neighbours' halo before a colour that
        // reads them. A point reads across the ranks only neighbours one step along a split
        // axis, whose parity along it differs: with red-black colours the other colour; with
        // the parity of each coordinate (2^dimension colours, bit a the parity along axis a)
        // the colours whose bits along the split axes differ. So the halo is exchanged before a
        // colour whose split bits differ from those swept since the last exchange, and after
        // each sweep. On slabs (the last axis split, its bit the highest) that is once after
        // each half of the colours, the points of the even planes and those of the odd ones:
        // 2 exchanges a sweep instead of 2^dimension, the same values; on a process grid of
        // boxes split along every axis, after each colour.
        const unsigned split_bits = level.colours == 2 ? 1u : level.split_axes;
        for (int sweep = 0; sweep < sweeps; ++sweep) {
            bool pending = false;
            unsigned pending_bits = 0;
            for (int c = 0; c < level.colours; ++c) {
                const int colour = (forward ? c : level.colours - 1 - c) ^ level.colour_flip;
                const unsigned bits = static_cast<unsigned>(colour) & split_bits;
                if (pending && bits != pending_bits) level.exchange(x);
                kernels.box_colour_sweep(*backend_, a, level.main, level.shape, level.colours,
                                         colour, b, x);
                pending = true;
                pending_bits = bits;
            }
            level.exchange(x);
        }
        return x;
    }
    // Chebyshev on [0.3 upper, upper] for D^-1 A: x += d_k with the three-term recurrence
    // d_k = rho_k rho_{k-1} d_{k-1} + (2 rho_k / delta) D^-1 r_k (Saad, Algorithm 12.1).
    const double upper = level.chebyshev_upper, lower = 0.3 * upper;
    const double theta = 0.5 * (upper + lower), delta = 0.5 * (upper - lower);
    const double sigma = theta / delta;
    double rho = 1.0 / sigma;
    const auto n = static_cast<std::size_t>(level.box.size());
    T* r = level.r.data();
    T* d = level.d.data();
    for (int k = 0; k < sweeps; ++k) {
        kernels.dia_residual(*backend_, a, b, x, r);
        if (k == 0) {
            kernels.chebyshev_step(*backend_, n, T(0), static_cast<T>(1.0 / theta),
                                   level.inverse_diagonal.data(), r, d, x);
            level.exchange(x);
            continue;
        }
        const double rho_next = 1.0 / (2.0 * sigma - rho);
        kernels.chebyshev_step(*backend_, n, static_cast<T>(rho_next * rho),
                               static_cast<T>(2.0 * rho_next / delta),
                               level.inverse_diagonal.data(), r, d, x);
        level.exchange(x);
        rho = rho_next;
    }
    return x;
}

template <typename T>
void MultigridHierarchy<T>::run_cycle(std::size_t l, const T* b, T* x, MultigridCycle cycle,
                                      std::vector<double>* seconds, bool x_zero) const {
    const KernelTable<T>& kernels = backend_->kernels<T>();
    Level& level = *levels_[l];
    // With `seconds`, each level's own work is timed between synchronisations.
    std::chrono::steady_clock::time_point start;
    const auto begin = [&] {
        if (seconds == nullptr) return;
        backend_->synchronize();
        start = std::chrono::steady_clock::now();
    };
    const auto end = [&] {
        if (seconds == nullptr) return;
        backend_->synchronize();
        (*seconds)[l] +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    begin();
    if (level.gathered) {
        // Over ranks, the level gathered whole (b and x are its vectors): each rank's b (and
        // on the finest level x, unless it is zero everywhere) to every rank, then one
        // process's cycle of the rest.
        // Over a process grid each rank's part comes from its window (b and x).
        if (level.box_gather) {
            level.box_gather->gather(b, level.b);
            if (l == 0 && !x_zero) level.box_gather->gather(x, level.x);
        } else {
            level.gather->gather(level.b);
            if (l == 0 && !x_zero) level.gather->gather(level.x);
        }
        // The cycle asked for (an F-cycle visits with F, then V): the gathered hierarchy's
        // own, recorded, where it is that kind.
        if (cycle == level.gathered->parameters_.cycle && seconds == nullptr) {
            level.gathered->cycle(level.b, level.x);
        } else {
            level.gathered->run_cycle(0, level.b.data(), level.x.data(), cycle, nullptr);
        }
        if (level.box_gather) level.box_gather->window_of(level.x, x);
        end();
        return;
    }
    if (l + 1 == levels_.size()) {
        kernels.dense_spmv(*backend_, level.inverse_view, b, x);
        end();
        return;
    }
    Level& next = *levels_[l + 1];
    // The next level's vectors the transfer reaches: over a process grid, where the next level
    // is gathered, the coarse window (the gather takes the part from it and gives it back).
    T* next_b = level.coarse_b.size() > 0 ? level.coarse_b.data() : next.b.data();
    T* next_x = level.coarse_x.size() > 0 ? level.coarse_x.data() : next.x.data();
    const auto visit = [&](MultigridCycle kind) {
        run_cycle(l + 1, next_b, next_x, kind, seconds);
    };
    const auto visit_cycle = [&] {
        switch (cycle) {
            case MultigridCycle::automatic:  // (resolved by the constructor)
            case MultigridCycle::v:
                visit(MultigridCycle::v);
                break;
            case MultigridCycle::w:
                visit(MultigridCycle::w);
                visit(MultigridCycle::w);
                break;
            case MultigridCycle::f:
                visit(MultigridCycle::f);
                visit(MultigridCycle::v);
                break;
        }
    };
    if (!level.holds) {
        // Over ranks, a level this rank holds none of: the levels below, for their collectives
        // (a gathered level), as often as the cycle visits them.
        end();
        visit_cycle();
        return;
    }
    // The iterate moves between x and the level's swept vector as the sweeps write (where they
    // write into another vector); it ends in x.
    T* spare = level.swept.size() > 0 ? level.swept.data() : x;
    T* current = smooth(level, b, x, spare, parameters_.pre_sweeps, true);
    spare = current == x ? spare : x;
    T* r = level.r.data();
    kernels.dia_residual(*backend_, level.a->view(), b, current, r);
    level.exchange(r);
    // The coarse points the transfer reaches: in the next level's vectors, or where the next
    // level is split over fewer ranks, in the handoff's window (moved to and from them).
    T* coarse_b = level.handoff ? level.handoff->window() : next_b + level.coarse_offset;
    kernels.box_restrict(*backend_, level.transfer, r, coarse_b);
    if (level.handoff) level.handoff->hand_down(next.b.data() + next.own_offset);
    if (next.x.size() > 0) kernels.fill(*backend_, next.x.size(), T(0), next.x.data());
    end();
    visit_cycle();
    begin();
    const T* coarse_x = next_x + level.coarse_offset;
    if (level.handoff) {
        level.handoff->take_up(next.x.data() + next.own_offset);
        coarse_x = level.handoff->window();
    }
    kernels.box_interpolate_add(*backend_, level.transfer, coarse_x, current);
    level.exchange(current);
    // Backward for a symmetric cycle; forward again otherwise (about 4 times the contraction of
    // the symmetric order for the 5-point Laplacian: 0.06 against 0.24 per V(1,1) cycle).
    current = smooth(level, b, current, spare, parameters_.post_sweeps, !parameters_.symmetric);
    if (current != x) {  // an odd number of sweeps in all
        backend_->copy(x, current, static_cast<std::size_t>(level.box.size()) * sizeof(T));
    }
    end();
}

// Level l's traffic and that of the levels below as the cycle visits them (as run_cycle does).
template <typename T>
double MultigridHierarchy<T>::level_bytes(std::size_t l, MultigridCycle cycle) const {
    const Level& level = *levels_[l];
    if (level.gathered) return level.gathered->bytes_per_cycle();
    const auto value = static_cast<double>(sizeof(T));
    const double n = static_cast<double>(level.box.size());
    if (l + 1 == levels_.size()) {  // y = A^-1 b, dense: n^2 values, b read, x written
        return (n * n + 2 * n) * value;
    }
    // The levels below, as the cycle visits them.
    const auto below = [&] {
        switch (cycle) {
            case MultigridCycle::automatic:  // (resolved by the constructor)
            case MultigridCycle::v:
                return level_bytes(l + 1, MultigridCycle::v);
            case MultigridCycle::w:
                return 2 * level_bytes(l + 1, MultigridCycle::w);
            case MultigridCycle::f:
                return level_bytes(l + 1, MultigridCycle::f) +
                       level_bytes(l + 1, MultigridCycle::v);
        }
        return 0.0;
    };
    if (!level.holds) return below();  // over ranks, a level this rank holds none of
    const DiaView<T> a = level.a->view();
    // One pass over the matrix: a mask or class byte per row, or its diagonals.
    const double matrix =
        a.row_masks != nullptr || a.row_classes != nullptr ? n : n * a.num_diagonals * value;
    // The coarse points the transfer reaches (in the handoff's window where the next level is
    // split over fewer ranks).
    const double coarse = static_cast<double>(
        level.handoff               ? level.handoff->window_points()
        : level.coarse_b.size() > 0 ? level.coarse_b.size()
                                    : static_cast<std::size_t>(levels_[l + 1]->box.size()));
    // The weights of the coarse points, or a class byte each.
    const double weights = level.transfer.weight_class != nullptr
                               ? coarse
                               : coarse * multigrid::transfer_slots(level.box.dimension) * value;
    // A sweep (all colours) or a Chebyshev step: the matrix, b and x read, x written (the
    // Chebyshev step adds its residual pass and its direction: 4n reads, 2n writes).
    const double sweep = parameters_.smoother == MultigridSmoother::red_black_gauss_seidel
                             ? matrix + 3 * n * value
                             : (matrix + 3 * n * value) + 6 * n * value;
    const double own =
        (parameters_.pre_sweeps + parameters_.post_sweeps) * sweep +
        (matrix + 3 * n * value)                      // r = b - A x
        + (n * value + coarse * value + weights)      // restrict
        + coarse * value                              // the coarse x set to 0
        + (2 * n * value + coarse * value + weights)  // x += P x_coarse
        // the iterate copied back to x after an odd number of swept sweeps
        + (level.swept.size() > 0 && (parameters_.pre_sweeps + parameters_.post_sweeps) % 2 == 1
               ? 2 * n * value
               : 0.0);
    return own + below();
}

template <typename T>
double MultigridHierarchy<T>::bytes_per_cycle() const {
    return level_bytes(0, parameters_.cycle);
}

template <typename T>
std::vector<double> MultigridHierarchy<T>::time_levels(const Array<T>& b, Array<T>& x,
                                                       int cycles) const {
    check_sizes(b, x);
    std::vector<double> seconds(levels_.size(), 0.0);
    for (int c = 0; c < cycles; ++c) {
        if (split()) {
            run_split(b, x, &seconds);
        } else {
            run_cycle(0, b.data(), x.data(), parameters_.cycle, &seconds);
        }
    }
    for (double& s : seconds) s /= std::max(cycles, 1);
    return seconds;
}

template class MultigridHierarchy<float>;
template class MultigridHierarchy<double>;

}  // namespace simrun::solvers
