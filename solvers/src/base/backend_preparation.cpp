#include "simrun/solvers/base/backend_preparation.hpp"

#include <chrono>
#include <system_error>
#include <utility>

namespace simrun::solvers {

BackendPreparation::BackendPreparation(BackendChoice choice, int host_rank) {
    if (choice == BackendChoice::cpu || !cuda_compiled()) return;
    try {
        thread_ = std::thread([this, host_rank] {
            try {
                open_cuda_context(host_rank);
            } catch (...) {
                failure_ = std::current_exception();
            }
        });
        started_ = true;
    } catch (const std::system_error&) {
        // No thread to be had: the back-end makes its context itself, as without preparation.
    }
}

BackendPreparation::~BackendPreparation() {
    if (thread_.joinable()) thread_.join();
}

double BackendPreparation::join() {
    const auto start = std::chrono::steady_clock::now();
    if (thread_.joinable()) thread_.join();
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
    return waited;
}

}  // namespace simrun::solvers
