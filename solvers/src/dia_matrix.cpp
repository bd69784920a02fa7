#include "simrun/solvers/dia_matrix.hpp"

#include <stdexcept>
#include <string>

namespace simrun::solvers {

template <typename T>
DiaMatrix<T>::DiaMatrix(std::shared_ptr<const Backend> backend, const DiaData<T>& data)
    : backend_(std::move(backend)), n_(data.n), host_offsets_(data.offsets) {
    if (n_ < 0) throw std::invalid_argument("DIA matrix: negative size");
    const std::size_t expected = data.offsets.size() * static_cast<std::size_t>(n_);
    if (data.values.size() != expected) {
        throw std::invalid_argument("DIA matrix: " + std::to_string(data.offsets.size()) +
                                    " diagonals of " + std::to_string(n_) + " rows need " +
                                    std::to_string(expected) + " values, got " +
                                    std::to_string(data.values.size()));
    }
    for (std::size_t d = 0; d < data.offsets.size(); ++d) {
        if (d > 0 && data.offsets[d] <= data.offsets[d - 1]) {
            throw std::invalid_argument("DIA matrix: offsets must be sorted and distinct");
        }
        if (n_ > 0 && (data.offsets[d] <= -n_ || data.offsets[d] >= n_)) {
            throw std::invalid_argument("DIA matrix: offset " + std::to_string(data.offsets[d]) +
                                        " is outside the matrix of " + std::to_string(n_) +
                                        " rows");
        }
    }
    offsets_ = Array<int>::from_host(backend_, data.offsets);
    values_ = Array<T>::from_host(backend_, data.values);
}

template <typename T>
void DiaMatrix<T>::apply(const Array<T>& x, Array<T>& y) const {
    if (x.size() != size() || y.size() != size()) {
        throw DimensionMismatch("DIA SpMV: matrix has " + std::to_string(n_) + " rows, x has " +
                                std::to_string(x.size()) + ", y has " + std::to_string(y.size()));
    }
    backend_->kernels<T>().dia_spmv(*backend_, view(), x.data(), y.data());
}

template <typename T>
Array<T> DiaMatrix<T>::diagonal() const {
    Array<T> diagonal(backend_, size());
    int main = -1;
    for (std::size_t d = 0; d < host_offsets_.size(); ++d) {
        if (host_offsets_[d] == 0) main = static_cast<int>(d);
    }
    if (main < 0) {
        backend_->kernels<T>().fill(*backend_, size(), T(0), diagonal.data());
    } else if (n_ > 0) {
        backend_->copy(diagonal.data(), values_.data() + static_cast<std::size_t>(main) * size(),
                       size() * sizeof(T));
    }
    return diagonal;
}

template <typename T>
DiaView<T> DiaMatrix<T>::view() const {
    return DiaView<T>{n_, static_cast<int>(host_offsets_.size()), offsets_.data(), values_.data()};
}

template class DiaMatrix<float>;
template class DiaMatrix<double>;

}  // namespace simrun::solvers
