// CusparseCg through the baseline module (baseline_module.hpp): the system goes to the module's
// C table on the CUDA back-end's stream, and the module's failures come back as CudaError.
#include "baseline_cg.hpp"

#include <string>

#include "baseline_module.hpp"
#include "simrun/solvers/base/cuda_interop.hpp"
#include "simrun/solvers/base/errors.hpp"

namespace simrun::solvers {

template <typename T>
struct CusparseCg<T>::State {
    std::shared_ptr<const Backend> backend;  // keeps the stream alive while the system is
    const SimrunBaselineTable* table = nullptr;
    SimrunBaselineSystem* system = nullptr;

    ~State() {
        if (system != nullptr) table->destroy(system);
    }
};

template <typename T>
CusparseCg<T>::CusparseCg(std::shared_ptr<const Backend> backend, const CsrData<T>& a,
                          std::span<const T> b)
    : state_(std::make_unique<State>()) {
    if (!backend || backend->kind() != BackendKind::cuda) {
        throw std::invalid_argument("the cuSPARSE CG baseline needs a CUDA back-end");
    }
    if (a.rows != a.cols || static_cast<std::size_t>(a.rows) != b.size()) {
        throw std::invalid_argument("cuSPARSE CG baseline: the matrix is " +
                                    std::to_string(a.rows) + " x " + std::to_string(a.cols) +
                                    ", the right-hand side has " + std::to_string(b.size()) +
                                    " entries");
    }
    State& s = *state_;
    s.table = app::baseline_module().table;
    s.backend = std::move(backend);
    char error[512] = "";
    if (s.table->create(cuda_stream(*s.backend), static_cast<int>(sizeof(T)), a.rows,
                        a.row_ptr.data(), a.col.data(), a.values.data(), b.data(), &s.system, error,
                        sizeof error) != 0) {
        throw CudaError("cuSPARSE CG baseline: " + std::string(error));
    }
}

template <typename T>
CusparseCg<T>::~CusparseCg() = default;

template <typename T>
BaselineResult CusparseCg<T>::solve(std::int64_t iterations, double rtol) const {
    SimrunBaselineOutcome outcome{};
    char error[512] = "";
    if (state_->table->solve(state_->system, iterations, rtol, &outcome, error, sizeof error) !=
        0) {
        throw CudaError("cuSPARSE CG baseline: " + std::string(error));
    }
    return {outcome.iterations, outcome.seconds, outcome.relative_residual};
}

template <typename T>
BaselineResult run_cusparse_cg(const CsrData<T>& a, std::span<const T> b, std::int64_t iterations,
                               double rtol) {
    const CusparseCg<T> cg(make_cuda_backend(0), a, b);
    return cg.solve(iterations, rtol);
}

template class CusparseCg<float>;
template class CusparseCg<double>;
template BaselineResult run_cusparse_cg(const CsrData<float>&, std::span<const float>, std::int64_t,
                                        double);
template BaselineResult run_cusparse_cg(const CsrData<double>&, std::span<const double>,
                                        std::int64_t, double);

}  // namespace simrun::solvers
