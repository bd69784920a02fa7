#pragma once
// Array<T>: n values owned in the memory of one back-end (RAII: freed on destruction), or
// borrowed from their owner (another library's device array), which keeps them alive.
// Move-only, so a device buffer can never be copied by accident; clone() copies explicitly
// (into memory of its own).
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/base/errors.hpp"

namespace simrun::solvers {

template <typename T>
class Array {
public:
    Array() = default;
    // Uninitialised storage for n values on the back-end.
    Array(std::shared_ptr<const Backend> backend, std::size_t n)
        : backend_(std::move(backend)), size_(n) {
        if (size_ > 0) data_ = static_cast<T*>(backend_->allocate(size_ * sizeof(T)));
    }
    static Array from_host(std::shared_ptr<const Backend> backend, std::span<const T> values) {
        Array array(std::move(backend), values.size());
        array.copy_from_host(values);
        return array;
    }
    // The n values at `data`, in the back-end's memory, read and written in place and never
    // freed: their owner keeps them alive while the Array lives.
    static Array borrow(std::shared_ptr<const Backend> backend, T* data, std::size_t n) {
        Array array;
        array.backend_ = std::move(backend);
        array.data_ = n > 0 ? data : nullptr;
        array.size_ = n;
        array.owned_ = false;
        return array;
    }
    ~Array() { reset(); }
    Array(const Array&) = delete;
    Array& operator=(const Array&) = delete;
    Array(Array&& other) noexcept
        : backend_(std::move(other.backend_)),
          data_(std::exchange(other.data_, nullptr)),
          size_(std::exchange(other.size_, 0)),
          owned_(std::exchange(other.owned_, true)) {}
    Array& operator=(Array&& other) noexcept {
        if (this != &other) {
            reset();
            backend_ = std::move(other.backend_);
            data_ = std::exchange(other.data_, nullptr);
            size_ = std::exchange(other.size_, 0);
            owned_ = std::exchange(other.owned_, true);
        }
        return *this;
    }

    Array clone() const {
        Array copy(backend_, size_);
        if (size_ > 0) backend_->copy(copy.data_, data_, size_ * sizeof(T));
        return copy;
    }
    void copy_from_host(std::span<const T> values) {
        check_size(values.size(), "copy_from_host");
        if (size_ > 0) backend_->copy_from_host(data_, values.data(), size_ * sizeof(T));
    }
    void copy_to_host(std::span<T> values) const {
        check_size(values.size(), "copy_to_host");
        if (size_ > 0) backend_->copy_to_host(values.data(), data_, size_ * sizeof(T));
    }
    std::vector<T> to_host() const {
        std::vector<T> values(size_);
        copy_to_host(values);
        return values;
    }

    T* data() { return data_; }
    const T* data() const { return data_; }
    std::size_t size() const { return size_; }
    const Backend& backend() const { return *backend_; }
    const std::shared_ptr<const Backend>& backend_ptr() const { return backend_; }

private:
    void reset() noexcept {
        if (data_ != nullptr && owned_) backend_->release(data_);
        data_ = nullptr;
        size_ = 0;
    }
    void check_size(std::size_t other, const char* operation) const {
        if (other != size_) {
            throw DimensionMismatch(std::string("Array::") + operation + ": array has " +
                                    std::to_string(size_) + " values, host span has " +
                                    std::to_string(other));
        }
    }

    std::shared_ptr<const Backend> backend_;
    T* data_ = nullptr;
    std::size_t size_ = 0;
    bool owned_ = true;
};

}  // namespace simrun::solvers
