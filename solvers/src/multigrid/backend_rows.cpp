#include "multigrid/backend_rows.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/unified/row_products.hpp"
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

bool classify_rows(const std::shared_ptr<const Backend>& backend, BackendRows& rows,
                   bool keep_values) {
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
    if (!keep_values) rows.values = Array<double>();
    return true;
}

std::optional<BackendRows> rows_in_classes(const std::shared_ptr<const Backend>& backend,
                                           const DiaMatrix<double>& a) {
    const DiaView<double> view = a.view();
    if (view.row_masks == nullptr && view.row_classes == nullptr) return std::nullopt;
    const auto n = static_cast<std::size_t>(view.n);
    const auto diagonals = static_cast<std::size_t>(view.num_diagonals);
    BackendRows rows;
    rows.n = view.n;
    rows.offsets = a.offsets();
    rows.host.n = view.n;
    rows.host.offsets = rows.offsets;
    rows.host.of_row.resize(n);
    rows.classes = Array<std::uint8_t>(backend, n);
    if (view.row_classes != nullptr) {
        backend->copy_to_host(rows.host.of_row.data(), view.row_classes, n);
        backend->copy(rows.classes.data(), view.row_classes, n);
        const std::size_t classes = a.row_class_count();
        for (const std::uint8_t c : rows.host.of_row) {
            if (c >= classes) {
                throw std::invalid_argument("multigrid: a row of class " + std::to_string(c) +
                                            " where the matrix has " + std::to_string(classes));
            }
        }
        rows.host.table.resize(classes * diagonals);
        backend->copy_to_host(rows.host.table.data(), view.class_values,
                              rows.host.table.size() * sizeof(double));
    } else {
        // One class per mask present, numbered in the order of the masks.
        std::vector<std::uint8_t> masks(n);
        backend->copy_to_host(masks.data(), view.row_masks, n);
        std::array<bool, 256> present{};
        for (const std::uint8_t m : masks) present[m] = true;
        std::array<std::uint8_t, 256> class_of{};
        for (unsigned m = 0, c = 0; m < 256; ++m) {
            if (!present[m]) continue;
            class_of[m] = static_cast<std::uint8_t>(c++);
            for (std::size_t d = 0; d < diagonals; ++d) {
                rows.host.table.push_back(stencil_entry(view, m, static_cast<int>(d)));
            }
        }
        const auto count = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < count; ++i) {
            rows.host.of_row[static_cast<std::size_t>(i)] =
                class_of[masks[static_cast<std::size_t>(i)]];
        }
        rows.classes.copy_from_host(rows.host.of_row);
    }
    rows.class_values = Array<double>::from_host(backend, rows.host.table);
    return rows;
}

bool classes_along_axes(const ClassRows& rows, const DiagonalSteps& steps) {
    for (int d = 0; d < rows.num_diagonals(); ++d) {
        const Coordinates& s = steps.steps[static_cast<std::size_t>(d)];
        const int moves = (s[0] != 0) + (s[1] != 0) + (s[2] != 0);
        if (moves <= 1) continue;
        for (std::size_t c = 0; c < rows.classes(); ++c) {
            if (rows.table[c * rows.offsets.size() + static_cast<std::size_t>(d)] != 0.0) {
                return false;
            }
        }
    }
    return true;
}

}  // namespace simrun::solvers::multigrid
