#pragma once
// Measured properties of a matrix, from which a solver is chosen (solver_selection.hpp).
#include <cstdint>
#include <string>

#include "simrun/solvers/dia_data.hpp"

namespace simrun::solvers {

struct MatrixProperties {
    std::int64_t rows = 0;
    int num_diagonals = 0;
    bool symmetric = false;            // |a_ij - a_ji| <= tolerance * max |a| for all i, j
    bool positive_diagonal = false;    // every a_ii > 0
    bool weakly_dominant = false;      // |a_ii| >= sum_{j != i} |a_ij| in every row
    bool strictly_dominant = false;    // ... with strict inequality in every row
    double worst_dominance_ratio = 0;  // min_i |a_ii| / sum_{j != i} |a_ij| (inf when diagonal)
};

template <typename T>
MatrixProperties analyze(const DiaData<T>& matrix, double symmetry_tolerance = 1e-12);

}  // namespace simrun::solvers
