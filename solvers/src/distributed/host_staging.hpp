#pragma once
// Host memory from Backend::allocate_host (pinned on CUDA) owned as a value: released through
// the back-end when the owner dies, also where the constructor of the class holding it throws.
// A class that lends it to messages declares it before what holds them (they die first).
#include <cstddef>
#include <memory>
#include <utility>

#include "simrun/solvers/base/backend.hpp"

namespace simrun::solvers {

// `count` values' memory (none where 0). Throws as allocate_host does.
template <typename T>
class HostStaging {
public:
    HostStaging(std::shared_ptr<const Backend> backend, std::size_t count)
        : backend_(std::move(backend)),
          data_(count > 0 ? static_cast<T*>(backend_->allocate_host(count * sizeof(T))) : nullptr) {
    }
    HostStaging() = default;
    ~HostStaging() {
        if (data_ != nullptr) backend_->release_host(data_);
    }
    HostStaging(HostStaging&& other) noexcept
        : backend_(std::move(other.backend_)), data_(std::exchange(other.data_, nullptr)) {}
    HostStaging& operator=(HostStaging&& other) noexcept {
        std::swap(backend_, other.backend_);
        std::swap(data_, other.data_);
        return *this;
    }
    HostStaging(const HostStaging&) = delete;
    HostStaging& operator=(const HostStaging&) = delete;

    T* data() const { return data_; }

private:
    std::shared_ptr<const Backend> backend_;
    T* data_ = nullptr;
};

}  // namespace simrun::solvers
