#pragma once
// Generated test systems (CSR, double) with known character, and a dense direct solve in long
// double as the independent reference.
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/matrices/coo_data.hpp"
#include "simrun/solvers/matrices/csr_data.hpp"

namespace simrun::testing {

struct TestSystem {
    std::string name;
    solvers::CsrData<double> a;
};

// Builds CSR from (i, j, v) triplets.
class TripletBuilder {
public:
    explicit TripletBuilder(std::int32_t n) { coo_.rows = coo_.cols = n; }
    void add(std::int32_t i, std::int32_t j, double v) {
        coo_.row.push_back(i);
        coo_.col.push_back(j);
        coo_.values.push_back(v);
    }
    solvers::CsrData<double> csr() const { return solvers::to_csr(coo_); }

private:
    solvers::CooData<double> coo_;
};

// -div(k grad u) on an m^d grid of interior nodes (Dirichlet), k = k(x, y, z) at faces.
// d = 2 or 3. k = 1 gives the 5-/7-point Laplacian.
template <typename K>
solvers::CsrData<double> diffusion_matrix(std::int32_t m, int d, K k) {
    const std::int32_t n = d == 2 ? m * m : m * m * m;
    TripletBuilder t(n);
    const double h = 1.0 / (m + 1);
    for (std::int32_t i = 0; i < n; ++i) {
        const std::int32_t c[3] = {i % m, (i / m) % m, d == 3 ? i / (m * m) : 0};
        const std::int32_t stride[3] = {1, m, m * m};
        double diagonal = 0;
        for (int a = 0; a < d; ++a) {
            for (int side : {-1, 1}) {
                double face[3] = {(c[0] + 1) * h, (c[1] + 1) * h, (c[2] + 1) * h};
                face[a] += 0.5 * side * h;
                const double w = k(face[0], face[1], face[2]);
                diagonal += w;
                const std::int32_t neighbour = c[a] + side;
                if (neighbour >= 0 && neighbour < m) t.add(i, i + side * stride[a], -w);
            }
        }
        t.add(i, i, diagonal);
    }
    return t.csr();
}

// -lap(u) + v . grad(u) (central differences, cell Peclet |v| h / 2 < 1: weakly dominant,
// nonsymmetric) on m x m interior nodes.
inline solvers::CsrData<double> convection_diffusion_matrix(std::int32_t m, double vx, double vy) {
    const std::int32_t n = m * m;
    const double h = 1.0 / (m + 1);
    TripletBuilder t(n);
    for (std::int32_t i = 0; i < n; ++i) {
        const std::int32_t x = i % m, y = i / m;
        t.add(i, i, 4.0);
        if (x > 0) t.add(i, i - 1, -1.0 - 0.5 * vx * h);
        if (x < m - 1) t.add(i, i + 1, -1.0 + 0.5 * vx * h);
        if (y > 0) t.add(i, i - m, -1.0 - 0.5 * vy * h);
        if (y < m - 1) t.add(i, i + m, -1.0 + 0.5 * vy * h);
    }
    return t.csr();
}

// -lap(u) + c (u_x + u_y) on m x m interior nodes, h = 1 / (m + 1), at cell Peclet number
// c h / 2 = peclet: first-order upwind differences (an M-matrix, weakly diagonally dominant,
// the rows beside the boundary strictly) or central ones (not dominant once peclet > 1).
inline solvers::CsrData<double> convection_matrix(std::int32_t m, double peclet, bool upwind) {
    const std::int32_t n = m * m;
    const double h = 1.0 / (m + 1), c = 2.0 * peclet / h;
    TripletBuilder t(n);
    for (std::int32_t i = 0; i < n; ++i) {
        const std::int32_t x = i % m, y = i / m;
        double centre = 4 / (h * h), low = -1 / (h * h), high = -1 / (h * h);
        if (upwind) {
            centre += 2 * c / h;
            low -= c / h;
        } else {
            low -= c / (2 * h);
            high += c / (2 * h);
        }
        t.add(i, i, centre);
        if (x > 0) t.add(i, i - 1, low);
        if (x < m - 1) t.add(i, i + 1, high);
        if (y > 0) t.add(i, i - m, low);
        if (y < m - 1) t.add(i, i + m, high);
    }
    return t.csr();
}

// Random sparse nonsymmetric matrix whose diagonal is twice its row's off-diagonal sum.
inline solvers::CsrData<double> strongly_dominant_matrix(std::int32_t n, std::uint32_t seed) {
    std::mt19937 generator(seed);
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    std::uniform_int_distribution<std::int32_t> column(0, n - 1);
    TripletBuilder t(n);
    for (std::int32_t i = 0; i < n; ++i) {
        double off = 0;
        for (int e = 0; e < 6; ++e) {
            const std::int32_t j = column(generator);
            if (j == i) continue;
            const double v = value(generator);
            t.add(i, j, v);
            off += std::abs(v);
        }
        t.add(i, i, 2.0 * off + 0.1);
    }
    return t.csr();
}

// The 2D Laplacian minus shift I: symmetric, indefinite when the shift lies inside the spectrum.
inline solvers::CsrData<double> shifted_laplacian(std::int32_t m, double shift) {
    auto a = diffusion_matrix(m, 2, [](double, double, double) { return 1.0; });
    for (std::int32_t i = 0; i < a.rows; ++i) {
        for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            if (a.col[k] == i) a.values[static_cast<std::size_t>(k)] -= shift;
        }
    }
    return a;
}

