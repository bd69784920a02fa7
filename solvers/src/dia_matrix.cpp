#include "simrun/solvers/dia_matrix.hpp"

#include <stdexcept>
#include <string>

namespace simrun::solvers {

template <typename T>
DiaMatrix<T>::DiaMatrix(std::shared_ptr<const Backend> backend, const DiaData<T>& data)
    : StoredMatrix<T>(std::move(backend), data.n), host_offsets_(data.offsets) {
    if (this->rows_ < 0) throw std::invalid_argument("DIA matrix: negative size");
    const std::size_t expected = data.offsets.size() * static_cast<std::size_t>(this->rows_);
    if (data.values.size() != expected) {
        throw std::invalid_argument("DIA matrix: " + std::to_string(data.offsets.size()) +
                                    " diagonals of " + std::to_string(this->rows_) + " rows need " +
                                    std::to_string(expected) + " values, got " +
                                    std::to_string(data.values.size()));
    }
    for (std::size_t d = 0; d < data.offsets.size(); ++d) {
        if (d > 0 && data.offsets[d] <= data.offsets[d - 1]) {
            throw std::invalid_argument("DIA matrix: offsets must be sorted and distinct");
        }
        if (this->rows_ > 0 &&
            (data.offsets[d] <= -this->rows_ || data.offsets[d] >= this->rows_)) {
            throw std::invalid_argument("DIA matrix: offset " + std::to_string(data.offsets[d]) +
                                        " is outside the matrix of " + std::to_string(this->rows_) +
                                        " rows");
        }
    }
    offsets_ = Array<int>::from_host(this->backend_, data.offsets);
    values_ = Array<T>::from_host(this->backend_, data.values);
}

template <typename T>
void DiaMatrix<T>::apply(const Array<T>& x, Array<T>& y) const {
    if (x.size() != this->size() || y.size() != this->size()) {
        throw DimensionMismatch("DIA SpMV: matrix has " + std::to_string(this->rows_) +
                                " rows, x has " + std::to_string(x.size()) + ", y has " +
                                std::to_string(y.size()));
    }
    this->backend_->template kernels<T>().dia_spmv(*this->backend_, view(), x.data(), y.data());
}

template <typename T>
Array<T> DiaMatrix<T>::diagonal() const {
    Array<T> diagonal(this->backend_, this->size());
    int main = -1;
    for (std::size_t d = 0; d < host_offsets_.size(); ++d) {
        if (host_offsets_[d] == 0) main = static_cast<int>(d);
    }
    if (main < 0) {
        this->backend_->template kernels<T>().fill(*this->backend_, this->size(), T(0),
                                                   diagonal.data());
    } else if (this->rows_ > 0) {
        this->backend_->copy(diagonal.data(),
                             values_.data() + static_cast<std::size_t>(main) * this->size(),
                             this->size() * sizeof(T));
    }
    return diagonal;
}

template <typename T>
DiaView<T> DiaMatrix<T>::view() const {
    return DiaView<T>{this->rows_, static_cast<int>(host_offsets_.size()), offsets_.data(),
                      values_.data()};
}

template class DiaMatrix<float>;
template class DiaMatrix<double>;

}  // namespace simrun::solvers
