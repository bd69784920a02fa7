#include "multigrid/coarse_step.hpp"

#include <algorithm>
#include <cstdint>

#include "multigrid/backend_rows.hpp"
#include "multigrid/box_entries.hpp"
#include "multigrid/local_bases.hpp"
#include "simrun/solvers/distributed/partition.hpp"
#include "simrun/solvers/matrices/dia_matrix.hpp"

namespace simrun::solvers::multigrid {
namespace {

using Index = std::int64_t;

// The coarse point (in the coarse level's coordinates) of the first fine point at or after
// fine coordinate f along an axis (the coarse level's size past the last).
Index coarse_at_or_after(Index f, const AxisCoarsening& axis, Index coarse_points) {
    if (axis.step == 1) return f;
    const Index u = f - axis.first;
    return std::min(u <= 0 ? 0 : (u + 1) / 2, coarse_points);
}

}  // namespace

Box coarse_part(const Box& part, const BoxCoarsening& coarsening) {
    if (part.empty()) return no_points;
    Box coarse;
    for (std::size_t axis = 0; axis < 3; ++axis) {
        const Index n = coarsening.coarse.points[axis];
        coarse.lower[axis] = coarse_at_or_after(part.lower[axis], coarsening.axes[axis], n);
        coarse.upper[axis] = coarse_at_or_after(part.upper[axis], coarsening.axes[axis], n);
    }
    return coarse;
}

BoxCoarsening window_transfer(const BoxCoarsening& whole, const Box& window,
                              const Box& coarse_window, int dimension) {
    BoxCoarsening on = whole;
    on.coarse = coarse_window.shape(dimension);
    for (std::size_t axis = 0; axis < 3; ++axis) {
        AxisCoarsening& a = on.axes[axis];
        a.first =
            static_cast<int>(a.step == 2 ? whole.axes[axis].first + 2 * coarse_window.lower[axis] -
                                               window.lower[axis]
                                         : coarse_window.lower[axis] - window.lower[axis]);
    }
    return on;
}

CoarseStep coarse_transfer(const DiaData<double>& rows, const Box& region,
                           const BoxCoarsening& coarsening) {
    const int dimension = coarsening.coarse.dimension;
    CoarseStep step;
    step.coarse_region = coarse_part(region, coarsening);
    step.transfer = window_transfer(coarsening, region, step.coarse_region, dimension);
    // P by the operator's weights.
    step.weights = operator_interpolation(rows, region.shape(dimension), step.transfer);
    return step;
}

DiaData<double> coarse_rows(const DiaData<double>& rows, const Box& region,
                            const CoarseStep& step) {
    // P^T A P point by point.
    return galerkin_operator(rows, region.shape(step.transfer.coarse.dimension), step.transfer,
                             step.weights);
}

CoarseStep coarse_step(const DiaData<double>& rows, const Box& region,
                       const BoxCoarsening& coarsening) {
    CoarseStep step = coarse_transfer(rows, region, coarsening);
    step.coarse = coarse_rows(rows, region, step);
    return step;
}

CoarseStep coarse_step(const std::shared_ptr<const Backend>& backend, const DiaData<double>& rows,
                       const Box& region, const BoxCoarsening& coarsening) {
    const int dimension = coarsening.coarse.dimension;
    const GridBox shape = region.shape(dimension);
    const DiagonalSteps steps(rows, shape);
    CoarseStep step;
    step.coarse_region = coarse_part(region, coarsening);
    if (!steps.decoded || rows.num_diagonals() > max_dia_diagonals || step.coarse_region.empty()) {
        return coarse_step(rows, region, coarsening);
    }
    step.transfer = window_transfer(coarsening, region, step.coarse_region, dimension);
    const DiaMatrix<double> on_backend(backend, rows, DiaStorage::general);
    const Array<double> weights =
        collapsed_weights_final(rows, steps, shape)
            ? collapsed_weights(backend, on_backend.view(), steps, shape, step.transfer)
            : Array<double>::from_host(backend, operator_interpolation(rows, shape, step.transfer));
    BackendRows coarse =
        galerkin_rows(backend, on_backend.view(), steps, shape, step.transfer, weights);
    step.weights = weights.to_host();
    step.coarse = DiaData<double>{coarse.n, std::move(coarse.offsets), coarse.values.to_host()};
    return step;
}

}  // namespace simrun::solvers::multigrid
