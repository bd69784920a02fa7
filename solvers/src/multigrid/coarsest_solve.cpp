#include "multigrid/coarsest_solve.hpp"

#include <utility>

#include "base/kernel_table.hpp"
#include "multigrid/host_values.hpp"
#include "multigrid/level.hpp"

namespace simrun::solvers::multigrid {
namespace {

template <typename T>
class DenseSolve final : public CoarsestSolve<T> {
public:
    DenseSolve(std::shared_ptr<const Backend> backend, const CoarsestInverse& coarsest)
        : backend_(std::move(backend)), inverse_(upload<T>(backend_, coarsest.inverse.values)) {
        view_ = {coarsest.inverse.rows, coarsest.inverse.cols, inverse_.data()};
    }
    void solve(Level<T>&, const T* b, T* x, MultigridCycle, bool, bool) const override {
        backend_->kernels<T>().dense_spmv(*backend_, view_, b, x);
    }
    // y = A^-1 b, dense: n^2 values, b read, x written.
    double bytes(const Level<T>& level) const override {
        const double n = static_cast<double>(level.box.size());
        return (n * n + 2 * n) * static_cast<double>(sizeof(T));
    }

private:
    std::shared_ptr<const Backend> backend_;
    Array<T> inverse_;
    DenseView<T> view_{};
};

}  // namespace

template <typename T>
std::unique_ptr<CoarsestSolve<T>> dense_solve(std::shared_ptr<const Backend> backend,
                                              const CoarsestInverse& coarsest) {
    return std::make_unique<DenseSolve<T>>(std::move(backend), coarsest);
}

template std::unique_ptr<CoarsestSolve<float>> dense_solve(std::shared_ptr<const Backend>,
                                                           const CoarsestInverse&);
template std::unique_ptr<CoarsestSolve<double>> dense_solve(std::shared_ptr<const Backend>,
                                                            const CoarsestInverse&);

}  // namespace simrun::solvers::multigrid
