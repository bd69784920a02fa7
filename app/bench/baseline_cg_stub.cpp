// The benchmark's CUDA support in a build without nvcc: the cuSPARSE baseline and the cudaEvent
// clock report that CUDA was not compiled (no CUDA back-end can exist in such a build, so the
// harness never reaches them), and the program links everywhere.
#include "baseline_cg.hpp"
#include "device_timer.hpp"
#include "simrun/solvers/base/errors.hpp"

namespace simrun::solvers {

namespace detail {

std::unique_ptr<DeviceTimer::Clock> make_cuda_event_clock(const Backend&) {
    throw NotCompiled("CUDA");
}

}  // namespace detail

template <typename T>
struct CusparseCg<T>::State {};

template <typename T>
CusparseCg<T>::CusparseCg(std::shared_ptr<const Backend>, const CsrData<T>&, std::span<const T>) {
    throw NotCompiled("CUDA");
}

template <typename T>
CusparseCg<T>::~CusparseCg() = default;

template <typename T>
BaselineResult CusparseCg<T>::solve(std::int64_t, double) const {
    throw NotCompiled("CUDA");
}

template <typename T>
BaselineResult run_cusparse_cg(const CsrData<T>&, std::span<const T>, std::int64_t, double) {
    throw NotCompiled("CUDA");
}

template class CusparseCg<float>;
template class CusparseCg<double>;
template BaselineResult run_cusparse_cg(const CsrData<float>&, std::span<const float>, std::int64_t,
                                        double);
template BaselineResult run_cusparse_cg(const CsrData<double>&, std::span<const double>,
                                        std::int64_t, double);

}  // namespace simrun::solvers
