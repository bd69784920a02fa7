// The benchmark's CUDA support: the cusparse/cuBLAS CG baseline (baseline_cg.hpp) and the
// cudaEvent clock of DeviceTimer (device_timer.hpp), both compiled into the benchmark's own target
// (app/CMakeLists.txt), the only one that links cuSPARSE and cuBLAS; they reach the back-end's
// stream and memory through the solver layer's public interop (cuda_interop.hpp).
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "baseline_cg.hpp"
#include "device_timer.hpp"
#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/cuda_interop.hpp"
#include "simrun/solvers/base/errors.hpp"

// SIMRUN_LIBRARY_CHECK(call, status type, success, message of a status): throws CudaError naming
// the call, the place and the library's message where `call` does not return `success`.
#define SIMRUN_LIBRARY_CHECK(call, Status, success, message)                                   \
    do {                                                                                       \
        const Status simrun_library_status = (call);                                           \
        if (simrun_library_status != (success)) {                                              \
            throw ::simrun::solvers::CudaError(std::string(#call) + " failed at " + __FILE__ + \
                                               ":" + std::to_string(__LINE__) + ": " +         \
                                               message(simrun_library_status));                \
        }                                                                                      \
    } while (0)
#define SIMRUN_CUDART_CHECK(call) \
    SIMRUN_LIBRARY_CHECK(call, cudaError_t, cudaSuccess, cudaGetErrorString)
#define SIMRUN_CUSPARSE_CHECK(call) \
    SIMRUN_LIBRARY_CHECK(call, cusparseStatus_t, CUSPARSE_STATUS_SUCCESS, cusparseGetErrorString)
#define SIMRUN_CUBLAS_CHECK(call) \
    SIMRUN_LIBRARY_CHECK(call, cublasStatus_t, CUBLAS_STATUS_SUCCESS, cublasGetStatusString)

namespace simrun::solvers {

// ---- DeviceTimer's CUDA clock ----
namespace {

class CudaEventClock final : public DeviceTimer::Clock {
public:
    explicit CudaEventClock(const Backend& backend) : stream_(cuda_stream(backend)) {
        SIMRUN_CUDART_CHECK(cudaEventCreate(&begin_));
        SIMRUN_CUDART_CHECK(cudaEventCreate(&end_));
    }
    ~CudaEventClock() override {
        // Errors at teardown cannot be reported.
        cudaEventDestroy(end_);
        cudaEventDestroy(begin_);
    }
    CudaEventClock(const CudaEventClock&) = delete;
    CudaEventClock& operator=(const CudaEventClock&) = delete;

    void start() override { SIMRUN_CUDART_CHECK(cudaEventRecord(begin_, stream_)); }
    double stop_seconds() override {
        SIMRUN_CUDART_CHECK(cudaEventRecord(end_, stream_));
        SIMRUN_CUDART_CHECK(cudaEventSynchronize(end_));
        float milliseconds = 0.0f;
        SIMRUN_CUDART_CHECK(cudaEventElapsedTime(&milliseconds, begin_, end_));
        return 1e-3 * static_cast<double>(milliseconds);
    }

private:
    cudaStream_t stream_;
    cudaEvent_t begin_ = nullptr;
    cudaEvent_t end_ = nullptr;
};

}  // namespace

namespace detail {

std::unique_ptr<DeviceTimer::Clock> make_cuda_event_clock(const Backend& backend) {
    if (backend.kind() != BackendKind::cuda) {
        throw std::invalid_argument("make_cuda_event_clock: the back-end is not CUDA");
    }
    return std::make_unique<CudaEventClock>(backend);
}

}  // namespace detail

// ---- the cuSPARSE/cuBLAS baseline ----
namespace {

template <typename T>
constexpr cudaDataType value_type();
template <>
constexpr cudaDataType value_type<double>() {
    return CUDA_R_64F;
}
template <>
constexpr cudaDataType value_type<float>() {
    return CUDA_R_32F;
}

// The cuBLAS level-1 calls of each precision, as a user picks them by hand. Every scalar
// result comes back to host memory (CUBLAS_POINTER_MODE_HOST): the call waits for the stream.
// x'y. Traffic: 2 n s.
cublasStatus_t blas_dot(cublasHandle_t h, int n, const double* x, const double* y, double* r) {
    return cublasDdot(h, n, x, 1, y, 1, r);
}
cublasStatus_t blas_dot(cublasHandle_t h, int n, const float* x, const float* y, float* r) {
    return cublasSdot(h, n, x, 1, y, 1, r);
}
// ||x||. Traffic: n s.
cublasStatus_t blas_nrm2(cublasHandle_t h, int n, const double* x, double* r) {
    return cublasDnrm2(h, n, x, 1, r);
}
cublasStatus_t blas_nrm2(cublasHandle_t h, int n, const float* x, float* r) {
    return cublasSnrm2(h, n, x, 1, r);
}
// y = y + alpha x. Traffic: 2 n s reads, n s writes.
cublasStatus_t blas_axpy(cublasHandle_t h, int n, double alpha, const double* x, double* y) {
    return cublasDaxpy(h, n, &alpha, x, 1, y, 1);
}
cublasStatus_t blas_axpy(cublasHandle_t h, int n, float alpha, const float* x, float* y) {
    return cublasSaxpy(h, n, &alpha, x, 1, y, 1);
}
// x = alpha x. Traffic: n s reads, n s writes.
cublasStatus_t blas_scal(cublasHandle_t h, int n, double alpha, double* x) {
    return cublasDscal(h, n, &alpha, x, 1);
}
cublasStatus_t blas_scal(cublasHandle_t h, int n, float alpha, float* x) {
    return cublasSscal(h, n, &alpha, x, 1);
}

}  // namespace

template <typename T>
struct CusparseCg<T>::State {
    std::shared_ptr<const Backend> backend;
    cudaStream_t stream = nullptr;
    int n = 0;
    Array<std::int32_t> row_ptr, col;
    Array<T> values, b, x, r, p, q;
    Array<unsigned char> spmv_buffer;
    cusparseHandle_t sparse = nullptr;
    cublasHandle_t blas = nullptr;
    cusparseSpMatDescr_t matrix = nullptr;
    cusparseDnVecDescr_t x_vector = nullptr, p_vector = nullptr, q_vector = nullptr;
    std::unique_ptr<DeviceTimer> timer;

    ~State() {
        // Errors at teardown cannot be reported; the arrays free themselves after this.
        if (q_vector != nullptr) cusparseDestroyDnVec(q_vector);
        if (p_vector != nullptr) cusparseDestroyDnVec(p_vector);
        if (x_vector != nullptr) cusparseDestroyDnVec(x_vector);
        if (matrix != nullptr) cusparseDestroySpMat(matrix);
        if (blas != nullptr) cublasDestroy(blas);
        if (sparse != nullptr) cusparseDestroy(sparse);
    }

    // y = A v through the generic API. Traffic: nnz (s + 4) + 4 (n + 1) + v (n s, gathered)
    // + y (n s writes).
    void spmv(cusparseDnVecDescr_t v, cusparseDnVecDescr_t y) {
        const T one = 1, zero = 0;
        SIMRUN_CUSPARSE_CHECK(cusparseSpMV(sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matrix,
                                           v, &zero, y, value_type<T>(), CUSPARSE_SPMV_ALG_DEFAULT,
                                           spmv_buffer.data()));
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
    s.backend = std::move(backend);
    s.stream = cuda_stream(*s.backend);
    s.n = a.rows;
    const auto n = static_cast<std::size_t>(a.rows);
    s.row_ptr = Array<std::int32_t>::from_host(s.backend, a.row_ptr);
    s.col = Array<std::int32_t>::from_host(s.backend, a.col);
    s.values = Array<T>::from_host(s.backend, a.values);
    s.b = Array<T>::from_host(s.backend, b);
    for (Array<T>* v : {&s.x, &s.r, &s.p, &s.q}) *v = Array<T>(s.backend, n);

    SIMRUN_CUSPARSE_CHECK(cusparseCreate(&s.sparse));
    SIMRUN_CUSPARSE_CHECK(cusparseSetStream(s.sparse, s.stream));
    SIMRUN_CUBLAS_CHECK(cublasCreate(&s.blas));
    SIMRUN_CUBLAS_CHECK(cublasSetStream(s.blas, s.stream));
    SIMRUN_CUBLAS_CHECK(cublasSetPointerMode(s.blas, CUBLAS_POINTER_MODE_HOST));
    SIMRUN_CUSPARSE_CHECK(
        cusparseCreateCsr(&s.matrix, a.rows, a.cols, a.nnz(), cuda_pointer(s.row_ptr),
                          cuda_pointer(s.col), cuda_pointer(s.values), CUSPARSE_INDEX_32I,
                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, value_type<T>()));
    SIMRUN_CUSPARSE_CHECK(
        cusparseCreateDnVec(&s.x_vector, s.n, cuda_pointer(s.x), value_type<T>()));
    SIMRUN_CUSPARSE_CHECK(
        cusparseCreateDnVec(&s.p_vector, s.n, cuda_pointer(s.p), value_type<T>()));
    SIMRUN_CUSPARSE_CHECK(
        cusparseCreateDnVec(&s.q_vector, s.n, cuda_pointer(s.q), value_type<T>()));
    // One buffer serves every product (same matrix, same vector shapes).
    const T one = 1, zero = 0;
    std::size_t buffer_bytes = 0;
    SIMRUN_CUSPARSE_CHECK(cusparseSpMV_bufferSize(
        s.sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s.matrix, s.p_vector, &zero, s.q_vector,
        value_type<T>(), CUSPARSE_SPMV_ALG_DEFAULT, &buffer_bytes));
    s.spmv_buffer = Array<unsigned char>(s.backend, buffer_bytes > 0 ? buffer_bytes : 1);
    s.timer = std::make_unique<DeviceTimer>(*s.backend);
    s.backend->synchronize();
}

template <typename T>
CusparseCg<T>::~CusparseCg() = default;

template <typename T>
BaselineResult CusparseCg<T>::solve(std::int64_t iterations, double rtol) const {
    State& s = *state_;  // the vectors are scratch: solving changes no observable state
    const int n = s.n;
    const auto bytes = static_cast<std::size_t>(n) * sizeof(T);
    const T* b = cuda_pointer(s.b);
    T* x = cuda_pointer(s.x);
    T* r = cuda_pointer(s.r);
    T* p = cuda_pointer(s.p);
    T* q = cuda_pointer(s.q);
    // x = 0 before the clock starts (simrun's harness resets its x the same way). Traffic: n s.
    SIMRUN_CUDART_CHECK(cudaMemsetAsync(x, 0, bytes, s.stream));

    BaselineResult result;
    s.timer->start();
    // ||b||. Traffic: n s.
    T b_norm = 0;
    SIMRUN_CUBLAS_CHECK(blas_nrm2(s.blas, n, b, &b_norm));
    // r = b - A x: copy (2 n s), SpMV, axpy (3 n s).
    SIMRUN_CUDART_CHECK(cudaMemcpyAsync(r, b, bytes, cudaMemcpyDeviceToDevice, s.stream));
    s.spmv(s.x_vector, s.q_vector);
    SIMRUN_CUBLAS_CHECK(blas_axpy(s.blas, n, T(-1), q, r));
    // p = r (2 n s); rr = r'r (2 n s).
    SIMRUN_CUDART_CHECK(cudaMemcpyAsync(p, r, bytes, cudaMemcpyDeviceToDevice, s.stream));
    T rr = 0;
    SIMRUN_CUBLAS_CHECK(blas_dot(s.blas, n, r, r, &rr));
    const double target = rtol * static_cast<double>(b_norm);
    bool converged = std::sqrt(static_cast<double>(rr)) <= target;
    while (!converged && result.iterations < iterations) {
        // q = A p; alpha = r'r / p'q (2 n s)
        s.spmv(s.p_vector, s.q_vector);
        T pq = 0;
        SIMRUN_CUBLAS_CHECK(blas_dot(s.blas, n, p, q, &pq));
        const T alpha = rr / pq;
        // x = x + alpha p (3 n s); r = r - alpha q (3 n s); r'r (2 n s)
        SIMRUN_CUBLAS_CHECK(blas_axpy(s.blas, n, alpha, p, x));
        SIMRUN_CUBLAS_CHECK(blas_axpy(s.blas, n, -alpha, q, r));
        T rr_next = 0;
        SIMRUN_CUBLAS_CHECK(blas_dot(s.blas, n, r, r, &rr_next));
        ++result.iterations;
        converged = std::sqrt(static_cast<double>(rr_next)) <= target;
        if (!converged) {
            // p = r + beta p as scal (2 n s) then axpy (3 n s), beta = r'r (new) / r'r (old)
            SIMRUN_CUBLAS_CHECK(blas_scal(s.blas, n, rr_next / rr, p));
            SIMRUN_CUBLAS_CHECK(blas_axpy(s.blas, n, T(1), r, p));
        }
        rr = rr_next;
    }
    result.seconds = s.timer->stop_seconds();
    SIMRUN_CUDART_CHECK(cudaGetLastError());
    const double r_norm = std::sqrt(static_cast<double>(rr));
    result.relative_residual = b_norm > 0 ? r_norm / static_cast<double>(b_norm) : r_norm;
    return result;
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
