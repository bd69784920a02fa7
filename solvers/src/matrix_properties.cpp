#include "simrun/solvers/matrix_properties.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace simrun::solvers {

template <typename T>
MatrixProperties analyze(const DiaData<T>& a, double symmetry_tolerance) {
    MatrixProperties p;
    p.rows = a.n;
    p.num_diagonals = a.num_diagonals();
    double largest = 0.0;
    for (T v : a.values) largest = std::max(largest, std::abs(static_cast<double>(v)));

    // Symmetry: the diagonal at offset k, row i, must equal the one at -k, row i + k.
    p.symmetric = true;
    for (int d = 0; d < a.num_diagonals() && p.symmetric; ++d) {
        const int offset = a.offsets[d];
        if (offset <= 0) continue;
        const int mirror = a.find_diagonal(-offset);
        for (std::int64_t i = 0; i + offset < a.n; ++i) {
            const double upper = a.at(d, i);
            const double lower = mirror >= 0 ? static_cast<double>(a.at(mirror, i + offset)) : 0.0;
            if (std::abs(upper - lower) > symmetry_tolerance * largest) {
                p.symmetric = false;
                break;
            }
        }
    }
    // A stored lower diagonal without an upper mirror must be zero for symmetry.
    for (int d = 0; d < a.num_diagonals() && p.symmetric; ++d) {
        if (a.offsets[d] >= 0 || a.find_diagonal(-a.offsets[d]) >= 0) continue;
        for (std::int64_t i = -a.offsets[d]; i < a.n; ++i) {
            if (std::abs(static_cast<double>(a.at(d, i))) > symmetry_tolerance * largest) {
                p.symmetric = false;
                break;
            }
        }
    }

    const int main = a.find_diagonal(0);
    p.positive_diagonal = main >= 0;
    p.weakly_dominant = true;
    p.strictly_dominant = true;
    p.worst_dominance_ratio = std::numeric_limits<double>::infinity();
    for (std::int64_t i = 0; i < a.n; ++i) {
        const double diagonal = main >= 0 ? static_cast<double>(a.at(main, i)) : 0.0;
        double off = 0.0;
        for (int d = 0; d < a.num_diagonals(); ++d) {
            const std::int64_t j = i + a.offsets[d];
            if (d != main && j >= 0 && j < a.n) off += std::abs(static_cast<double>(a.at(d, i)));
        }
        if (!(diagonal > 0.0)) p.positive_diagonal = false;
        if (std::abs(diagonal) < off) p.weakly_dominant = false;
        if (!(std::abs(diagonal) > off)) p.strictly_dominant = false;
        if (off > 0.0)
            p.worst_dominance_ratio = std::min(p.worst_dominance_ratio, std::abs(diagonal) / off);
    }
    return p;
}

template MatrixProperties analyze<float>(const DiaData<float>&, double);
template MatrixProperties analyze<double>(const DiaData<double>&, double);

}  // namespace simrun::solvers
