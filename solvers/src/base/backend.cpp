#include "simrun/solvers/base/backend.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace simrun::solvers {

std::string_view to_string(BackendKind kind) { return name_of(kind); }

BackendChoice parse_backend_choice(std::string_view text) {
    return parse_enum<BackendChoice>(text, "back-end");
}

RuntimeCompilation Backend::compile_kernels(const std::string&,
                                            const std::vector<std::string>&) const {
    return {{}, "the " + std::string(to_string(kind())) + " back-end runs host code", 0.0};
}

std::unique_ptr<DeviceHalo> Backend::open_device_halo(std::span<const HaloSide> sides) const {
    const Communicator& ranks = communicator();
    if (ranks.size() == 1) return nullptr;
    // One agreement before anything else, so that ranks of different back-ends (a host without
    // a GPU among hosts with one) take the same path.
    const double least = ranks.min(static_cast<double>(device_halo_readiness()));
    if (least < 0.5) {
        throw std::invalid_argument(
            "environment variable SIMRUN_HALO: expected auto, host or device (on every rank)");
    }
    if (least < 1.5) return nullptr;
    return make_device_halo(sides);
}

std::unique_ptr<DeviceHalo> Backend::make_device_halo(std::span<const HaloSide>) const {
    return nullptr;
}

std::string Backend::halo_path() const { return "MPI messages between the ranks' memory"; }

void RecordedForOperands::run(const Backend& backend, const void* in, const void* out,
                              const std::function<void()>& issue) {
    if (!work_ || operands_ != std::pair{in, out}) {
        work_ = backend.record(issue);
        operands_ = {in, out};
    }
    work_->run();
}

std::shared_ptr<const Backend> make_backend(BackendChoice choice) {
    switch (choice) {
        case BackendChoice::cpu:
            return make_cpu_backend();
        case BackendChoice::cuda:
            return make_cuda_backend();
        case BackendChoice::automatic:
            break;
    }
    return cuda_device_count() > 0 ? make_cuda_backend() : make_cpu_backend();
}

BackendDecision choose_backend(BackendChoice choice,
                               std::shared_ptr<const Communicator> communicator) {
    // The CPU named: the CUDA runtime is not touched.
    if (choice == BackendChoice::cpu) return {make_cpu_backend(communicator), "named by the user"};
    const int gpus = cuda_device_count();
    const bool distributed = communicator->size() > 1;
    const auto cuda = [&] {
        const int device = gpus > 0 ? communicator->host_rank() % gpus : 0;
        return make_cuda_backend(device, communicator);
    };
    const std::string gpu_of_rank =
        distributed && gpus > 0
            ? ", GPU " + std::to_string(communicator->host_rank() % gpus) + " of its host's " +
                  std::to_string(gpus) + " for rank " + std::to_string(communicator->rank())
            : std::string();
    if (choice == BackendChoice::cuda) return {cuda(), "named by the user" + gpu_of_rank};
    if (gpus == 0) {
        return {make_cpu_backend(communicator), cuda_compiled()
                                                    ? "auto: no CUDA GPU is available"
                                                    : "auto: this build has no CUDA back-end"};
    }
    return {cuda(), "auto: a CUDA GPU is present" + gpu_of_rank};
}

BackendDecision choose_backend_for_solve(BackendChoice choice, std::int64_t rows) {
    if (choice == BackendChoice::automatic && rows < gpu_crossover_rows &&
        cuda_device_count() > 0) {
        return {make_cpu_backend(), "auto: " + std::to_string(rows) + " unknowns, below the " +
                                        std::to_string(gpu_crossover_rows) +
                                        " from which a single solve finishes sooner on the GPU "
                                        "(its start-up outweighs what it saves)"};
    }
    return choose_backend(choice);
}

}  // namespace simrun::solvers
