#pragma once
// The C interface between `simrun bench` and the baseline module (libsimrun_bench_baseline.so,
// built from baseline_cg.cu), which alone links cuSPARSE and cuBLAS: the executable loads it
// with dlopen when a benchmark run needs the baseline (baseline_module.hpp), so no other command
// pays for those libraries at start-up. Plain C types only: the module links nothing of simrun.
//
// The module exports one function, simrun_bench_baseline_table (SIMRUN_BASELINE_ENTRY), which
// returns its table. The loader refuses a table whose abi_version differs from
// SIMRUN_BASELINE_ABI_VERSION; raise the version at any change of this file's types or
// functions.
#include <stddef.h>
#include <stdint.h>

#define SIMRUN_BASELINE_ABI_VERSION 1
#define SIMRUN_BASELINE_ENTRY "simrun_bench_baseline_table"

extern "C" {

// One system, set up on the device by create() and solved by solve() as often as wanted.
typedef struct SimrunBaselineSystem SimrunBaselineSystem;

typedef struct SimrunBaselineOutcome {
    int64_t iterations;        // CG iterations done
    double seconds;            // device time (cudaEvents on the stream) of the solve
    double relative_residual;  // recursive ||r|| / ||b|| at the end
} SimrunBaselineOutcome;

typedef struct SimrunBaselineTable {
    uint32_t abi_version;  // SIMRUN_BASELINE_ABI_VERSION of the module's build
    // The libraries' versions, for the bench's report (e.g. "cuSPARSE 12.6.3, cuBLAS 13.1.0").
    const char* description;
    // Copies the square CSR matrix (rows x rows, 0-based 32-bit indices, values of value_size 4
    // (float) or 8 (double) bytes) and b from host memory to the device, on `stream` (a
    // cudaStream_t of the caller's, which the libraries then use), and makes the handles,
    // descriptors and SpMV buffer. Returns 0 and *system, or non-zero with a message in
    // error[0, error_size) naming the call that failed.
    int (*create)(void* stream, int value_size, int32_t rows, const int32_t* row_ptr,
                  const int32_t* col, const void* values, const void* b,
                  SimrunBaselineSystem** system, char* error, size_t error_size);
    // CG from x = 0 until ||r|| <= rtol ||b|| or `iterations` are done (rtol = 0: exactly
    // `iterations`), timed from the first library call to the last scalar. Returns 0 and
    // *outcome, or non-zero with a message as create's.
    int (*solve)(SimrunBaselineSystem* system, int64_t iterations, double rtol,
                 SimrunBaselineOutcome* outcome, char* error, size_t error_size);
    // Frees everything create made (null: nothing).
    void (*destroy)(SimrunBaselineSystem* system);
} SimrunBaselineTable;

// The module's one export.
typedef const SimrunBaselineTable* (*SimrunBaselineEntry)(void);

}  // extern "C"
