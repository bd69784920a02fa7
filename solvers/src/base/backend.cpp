#include "simrun/solvers/base/backend.hpp"

#include <stdexcept>
#include <string>

namespace simrun::solvers {

std::string_view to_string(BackendKind kind) { return name_of(kind); }

BackendChoice parse_backend_choice(std::string_view text) {
    return parse_enum<BackendChoice>(text, "back-end");
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
