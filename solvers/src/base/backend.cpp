#include "simrun/solvers/base/backend.hpp"

#include <stdexcept>
#include <string>

namespace simrun::solvers {

std::string_view to_string(BackendKind kind) { return kind == BackendKind::cuda ? "cuda" : "cpu"; }

BackendChoice parse_backend_choice(std::string_view text) {
    if (text == "auto") return BackendChoice::automatic;
    if (text == "cpu") return BackendChoice::cpu;
    if (text == "cuda") return BackendChoice::cuda;
    throw std::invalid_argument("unknown back-end '" + std::string(text) +
                                "' (expected auto, cpu or cuda)");
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

}  // namespace simrun::solvers
