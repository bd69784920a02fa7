// A baseline module of another interface version (SIMRUN_BASELINE_ABI_VERSION + 1), which
// `simrun bench` must refuse by name rather than call (executable_loading_test.cpp).
#include "baseline_module_abi.hpp"

extern "C" __attribute__((visibility("default"))) const SimrunBaselineTable*
simrun_bench_baseline_table() {
    static const SimrunBaselineTable table{SIMRUN_BASELINE_ABI_VERSION + 1, "a stranger", nullptr,
                                           nullptr, nullptr};
    return &table;
}
