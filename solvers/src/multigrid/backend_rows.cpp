#include "multigrid/backend_rows.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "multigrid/galerkin_table.hpp"

namespace simrun::solvers::multigrid {

DiaView<double> BackendRows::view() const {
    if (offsets.size() > static_cast<std::size_t>(max_dia_diagonals)) {
        throw std::invalid_argument("multigrid: more than " + std::to_string(max_dia_diagonals) +
                                    " diagonals");
    }
    DiaView<double> view{};
    view.n = n;
    view.num_diagonals = static_cast<int>(offsets.size());
    std::copy(offsets.begin(), offsets.end(), view.offsets);
    if (classes.size() > 0) {
        view.row_classes = classes.data();
        view.class_values = class_values.data();
    } else {
        view.values = values.data();
    }
    return view;
}

Array<double> collapsed_weights(const std::shared_ptr<const Backend>& backend,
                                const DiaView<double>& rows, const DiagonalSteps& steps,
                                const GridBox& fine, const BoxCoarsening& coarsening) {
    Array<double> weights(backend, static_cast<std::size_t>(transfer_slots(fine.dimension) *
                                                            coarsening.coarse.size()));
    backend->kernels<double>().box_collapsed_weights(
        *backend, rows, steps.view(), transfer_view(fine, coarsening, nullptr), weights.data());
    return weights;
}

BackendRows galerkin_rows(const std::shared_ptr<const Backend>& backend,
                          const DiaView<double>& rows, const DiagonalSteps& steps,
                          const GridBox& fine, const BoxCoarsening& coarsening,
                          const Array<double>& weights) {
    // The table on the back-end: a few thousand entries.
    const GalerkinTableOnBackend table(backend, GalerkinTable(steps, fine, coarsening));
    GalerkinLayout layout;
    BackendRows coarse;
    coarse.n = coarsening.coarse.size();
    coarse.offsets = galerkin_layout(coarsening.coarse, layout);
    coarse.values =
        Array<double>(backend, coarse.offsets.size() * static_cast<std::size_t>(coarse.n));
    backend->kernels<double>().box_galerkin(*backend, rows, steps.view(),
                                            transfer_view(fine, coarsening, weights.data()),
                                            table.view(), layout, coarse.values.data());
    // The table's arrays go when this returns: the product must have read them.
    backend->synchronize();
    return coarse;
}

bool classify_rows(const std::shared_ptr<const Backend>& backend, BackendRows& rows) {
    const int diagonals = static_cast<int>(rows.offsets.size());
    Array<std::uint8_t> classes(backend, static_cast<std::size_t>(rows.n));
    std::vector<double> table;
    if (!backend->kernels<double>().classify_points(*backend, rows.values.data(), rows.n, diagonals,
                                                    classes.data(), table)) {
        return false;
    }
    rows.host.n = rows.n;
    rows.host.offsets = rows.offsets;
    rows.host.of_row = classes.to_host();
    rows.host.table = std::move(table);
    rows.class_values = Array<double>::from_host(backend, rows.host.table);
    rows.classes = std::move(classes);
    rows.values = Array<double>();
    return true;
}

}  // namespace simrun::solvers::multigrid