// The pure-Neumann 1D Laplacian (rows sum to zero): singular, null space = constants.
inline solvers::CsrData<double> singular_matrix(std::int32_t n) {
    TripletBuilder t(n);
    for (std::int32_t i = 0; i < n; ++i) {
        double diagonal = 0;
        if (i > 0) {
            t.add(i, i - 1, -1.0);
            diagonal += 1.0;
        }
        if (i < n - 1) {
            t.add(i, i + 1, -1.0);
            diagonal += 1.0;
        }
        t.add(i, i, diagonal);
    }
    return t.csr();
}

// y = A x in long double.
inline std::vector<double> multiply(const solvers::CsrData<double>& a,
                                    const std::vector<double>& x) {
    std::vector<double> y(static_cast<std::size_t>(a.rows));
    for (std::int32_t i = 0; i < a.rows; ++i) {
        long double sum = 0;
        for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            sum += static_cast<long double>(a.values[static_cast<std::size_t>(k)]) *
                   x[static_cast<std::size_t>(a.col[static_cast<std::size_t>(k)])];
        }
        y[static_cast<std::size_t>(i)] = static_cast<double>(sum);
    }
    return y;
}

// ||b - A x|| / ||b|| in long double.
inline double relative_residual(const solvers::CsrData<double>& a, const std::vector<double>& b,
                                const std::vector<double>& x) {
    const auto ax = multiply(a, x);
    long double r2 = 0, b2 = 0;
    for (std::size_t i = 0; i < b.size(); ++i) {
        r2 += (static_cast<long double>(b[i]) - ax[i]) * (static_cast<long double>(b[i]) - ax[i]);
        b2 += static_cast<long double>(b[i]) * b[i];
    }
    return static_cast<double>(std::sqrt(r2 / b2));
}

// Solves A x = b by Gaussian elimination with partial pivoting in long double (small n).
inline std::vector<double> dense_solve(const solvers::CsrData<double>& a,
                                       const std::vector<double>& b) {
    const auto n = static_cast<std::size_t>(a.rows);
    std::vector<long double> m(n * n, 0.0L), rhs(b.begin(), b.end());
    for (std::int32_t i = 0; i < a.rows; ++i) {
        for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            m[static_cast<std::size_t>(i) * n +
              static_cast<std::size_t>(a.col[static_cast<std::size_t>(k)])] +=
                a.values[static_cast<std::size_t>(k)];
        }
    }
    for (std::size_t c = 0; c < n; ++c) {
        std::size_t pivot = c;
        for (std::size_t r = c + 1; r < n; ++r) {
            if (std::abs(m[r * n + c]) > std::abs(m[pivot * n + c])) pivot = r;
        }
        if (m[pivot * n + c] == 0.0L) throw std::runtime_error("dense_solve: singular matrix");
        if (pivot != c) {
            for (std::size_t j = 0; j < n; ++j) std::swap(m[c * n + j], m[pivot * n + j]);
            std::swap(rhs[c], rhs[pivot]);
        }
        for (std::size_t r = c + 1; r < n; ++r) {
            const long double f = m[r * n + c] / m[c * n + c];
            if (f == 0.0L) continue;
            for (std::size_t j = c; j < n; ++j) m[r * n + j] -= f * m[c * n + j];
            rhs[r] -= f * rhs[c];
        }
    }
    std::vector<double> x(n);
    for (std::size_t c = n; c-- > 0;) {
        long double sum = rhs[c];
        for (std::size_t j = c + 1; j < n; ++j) sum -= m[c * n + j] * x[j];
        x[c] = static_cast<double>(sum / m[c * n + c]);
    }
    return x;
}

// The sides of a box problem (low x, high x, low y, high y, low z, high z).
enum class Side { dirichlet, neumann };

// -div(k grad u) + shift u on a box of nodes with spacings h per axis (x fastest). A Dirichlet
// side lies one spacing beyond the box (a known zero there: the coupling stays on the
// diagonal); a Neumann side closes the box with no flux (the coupling is left out). Node
// (i, j, k) sits at ((i + 1) h_x, ...); k is sampled at the faces between nodes. Symmetric.
template <typename K>
solvers::CsrData<double> box_diffusion_matrix(std::array<std::int32_t, 3> points, int dimension,
                                              std::array<double, 3> h, K k,
                                              std::array<Side, 6> sides, double shift = 0.0) {
    const std::int32_t n = points[0] * points[1] * points[2];
    const std::int32_t stride[3] = {1, points[0], points[0] * points[1]};
    TripletBuilder t(n);
    for (std::int32_t i = 0; i < n; ++i) {
        const std::int32_t c[3] = {i % points[0], (i / points[0]) % points[1],
                                   i / (points[0] * points[1])};
        double diagonal = shift;
        for (int a = 0; a < dimension; ++a) {
            for (int side : {-1, 1}) {
                double face[3] = {(c[0] + 1) * h[0], (c[1] + 1) * h[1], (c[2] + 1) * h[2]};
                face[a] += 0.5 * side * h[a];
                const double w = k(face[0], face[1], face[2]) / (h[a] * h[a]);
                const std::int32_t neighbour = c[a] + side;
                if (neighbour >= 0 && neighbour < points[a]) {
                    t.add(i, i + side * stride[a], -w);
                    diagonal += w;
                } else if (sides[static_cast<std::size_t>(2 * a + (side > 0 ? 1 : 0))] ==
                           Side::dirichlet) {
                    diagonal += w;
                }
            }
        }
        t.add(i, i, diagonal);
    }
    return t.csr();
}

}  // namespace simrun::testing
