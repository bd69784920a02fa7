// The baseline module (libsimrun_bench_baseline.so): CG as users write it with the vendor
// libraries, behind the C table of baseline_module_abi.hpp. The only code of simrun that links
// cuSPARSE and cuBLAS; it links nothing of simrun and works on the caller's stream, so it runs
// in order with the CUDA back-end whose stream the benchmark passes (baseline_cg.hpp says what
// is computed and its traffic).
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "baseline_module_abi.hpp"

namespace {

// A failed library call: its text and place, and the library's message.
struct LibraryFailure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// SIMRUN_LIBRARY_CHECK(call, status type, success, message of a status): throws LibraryFailure
// naming the call, the place and the library's message where `call` does not return `success`.
#define SIMRUN_LIBRARY_CHECK(call, Status, success, message)                           \
    do {                                                                               \
        const Status simrun_library_status = (call);                                   \
        if (simrun_library_status != (success)) {                                      \
            throw LibraryFailure(std::string(#call) + " failed at " + __FILE__ + ":" + \
                                 std::to_string(__LINE__) + ": " +                     \
                                 message(simrun_library_status));                      \
        }                                                                              \
    } while (0)
#define SIMRUN_CUDART_CHECK(call) \
    SIMRUN_LIBRARY_CHECK(call, cudaError_t, cudaSuccess, cudaGetErrorString)
#define SIMRUN_CUSPARSE_CHECK(call) \
    SIMRUN_LIBRARY_CHECK(call, cusparseStatus_t, CUSPARSE_STATUS_SUCCESS, cusparseGetErrorString)
#define SIMRUN_CUBLAS_CHECK(call) \
    SIMRUN_LIBRARY_CHECK(call, cublasStatus_t, CUBLAS_STATUS_SUCCESS, cublasGetStatusString)

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

// The device memory of one system, freed in the destructor once the stream has done the work
// that uses it.
class DeviceBuffers {
public:
    explicit DeviceBuffers(cudaStream_t stream) : stream_(stream) {}
    ~DeviceBuffers() {
        // Errors at teardown cannot be reported.
        if (used_ > 0) cudaStreamSynchronize(stream_);
        for (int i = 0; i < used_; ++i) cudaFree(pointers_[i]);
    }
    DeviceBuffers(const DeviceBuffers&) = delete;
    DeviceBuffers& operator=(const DeviceBuffers&) = delete;

    template <typename T>
    T* allocate(std::size_t count) {
        if (used_ == capacity) {
            throw std::logic_error("more than " + std::to_string(capacity) +
                                   " device buffers asked of one system");
        }
        void* p = nullptr;
        SIMRUN_CUDART_CHECK(cudaMalloc(&p, count > 0 ? count * sizeof(T) : 1));
        pointers_[used_++] = p;
        return static_cast<T*>(p);
    }

private:
    static constexpr int capacity = 12;
    cudaStream_t stream_;
    void* pointers_[capacity] = {};
    int used_ = 0;
};

// The library objects of one system (handles, descriptors, events), each destroyed where it
// was made: a constructor that throws half-way leaves none behind.
struct LibraryObjects {
    LibraryObjects() = default;
    ~LibraryObjects() {
        // Errors at teardown cannot be reported.
        if (end != nullptr) cudaEventDestroy(end);
        if (begin != nullptr) cudaEventDestroy(begin);
        if (q_vector != nullptr) cusparseDestroyDnVec(q_vector);
        if (p_vector != nullptr) cusparseDestroyDnVec(p_vector);
        if (x_vector != nullptr) cusparseDestroyDnVec(x_vector);
        if (matrix != nullptr) cusparseDestroySpMat(matrix);
        if (blas != nullptr) cublasDestroy(blas);
        if (sparse != nullptr) cusparseDestroy(sparse);
    }
    LibraryObjects(const LibraryObjects&) = delete;
    LibraryObjects& operator=(const LibraryObjects&) = delete;

    cusparseHandle_t sparse = nullptr;
    cublasHandle_t blas = nullptr;
    cusparseSpMatDescr_t matrix = nullptr;
    cusparseDnVecDescr_t x_vector = nullptr, p_vector = nullptr, q_vector = nullptr;
    cudaEvent_t begin = nullptr, end = nullptr;
};

// The untyped system the C table hands out; Cg<T> below is its one implementation per value type.
class AnySystem {
public:
    virtual ~AnySystem() = default;
    virtual SimrunBaselineOutcome solve(std::int64_t iterations, double rtol) = 0;
};

template <typename T>
constexpr cudaDataType value_type() {
    return sizeof(T) == 8 ? CUDA_R_64F : CUDA_R_32F;
}

template <typename T>
class Cg final : public AnySystem {
public:
    Cg(cudaStream_t stream, int n, const std::int32_t* row_ptr, const std::int32_t* col,
       const T* values, const T* b);
    Cg(const Cg&) = delete;
    Cg& operator=(const Cg&) = delete;
    SimrunBaselineOutcome solve(std::int64_t iterations, double rtol) override;

private:
    // y = A v through the generic API. Traffic: nnz (s + 4) + 4 (n + 1) + v (n s, gathered)
    // + y (n s writes).
    void spmv(cusparseDnVecDescr_t v, cusparseDnVecDescr_t y) {
        const T one = 1, zero = 0;
        SIMRUN_CUSPARSE_CHECK(cusparseSpMV(objects_.sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                           objects_.matrix, v, &zero, y, value_type<T>(),
                                           CUSPARSE_SPMV_ALG_DEFAULT, spmv_buffer_));
    }
    void upload(void* to, const void* from, std::size_t bytes) {
        SIMRUN_CUDART_CHECK(cudaMemcpyAsync(to, from, bytes, cudaMemcpyHostToDevice, stream_));
    }

    cudaStream_t stream_;
    int n_;
    // Declared in this order so that the library objects go first, then the memory they use.
    DeviceBuffers memory_;
    LibraryObjects objects_;
    T *b_ = nullptr, *x_ = nullptr, *r_ = nullptr, *p_ = nullptr, *q_ = nullptr;
    void* spmv_buffer_ = nullptr;
};

template <typename T>
Cg<T>::Cg(cudaStream_t stream, int n, const std::int32_t* row_ptr, const std::int32_t* col,
          const T* values, const T* b)
    : stream_(stream), n_(n), memory_(stream) {
    const auto rows = static_cast<std::size_t>(n);
    const auto nnz = static_cast<std::size_t>(row_ptr[n]);
    auto* device_row_ptr = memory_.allocate<std::int32_t>(rows + 1);
    auto* device_col = memory_.allocate<std::int32_t>(nnz);
    auto* device_values = memory_.allocate<T>(nnz);
    upload(device_row_ptr, row_ptr, (rows + 1) * sizeof(std::int32_t));
    upload(device_col, col, nnz * sizeof(std::int32_t));
    upload(device_values, values, nnz * sizeof(T));
    b_ = memory_.allocate<T>(rows);
    upload(b_, b, rows * sizeof(T));
    for (T** v : {&x_, &r_, &p_, &q_}) *v = memory_.allocate<T>(rows);

    SIMRUN_CUSPARSE_CHECK(cusparseCreate(&objects_.sparse));
    SIMRUN_CUSPARSE_CHECK(cusparseSetStream(objects_.sparse, stream_));
    SIMRUN_CUBLAS_CHECK(cublasCreate(&objects_.blas));
    SIMRUN_CUBLAS_CHECK(cublasSetStream(objects_.blas, stream_));
    SIMRUN_CUBLAS_CHECK(cublasSetPointerMode(objects_.blas, CUBLAS_POINTER_MODE_HOST));
    SIMRUN_CUSPARSE_CHECK(cusparseCreateCsr(&objects_.matrix, n, n, static_cast<std::int64_t>(nnz),
                                            device_row_ptr, device_col, device_values,
                                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                            CUSPARSE_INDEX_BASE_ZERO, value_type<T>()));
    SIMRUN_CUSPARSE_CHECK(cusparseCreateDnVec(&objects_.x_vector, n, x_, value_type<T>()));
    SIMRUN_CUSPARSE_CHECK(cusparseCreateDnVec(&objects_.p_vector, n, p_, value_type<T>()));
    SIMRUN_CUSPARSE_CHECK(cusparseCreateDnVec(&objects_.q_vector, n, q_, value_type<T>()));
    // One buffer serves every product (same matrix, same vector shapes).
    const T one = 1, zero = 0;
    std::size_t buffer_bytes = 0;
    SIMRUN_CUSPARSE_CHECK(cusparseSpMV_bufferSize(
        objects_.sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, objects_.matrix, objects_.p_vector,
        &zero, objects_.q_vector, value_type<T>(), CUSPARSE_SPMV_ALG_DEFAULT, &buffer_bytes));
    spmv_buffer_ = memory_.allocate<unsigned char>(buffer_bytes);
    // DeviceTimer's clock on CUDA: two events on the stream.
    SIMRUN_CUDART_CHECK(cudaEventCreate(&objects_.begin));
    SIMRUN_CUDART_CHECK(cudaEventCreate(&objects_.end));
    SIMRUN_CUDART_CHECK(cudaStreamSynchronize(stream_));
}

template <typename T>
SimrunBaselineOutcome Cg<T>::solve(std::int64_t iterations, double rtol) {
    const int n = n_;
    const auto bytes = static_cast<std::size_t>(n) * sizeof(T);
    // x = 0 before the clock starts (simrun's harness resets its x the same way). Traffic: n s.
    SIMRUN_CUDART_CHECK(cudaMemsetAsync(x_, 0, bytes, stream_));

    SimrunBaselineOutcome result{0, 0.0, 0.0};
    SIMRUN_CUDART_CHECK(cudaEventRecord(objects_.begin, stream_));
    // ||b||. Traffic: n s.
    T b_norm = 0;
    SIMRUN_CUBLAS_CHECK(blas_nrm2(objects_.blas, n, b_, &b_norm));
    // r = b - A x: copy (2 n s), SpMV, axpy (3 n s).
    SIMRUN_CUDART_CHECK(cudaMemcpyAsync(r_, b_, bytes, cudaMemcpyDeviceToDevice, stream_));
    spmv(objects_.x_vector, objects_.q_vector);
    SIMRUN_CUBLAS_CHECK(blas_axpy(objects_.blas, n, T(-1), q_, r_));
    // p = r (2 n s); rr = r'r (2 n s).
    SIMRUN_CUDART_CHECK(cudaMemcpyAsync(p_, r_, bytes, cudaMemcpyDeviceToDevice, stream_));
    T rr = 0;
    SIMRUN_CUBLAS_CHECK(blas_dot(objects_.blas, n, r_, r_, &rr));
    const double target = rtol * static_cast<double>(b_norm);
    bool converged = std::sqrt(static_cast<double>(rr)) <= target;
    while (!converged && result.iterations < iterations) {
        // q = A p; alpha = r'r / p'q (2 n s)
        spmv(objects_.p_vector, objects_.q_vector);
        T pq = 0;
        SIMRUN_CUBLAS_CHECK(blas_dot(objects_.blas, n, p_, q_, &pq));
        const T alpha = rr / pq;
        // x = x + alpha p (3 n s); r = r - alpha q (3 n s); r'r (2 n s)
        SIMRUN_CUBLAS_CHECK(blas_axpy(objects_.blas, n, alpha, p_, x_));
        SIMRUN_CUBLAS_CHECK(blas_axpy(objects_.blas, n, -alpha, q_, r_));
        T rr_next = 0;
        SIMRUN_CUBLAS_CHECK(blas_dot(objects_.blas, n, r_, r_, &rr_next));
        ++result.iterations;
        converged = std::sqrt(static_cast<double>(rr_next)) <= target;
        if (!converged) {
            // p = r + beta p as scal (2 n s) then axpy (3 n s), beta = r'r (new) / r'r (old)
            SIMRUN_CUBLAS_CHECK(blas_scal(objects_.blas, n, rr_next / rr, p_));
            SIMRUN_CUBLAS_CHECK(blas_axpy(objects_.blas, n, T(1), r_, p_));
        }
        rr = rr_next;
    }
    SIMRUN_CUDART_CHECK(cudaEventRecord(objects_.end, stream_));
    SIMRUN_CUDART_CHECK(cudaEventSynchronize(objects_.end));
    float milliseconds = 0.0f;
    SIMRUN_CUDART_CHECK(cudaEventElapsedTime(&milliseconds, objects_.begin, objects_.end));
    result.seconds = 1e-3 * static_cast<double>(milliseconds);
    SIMRUN_CUDART_CHECK(cudaGetLastError());
    const double r_norm = std::sqrt(static_cast<double>(rr));
    result.relative_residual = b_norm > 0 ? r_norm / static_cast<double>(b_norm) : r_norm;
    return result;
}

// Runs `work`, turning any exception into a non-zero return and its message into `error`: no
// exception crosses the C interface.
template <typename Work>
int guarded(char* error, std::size_t error_size, Work work) {
    try {
        work();
        return 0;
    } catch (const std::bad_alloc&) {
        std::snprintf(error, error_size, "out of host memory");
    } catch (const std::exception& e) {
        std::snprintf(error, error_size, "%s", e.what());
    } catch (...) {
        std::snprintf(error, error_size, "an exception of an unknown type");
    }
    return 1;
}

int create(void* stream, int value_size, std::int32_t rows, const std::int32_t* row_ptr,
           const std::int32_t* col, const void* values, const void* b,
           SimrunBaselineSystem** system, char* error, std::size_t error_size) {
    return guarded(error, error_size, [&] {
        if (value_size != 4 && value_size != 8) {
            throw std::invalid_argument("values of " + std::to_string(value_size) +
                                        " bytes (4 or 8 expected)");
        }
        const auto s = static_cast<cudaStream_t>(stream);
        AnySystem* made =
            value_size == 8
                ? static_cast<AnySystem*>(new Cg<double>(s, rows, row_ptr, col,
                                                         static_cast<const double*>(values),
                                                         static_cast<const double*>(b)))
                : new Cg<float>(s, rows, row_ptr, col, static_cast<const float*>(values),
                                static_cast<const float*>(b));
        *system = reinterpret_cast<SimrunBaselineSystem*>(made);
    });
}

int solve(SimrunBaselineSystem* system, std::int64_t iterations, double rtol,
          SimrunBaselineOutcome* outcome, char* error, std::size_t error_size) {
    return guarded(error, error_size, [&] {
        *outcome = reinterpret_cast<AnySystem*>(system)->solve(iterations, rtol);
    });
}

void destroy(SimrunBaselineSystem* system) { delete reinterpret_cast<AnySystem*>(system); }

// "M.m.p" of a library from its get-property function, or "unknown" where one of the three
// parts cannot be had.
template <typename Status, typename GetProperty>
std::string version_of(GetProperty get_property, Status success) {
    int v[3] = {};
    const libraryPropertyType parts[3] = {MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL};
    for (int i = 0; i < 3; ++i) {
        if (get_property(parts[i], &v[i]) != success) return "unknown";
    }
    return std::to_string(v[0]) + "." + std::to_string(v[1]) + "." + std::to_string(v[2]);
}

// "cuSPARSE M.m.p, cuBLAS M.m.p" of the libraries the module loaded.
std::string library_versions() {
    return "cuSPARSE " + version_of(cusparseGetProperty, CUSPARSE_STATUS_SUCCESS) + ", cuBLAS " +
           version_of(cublasGetProperty, CUBLAS_STATUS_SUCCESS);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const SimrunBaselineTable*
simrun_bench_baseline_table() {
    static const std::string description = library_versions();
    static const SimrunBaselineTable table{SIMRUN_BASELINE_ABI_VERSION, description.c_str(), create,
                                           solve, destroy};
    return &table;
}
