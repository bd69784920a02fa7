// Chebyshev polynomials in D^-1 A (degree = sweeps) on [0.3, 1] times the level's Gershgorin
// bound of its largest eigenvalue.
#include <utility>
#include <vector>

#include "base/kernel_table.hpp"
#include "multigrid/host_values.hpp"
#include "multigrid/level.hpp"
#include "multigrid/smoother.hpp"
#include "simrun/solvers/base/vector_ops.hpp"

namespace simrun::solvers::multigrid {
namespace {

template <typename T>
class ChebyshevSmoother final : public Smoother<T> {
public:
    // `inverse_diagonal`: 1 / a_ii on the level's window; `d`: the direction, zeroed.
    ChebyshevSmoother(std::shared_ptr<const Backend> backend, Array<T> inverse_diagonal, Array<T> d)
        : backend_(std::move(backend)),
          inverse_diagonal_(std::move(inverse_diagonal)),
          d_(std::move(d)) {}

    // Chebyshev on [0.3 upper, upper] for D^-1 A: x += d_k with the three-term recurrence
    // d_k = rho_k rho_{k-1} d_{k-1} + (2 rho_k / delta) D^-1 r_k (Saad, Algorithm 12.1).
    T* smooth(Level<T>& level, const T* b, T* x, T*, int sweeps, bool) const override {
        const KernelTable<T>& kernels = backend_->kernels<T>();
        const DiaView<T> a = level.a->view();
        const double upper = level.spectrum_bound, lower = 0.3 * upper;
        const double theta = 0.5 * (upper + lower), delta = 0.5 * (upper - lower);
        const double sigma = theta / delta;
        double rho = 1.0 / sigma;
        const auto n = static_cast<std::size_t>(level.box.size());
        T* r = level.r.data();
        T* d = d_.data();
        for (int k = 0; k < sweeps; ++k) {
            kernels.dia_residual(*backend_, a, b, x, r);
            if (k == 0) {
                kernels.chebyshev_step(*backend_, n, T(0), static_cast<T>(1.0 / theta),
                                       inverse_diagonal_.data(), r, d, x);
                level.exchange(x);
                continue;
            }
            const double rho_next = 1.0 / (2.0 * sigma - rho);
            kernels.chebyshev_step(*backend_, n, static_cast<T>(rho_next * rho),
                                   static_cast<T>(2.0 * rho_next / delta), inverse_diagonal_.data(),
                                   r, d, x);
            level.exchange(x);
            rho = rho_next;
        }
        return x;
    }

    // A step: a sweep's matrix, b and x read, x written, and its residual pass and direction
    // (4n reads, 2n writes).
    double sweep_bytes(double matrix, double n, double value) const override {
        return (matrix + 3 * n * value) + 6 * n * value;
    }

private:
    std::shared_ptr<const Backend> backend_;
    Array<T> inverse_diagonal_;
    mutable Array<T> d_;
};

}  // namespace

template <typename T>
SmootherKind<T> chebyshev() {
    return {.words = "Chebyshev",
            .reads_inverse_diagonal = true,
            .make = [](std::shared_ptr<const Backend> backend, const Level<T>& level,
                       Array<T> inverse_diagonal, const SmootherSetup&) {
                Array<T> d(backend, static_cast<std::size_t>(level.box.size()));
                fill(d, T(0));
                return std::unique_ptr<Smoother<T>>(std::make_unique<ChebyshevSmoother<T>>(
                    backend, std::move(inverse_diagonal), std::move(d)));
            }};
}

template SmootherKind<float> chebyshev();
template SmootherKind<double> chebyshev();

}  // namespace simrun::solvers::multigrid
