#include "multigrid/level_builder.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "multigrid/class_rows.hpp"
#include "multigrid/host_values.hpp"
#include "simrun/solvers/base/vector_ops.hpp"
#include "simrun/solvers/multigrid/multigrid_setup_error.hpp"

namespace simrun::solvers::multigrid {
namespace {

// max_i sum_j |a_ij| / a_ii, checking that every a_ii is positive; 1 / a_ii into
// inverse_diagonal where with_inverse.
double gershgorin_of_scaled(const DiaData<double>& a, std::vector<double>& inverse_diagonal,
                            bool with_inverse, const GridBox& box, std::size_t level) {
    const int main = a.find_diagonal(0);
    if (with_inverse) inverse_diagonal.assign(static_cast<std::size_t>(a.n), 0.0);
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
        if (with_inverse) inverse_diagonal[static_cast<std::size_t>(i)] = 1.0 / diagonal;
        bound = std::max(bound, sum / diagonal);
    }
    if (first_bad < a.n) {
        throw_nonpositive_diagonal(level, box, first_bad, main >= 0 ? a.at(main, first_bad) : 0.0);
    }
    return bound;
}

// A level's operator from its row classes on the back-end (the table in T).
template <typename T>
void set_operator_from_classes(const std::shared_ptr<const Backend>& backend, Level<T>& level,
                               const BackendRows& rows) {
    const std::vector<T> table(rows.host.table.begin(), rows.host.table.end());
    level.owned_a =
        std::make_unique<DiaMatrix<T>>(backend, rows.n, rows.offsets, rows.classes.clone(), table);
    level.a = level.owned_a.get();
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

// The level's transfer to the next: its weights on the back-end (or their classes, found by the
// back-end where the weights are there) and the view the transfer kernels take.
template <typename T>
void set_transfer(const std::shared_ptr<const Backend>& backend, Level<T>& level,
                  const LevelRows& rows) {
    const BoxCoarsening& coarsening = rows.coarsening;
    LevelTransfer<T>& transfer = level.transfer;
    BoxTransferView<T>& t = transfer.view;
    const std::int64_t nc = coarsening.coarse.size();
    const int slots = transfer_slots(level.box.dimension);
    if (rows.weights_on_backend != nullptr) {
        const Array<double>& weights = *rows.weights_on_backend;
        Array<std::uint8_t> classes(backend, static_cast<std::size_t>(nc));
        std::vector<double> table;
        if (backend->kernels<double>().classify_points(*backend, weights.data(), nc, slots,
                                                       classes.data(), table)) {
            // The classes' rows max_transfer_slots apart, as the transfer kernels read them.
            std::vector<T> rows_apart(
                table.size() / static_cast<std::size_t>(slots) * max_transfer_slots, T(0));
            for (std::size_t k = 0; k < table.size(); ++k) {
                const std::size_t c = k / static_cast<std::size_t>(slots), s = k % slots;
                rows_apart[c * max_transfer_slots + s] = static_cast<T>(table[k]);
            }
            transfer.weight_class = std::move(classes);
            transfer.class_weights = Array<T>::from_host(backend, rows_apart);
        } else {
            transfer.weights = Array<T>(backend, weights.size());
            converted_on_backend(backend, weights, transfer.weights);
        }
    } else if (auto classes = weight_classes(*rows.weights, nc, slots)) {
        transfer.weight_class = Array<std::uint8_t>::from_host(backend, classes->of_point);
        transfer.class_weights = upload<T>(backend, classes->table);
    } else {
        transfer.weights = upload<T>(backend, *rows.weights);
    }
    if (transfer.weight_class.size() > 0) {
        t.weight_class = transfer.weight_class.data();
        t.class_weights = transfer.class_weights.data();
    }
    t.fine = level.shape;
    t.coarse = shape_of(coarsening.coarse);
    for (std::size_t axis = 0; axis < 3; ++axis) {
        t.step[axis] = coarsening.axes[axis].step;
        t.first[axis] = coarsening.axes[axis].first;
    }
    t.weights = transfer.weights.size() > 0 ? transfer.weights.data() : nullptr;
}

// 1 / a_ii on the back-end in T, where the smoother reads it: from the host's inverse
// diagonal, or by the back-end from its rows.
template <typename T>
Array<T> inverse_diagonal_on_backend(const std::shared_ptr<const Backend>& backend,
                                     const LevelRows& rows,
                                     const std::vector<double>& inverse_diagonal) {
    if (rows.rows_on_backend == nullptr) return upload<T>(backend, inverse_diagonal);
    const BackendRows& on = *rows.rows_on_backend;
    const auto main = std::find(on.offsets.begin(), on.offsets.end(), 0) - on.offsets.begin();
    Array<T> inverse(backend, static_cast<std::size_t>(on.n));
    backend->kernels<T>().dia_inverse_diagonal(*backend, on.view(), static_cast<int>(main),
                                               inverse.data());
    return inverse;
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
    // The bound from the rows' classes where the plan has them, else from the rows; the
    // operator from the host's rows (the caller's own on the finest level), else the classes.
    if (rows.rows_on_backend != nullptr) {
        level.spectrum_bound = gershgorin_of_classes(rows.rows_on_backend->host, level.box, index);
    } else {
        level.spectrum_bound = gershgorin_of_scaled(
            *rows.rows, inverse_diagonal, smoother.reads_inverse_diagonal, level.box, index);
    }
    if (rows.rows != nullptr) {
        set_operator(backend, level, *rows.rows, index, finest);
    } else {
        set_operator_from_classes(backend, level, *rows.rows_on_backend);
    }
    const std::vector<int>& offsets = level.a->offsets();
    level.main = static_cast<int>(std::find(offsets.begin(), offsets.end(), 0) - offsets.begin());
    if (level.main == static_cast<int>(offsets.size())) level.main = -1;
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
    level.smoother =
        smoother.make(backend, level,
                      smoother.reads_inverse_diagonal
                          ? inverse_diagonal_on_backend<T>(backend, rows, inverse_diagonal)
                          : Array<T>(),
                      setup);
    set_transfer(backend, level, rows);
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
