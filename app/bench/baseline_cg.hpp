#pragma once
// The benchmark's baseline: unpreconditioned CG as users write it with the vendor libraries
// (cuSPARSE's generic cusparseSpMV on CSR; cuBLAS dot, axpy and scal; every scalar returned to
// the host), on the same matrix, right-hand side, tolerance and iteration count as simrun's
// solver, and timed the same way (two cudaEvents on the CUDA back-end's stream, as DeviceTimer's
// CUDA clock). It runs in the baseline module (baseline_module.hpp), loaded at the first use, so
// that only the benchmark loads cuSPARSE and cuBLAS.
//
// Per iteration (CSR, n rows, nnz entries, s = sizeof(T)):
//   q = A p            SpMV: nnz (s + 4) + 4 (n + 1) + p (n s, gathered) + q (n s)
//   p'q                dot: 2 n s
//   x += alpha p       axpy: 3 n s
//   r -= alpha q       axpy: 3 n s
//   r'r                dot: 2 n s (r passed twice)
//   p = beta p         scal: 2 n s
//   p += r             axpy: 3 n s
// i.e. the matrix once plus 17 vector passes (simrun's floor counts 10).
#include <cstdint>
#include <memory>
#include <span>

#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/matrices/csr_data.hpp"

namespace simrun::solvers {

struct BaselineResult {
    std::int64_t iterations = 0;     // CG iterations done
    double seconds = 0.0;            // device time of the solve, initial residual included
    double relative_residual = 0.0;  // recursive ||r|| / ||b|| at the end
};

// One system set up once on a CUDA back-end (handles, descriptors, the SpMV buffer and every
// vector created here, outside the timed region), then solved as often as wanted.
template <typename T>
class CusparseCg {
public:
    // Copies A (square CSR) and b to the device of `backend`, whose stream the libraries then
    // use. Throws std::invalid_argument when the back-end is not CUDA or the sizes do not
    // match, app::BaselineUnavailable when the module cannot be loaded, CudaError naming the
    // failing CUDA, cuSPARSE or cuBLAS call.
    CusparseCg(std::shared_ptr<const Backend> backend, const CsrData<T>& a, std::span<const T> b);
    ~CusparseCg();
    CusparseCg(const CusparseCg&) = delete;
    CusparseCg& operator=(const CusparseCg&) = delete;

    // CG from x = 0: r = b - A x, then iterations until ||r|| <= rtol ||b|| or `iterations`
    // are done (rtol = 0: exactly `iterations`). Timed from the first SpMV to the last scalar.
    BaselineResult solve(std::int64_t iterations, double rtol) const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

// Convenience: sets up on a new CUDA back-end (device 0) and solves once. The first solve of a
// process includes library start-up costs; time with CusparseCg after a warm-up instead.
template <typename T>
BaselineResult run_cusparse_cg(const CsrData<T>& a, std::span<const T> b, std::int64_t iterations,
                               double rtol);

}  // namespace simrun::solvers
