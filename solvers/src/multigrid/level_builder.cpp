#include "multigrid/level_builder.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "multigrid/host_values.hpp"
#include "simrun/solvers/base/vector_ops.hpp"
#include "simrun/solvers/multigrid/multigrid_setup_error.hpp"

namespace simrun::solvers::multigrid {
namespace {

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

// The level's operator: `finest`'s on the finest level, else made from its rows in T.
template <typename T>
void set_operator(const std::shared_ptr<const Backend>& backend, Level<T>& level,
                  const DiaData<double>& rows, std::size_t index, FinestOperator<T>& finest) {
    if (index == 0 && finest.given != nullptr) {
        level.a = finest.given;
        return;
    }
    if (index == 0 && finest.owned) {
        level.owned_a = std::move(finest.owned);
        level.a = level.owned_a.get();
        return;
    }
    DiaData<T> converted;
    const DiaData<T>* in_t = nullptr;
    if constexpr (std::is_same_v<T, double>) {
        in_t = &rows;
    } else {
        converted = convert_dia<T>(rows);
        in_t = &converted;
    }
    // The finest level in the storage of the solver's operator (its plan's format), where its
    // window takes it; the others as one process's.
    if (index == 0 && finest.storage) {
        try {
            level.owned_a = std::make_unique<DiaMatrix<T>>(backend, *in_t, *finest.storage);
        } catch (const std::invalid_argument&) {
        }
    }
    if (!level.owned_a) level.owned_a = make_level_operator(backend, *in_t);
    level.a = level.owned_a.get();
}

// The level's transfer to the next: its weights on the back-end (or their classes) and the
// view the transfer kernels take.
template <typename T>
void set_transfer(const std::shared_ptr<const Backend>& backend, Level<T>& level,
                  const std::vector<double>& weights, const BoxCoarsening& coarsening) {
    LevelTransfer<T>& transfer = level.transfer;
    BoxTransferView<T>& t = transfer.view;
    if (auto classes = weight_classes(weights, coarsening.coarse.size(),
                                      transfer_slots(level.box.dimension))) {
        transfer.weight_class = Array<std::uint8_t>::from_host(backend, classes->of_point);
        transfer.class_weights = upload<T>(backend, classes->table);
        t.weight_class = transfer.weight_class.data();
        t.class_weights = transfer.class_weights.data();
    } else {
        transfer.weights = upload<T>(backend, weights);
    }
    t.fine = level.shape;
    t.coarse = shape_of(coarsening.coarse);
    for (std::size_t axis = 0; axis < 3; ++axis) {
        t.step[axis] = coarsening.axes[axis].step;
        t.first[axis] = coarsening.axes[axis].first;
    }
    t.weights = transfer.weights.size() > 0 ? transfer.weights.data() : nullptr;
}

}  // namespace

BoxShape shape_of(const GridBox& box) {
    return {box.dimension, {box.points[0], box.points[1], box.points[2]}};
}

template <typename T>
void make_level(const std::shared_ptr<const Backend>& backend, const SmootherKind<T>& smoother,
                Level<T>& level, LevelRows& rows, std::size_t index, FinestOperator<T>& finest,
                const SmootherSetup& setup, bool coarse_vectors) {
    std::vector<double> inverse_diagonal;
    level.spectrum_bound = gershgorin_of_scaled(rows.rows, inverse_diagonal, level.box, index);
    set_operator(backend, level, rows.rows, index, finest);
    level.main = rows.rows.find_diagonal(0);
    const auto n = static_cast<std::size_t>(level.box.size());
    level.r = Array<T>(backend, n);
    if (coarse_vectors) {
        level.b = Array<T>(backend, n);
        level.x = Array<T>(backend, n);
    }
    // Zeroed once over ranks: halo points no kernel writes before the exchange (the finest
    // b's, a coarse b's beyond the restriction's reach) are read by the halo rows' sweeps.
    if (setup.zeroed) {
        for (Array<T>* v : {&level.r, &level.b, &level.x}) fill(*v, T(0));
    }
    level.smoother = smoother.make(backend, level, inverse_diagonal, setup);
    set_transfer(backend, level, rows.weights, rows.coarsening);
}

template <typename T>
std::unique_ptr<DiaMatrix<T>> make_level_operator(const std::shared_ptr<const Backend>& backend,
                                                  const DiaData<T>& a) {
    // Constant coefficients (the fine level of a constant-coefficient grid problem) keep the
    // stencil storage: a mask byte per row instead of the diagonals' values; few kinds of rows
    // (the Galerkin levels of such a problem: inner rows, sides, corners) a class byte per row.
    for (const DiaStorage storage : {DiaStorage::stencil, DiaStorage::classes}) {
        try {
            return std::make_unique<DiaMatrix<T>>(backend, a, storage);
        } catch (const std::invalid_argument&) {
        }
    }
    return std::make_unique<DiaMatrix<T>>(backend, a, DiaStorage::general);
}

#define SIMRUN_LEVEL_BUILDER(T)                                                             \
    template void make_level(const std::shared_ptr<const Backend>&, const SmootherKind<T>&, \
                             Level<T>&, LevelRows&, std::size_t, FinestOperator<T>&,        \
                             const SmootherSetup&, bool);                                   \
    template std::unique_ptr<DiaMatrix<T>> make_level_operator(                             \
        const std::shared_ptr<const Backend>&, const DiaData<T>&);
SIMRUN_LEVEL_BUILDER(float)
SIMRUN_LEVEL_BUILDER(double)
#undef SIMRUN_LEVEL_BUILDER

}  // namespace simrun::solvers::multigrid
