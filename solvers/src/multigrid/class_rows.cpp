#include "multigrid/class_rows.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "simrun/solvers/multigrid/multigrid_setup_error.hpp"

namespace simrun::solvers::multigrid {

DiaData<double> ClassRows::class_table() const {
    DiaData<double> rows;
    rows.n = static_cast<std::int64_t>(classes());
    rows.offsets = offsets;
    rows.values.resize(table.size());
    const auto diagonals = offsets.size();
    for (std::size_t c = 0; c < classes(); ++c) {
        for (std::size_t d = 0; d < diagonals; ++d) {
            rows.values[d * classes() + c] = table[c * diagonals + d];
        }
    }
    return rows;
}

DiaData<double> ClassRows::expanded() const {
    DiaData<double> rows;
    rows.n = n;
    rows.offsets = offsets;
    rows.values.resize(offsets.size() * static_cast<std::size_t>(n));
    for (int d = 0; d < num_diagonals(); ++d) {
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < n; ++i) rows.at(d, i) = at(d, i);
    }
    return rows;
}

double gershgorin_of_classes(const ClassRows& rows, const GridBox& box, std::size_t level) {
    const auto main = std::find(rows.offsets.begin(), rows.offsets.end(), 0);
    const auto diagonals = rows.offsets.size();
    std::vector<bool> bad(rows.classes(), false);
    double bound = 0;
    for (std::size_t c = 0; c < rows.classes(); ++c) {
        const double* row = rows.table.data() + c * diagonals;
        const double diagonal = main != rows.offsets.end() ? row[main - rows.offsets.begin()] : 0.0;
        double sum = 0;  // the entries outside the level are zero
        for (std::size_t d = 0; d < diagonals; ++d) sum += std::abs(row[d]);
        if (!(diagonal > 0) || !std::isfinite(diagonal)) {
            bad[c] = true;
            continue;
        }
        bound = std::max(bound, sum / diagonal);
    }
    if (std::find(bad.begin(), bad.end(), true) == bad.end()) return bound;
    for (std::int64_t i = 0; i < rows.n; ++i) {
        if (!bad[rows.of_row[static_cast<std::size_t>(i)]]) continue;
        const int d =
            main != rows.offsets.end() ? static_cast<int>(main - rows.offsets.begin()) : -1;
        throw_nonpositive_diagonal(level, box, i, d >= 0 ? rows.at(d, i) : 0.0);
    }
    return bound;
}

void throw_nonpositive_diagonal(std::size_t level, const GridBox& box, std::int64_t row,
                                double value) {
    const auto c = box.coordinates(row);
    const std::string message =
        "multigrid: level " + std::to_string(level) + " (" + box.describe() + ") row " +
        std::to_string(row) + " at (" + std::to_string(c[0]) + ", " + std::to_string(c[1]) + ", " +
        std::to_string(c[2]) + ") has diagonal entry " + std::to_string(value) +
        "; the smoothers need positive diagonal entries";
    // The given matrix's own diagonal is the input's; a coarse level's is the set-up's.
    if (level == 0) throw std::invalid_argument(message);
    throw MultigridSetupError(message);
}

}  // namespace simrun::solvers::multigrid
