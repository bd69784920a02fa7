#include "simrun/solvers/methods/gmres.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "base/kernel_table.hpp"
#include "check_sizes.hpp"
#include "residual_monitor.hpp"
#include "simrun/solvers/base/vector_ops.hpp"

namespace simrun::solvers {

static_assert(max_gmres_restart + 1 <= max_krylov_vectors);

std::optional<std::string> find_restart_problem(std::int64_t restart) {
    if (restart >= 1 && restart <= max_gmres_restart) return std::nullopt;
    return "must be in [1, " + std::to_string(max_gmres_restart) + "], got " +
           std::to_string(restart);
}

template <typename T>
Gmres<T>::Gmres(const LinearOperator<T>& a, const Preconditioner<T>* m, MethodParameters parameters)
    : IterativeSolver<T>(parameters.criteria),
      a_(a),
      m_(m),
      parameters_(parameters),
      restart_(parameters.restart) {
    if (const auto problem = find_restart_problem(restart_)) {
        throw std::invalid_argument("gmres: the restart length " + *problem);
    }
    basis_.reserve(static_cast<std::size_t>(restart_) + 1);
    for (int j = 0; j <= restart_; ++j) basis_.emplace_back(a.backend(), a.size());
    if (m_ != nullptr) {
        z_ = Array<T>(a.backend(), a.size());
        correction_ = Array<T>(a.backend(), a.size());
    }
}

namespace {

// A plane rotation that zeroes b in (a, b): c a + s b = r, -s a + c b = 0.
struct Givens {
    double c = 1, s = 0;
    static Givens zeroing(double a, double b) {
        if (b == 0) return {1, 0};
        const double r = std::hypot(a, b);
        return {a / r, b / r};
    }
    void apply(double& a, double& b) const {
        const double t = c * a + s * b;
        b = -s * a + c * b;
        a = t;
    }
};

}  // namespace

// Per step: one preconditioner application and one product, one reduction of j + 2 sums (two
// where re-orthogonalisation is needed) and one pass combining j + 2 vectors: with DIA and no
// preconditioner about D n + 2 (j + 2) n values moved at step j.
template <typename T>
SolveResult Gmres<T>::iterate(const Array<T>& b, Array<T>& x) const {
    const std::size_t n = a_.size();
    check_system_sizes("GMRES", n, b, x);
    const Backend& backend = *a_.backend();
    const KernelTable<T>& k = backend.kernels<T>();
    const auto m = static_cast<std::size_t>(restart_);

    SolveResult result;
    ResidualMonitor monitor(this->criteria(), result, b, parameters_.compensated_dots);
    KrylovBasis<T> basis{};
    for (std::size_t j = 0; j <= m; ++j) basis.vectors[j] = basis_[j].data();
    // The Hessenberg matrix by columns (h[j][i], i <= j + 1), the rotations, and g = Q^T beta e1.
    std::vector<std::vector<double>> h(m, std::vector<double>(m + 1, 0.0));
    std::vector<Givens> rotations(m);
    std::vector<double> g(m + 1, 0.0);
    std::vector<T> sums(m + 2);
    KrylovCoefficients<T> c{};

    // r = b - A x into v_0 (the start every method shares).
    double beta = compute_residual(a_, b, x, basis_[0], parameters_.compensated_dots);
    if (monitor.stop_at(beta, 0)) return result;
    std::int64_t iteration = 0;
    for (;;) {
        // v_0 = r / beta
        k.basis_combine(backend, n, 0, basis, c, static_cast<T>(1.0 / beta), basis.vectors[0],
                        basis_[0].data());
        std::fill(g.begin(), g.end(), 0.0);
        g[0] = beta;
        std::size_t steps = 0;  // columns of this cycle
        bool stop = false;
        for (std::size_t j = 0; j < m; ++j) {
            // w = A M v_j, into v_{j+1}
            Array<T>& w = basis_[j + 1];
            if (m_ != nullptr) {
                m_->apply(basis_[j], z_);
                a_.apply(z_, w);
            } else {
                a_.apply(basis_[j], w);
            }
            // h = V^T w and w'w in one reduction; ||w - V h||^2 = w'w - h'h.
            const int count = static_cast<int>(j + 1);
            k.basis_dots(backend, n, count, basis, w.data(), sums.data());
            sum_over_ranks(backend, std::span<T>(sums.data(), static_cast<std::size_t>(count) + 1));
            std::vector<double>& column = h[j];
            double projected = 0;
            for (int i = 0; i < count; ++i) {
                column[static_cast<std::size_t>(i)] = static_cast<double>(sums[i]);
                projected +=
                    column[static_cast<std::size_t>(i)] * column[static_cast<std::size_t>(i)];
            }
            const double ww = static_cast<double>(sums[static_cast<std::size_t>(count)]);
            if (!std::isfinite(ww) || !std::isfinite(projected)) {
                monitor.breakdown(SolveStatus::non_finite, "h = V'A M v", ww, 0);
                return result;
            }
            double remaining = ww - projected;
            const T* source = w.data();
            if (!(remaining > 0.5 * ww)) {
                // More than half of w lay in the basis: subtract, and orthogonalise again.
                for (int i = 0; i < count; ++i) {
                    c.values[i] = static_cast<T>(-column[static_cast<std::size_t>(i)]);
                }
                k.basis_combine(backend, n, count, basis, c, T(1), w.data(), w.data());
                k.basis_dots(backend, n, count, basis, w.data(), sums.data());
                sum_over_ranks(backend,
                               std::span<T>(sums.data(), static_cast<std::size_t>(count) + 1));
                double again = 0;
                for (int i = 0; i < count; ++i) {
                    const double correction = static_cast<double>(sums[i]);
                    column[static_cast<std::size_t>(i)] += correction;
                    again += correction * correction;
                }
                remaining = static_cast<double>(sums[static_cast<std::size_t>(count)]) - again;
                // The second pass's coefficients alone remain to subtract.
                for (int i = 0; i < count; ++i) c.values[i] = static_cast<T>(-sums[i]);
            } else {
                for (int i = 0; i < count; ++i) {
                    c.values[i] = static_cast<T>(-column[static_cast<std::size_t>(i)]);
                }
            }
            // Below the rounding of the products, the new vector is noise: a happy breakdown
            // (the Krylov space holds the solution).
            const double scale = std::sqrt(std::max(ww, 0.0));
            const double norm = remaining > 0 ? std::sqrt(remaining) : 0.0;
            const bool happy = !(norm > 1e-14 * scale);
            column[j + 1] = happy ? 0.0 : norm;
            if (!happy) {
                // v_{j+1} = (w - V h) / h_{j+1,j}
                const double inverse = 1.0 / norm;
                for (int i = 0; i < count; ++i) {
                    c.values[i] = static_cast<T>(static_cast<double>(c.values[i]) * inverse);
                }
                k.basis_combine(backend, n, count, basis, c, static_cast<T>(inverse), source,
                                w.data());
            }
            // The new column's QR: the earlier rotations, then one that zeroes h_{j+1,j}.
            for (std::size_t i = 0; i < j; ++i) rotations[i].apply(column[i], column[i + 1]);
            rotations[j] = Givens::zeroing(column[j], column[j + 1]);
            rotations[j].apply(column[j], column[j + 1]);
            rotations[j].apply(g[j], g[j + 1]);
            steps = j + 1;
            ++iteration;
            if (monitor.stop_at(std::abs(g[j + 1]), iteration)) {
                stop = true;
                break;
            }
            if (happy || iteration >= this->criteria().max_iterations) break;
        }
        if (result.status == SolveStatus::non_finite) return result;
        // y = R^-1 g (back substitution on the rotated Hessenberg), x += M V y.
        std::vector<double> y(steps, 0.0);
        for (std::size_t i = steps; i-- > 0;) {
            double sum = g[i];
            for (std::size_t l = i + 1; l < steps; ++l) sum -= h[l][i] * y[l];
            y[i] = h[i][i] != 0.0 ? sum / h[i][i] : 0.0;
        }
        for (std::size_t i = 0; i < steps; ++i) c.values[i] = static_cast<T>(y[i]);
        if (m_ != nullptr) {
            k.basis_combine(backend, n, static_cast<int>(steps), basis, c, T(0), nullptr,
                            correction_.data());
            m_->apply(correction_, z_);
            axpy(T(1), z_, x);
        } else {
            k.basis_combine(backend, n, static_cast<int>(steps), basis, c, T(1), x.data(),
                            x.data());
        }
        if (stop) return result;
        if (iteration >= this->criteria().max_iterations) {
            result.status = SolveStatus::max_iterations;
            return result;
        }
        // The next cycle starts from b - A x recomputed, which stands for this iteration.
        beta = compute_residual(a_, b, x, basis_[0], parameters_.compensated_dots);
        if (monitor.revise(beta)) return result;
        if (beta == 0.0) {  // only with a zero tolerance: x solves the system exactly
            result.status = SolveStatus::converged;
            return result;
        }
    }
}

template class Gmres<float>;
template class Gmres<double>;

}  // namespace simrun::solvers
