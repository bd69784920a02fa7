#include "simrun/solvers/matrices/sparse_matrices.hpp"

#include <stdexcept>
#include <string>

#include "base/kernel_table.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/matrices/csr_binning.hpp"

namespace simrun::solvers {
namespace {

void require_square(std::int32_t rows, std::int32_t cols, const char* format) {
    if (rows != cols || rows < 0) {
        throw std::invalid_argument(std::string(format) + " matrix must be square, got " +
                                    std::to_string(rows) + " x " + std::to_string(cols));
    }
}

template <typename T>
void check_spmv(const char* format, std::size_t n, const Array<T>& x, const Array<T>& y) {
    if (x.size() != n || y.size() != n) {
        throw DimensionMismatch(std::string(format) + " SpMV: matrix has " + std::to_string(n) +
                                " rows, x has " + std::to_string(x.size()) + ", y has " +
                                std::to_string(y.size()));
    }
}

}  // namespace

template <typename T>
CsrMatrix<T>::CsrMatrix(std::shared_ptr<const Backend> backend, const CsrData<T>& data)
    : StoredMatrix<T>(std::move(backend), data.rows) {
    require_square(data.rows, data.cols, "CSR");
    if (data.row_ptr.size() != static_cast<std::size_t>(this->rows()) + 1 ||
        data.row_ptr.back() != static_cast<std::int32_t>(data.col.size()) ||
        data.values.size() != data.col.size()) {
        throw std::invalid_argument("CSR matrix: row_ptr, col and values do not agree");
    }
    const CsrBinPlan plan = plan_csr_bins(data.row_ptr);
    row_ptr_ = Array<std::int32_t>::from_host(this->backend_, data.row_ptr);
    col_ = Array<std::int32_t>::from_host(this->backend_, data.col);
    values_ = Array<T>::from_host(this->backend_, data.values);
    binned_rows_ = Array<std::int32_t>::from_host(this->backend_, plan.binned_rows);
    for (int b = 0; b < 4; ++b) bin_offsets_[b] = plan.bin_offsets[static_cast<std::size_t>(b)];
}

template <typename T>
CsrView<T> CsrMatrix<T>::view() const {
    CsrView<T> v{this->rows(), this->rows(), row_ptr_.data(), col_.data(), values_.data(), {}};
    v.bins.binned_rows = binned_rows_.data();
    for (int b = 0; b < 4; ++b) v.bins.bin_offsets[b] = bin_offsets_[b];
    return v;
}

template <typename T>
std::optional<RowMatrixView<T>> CsrMatrix<T>::row_view() const {
    if (bin_offsets_[1] != this->rows()) return std::nullopt;  // bins 1 and 2 hold rows
    return view();
}

template <typename T>
void CsrMatrix<T>::apply(const Array<T>& x, Array<T>& y) const {
    check_spmv("CSR", this->size(), x, y);
    if (this->rows() > 0)
        this->backend_->template kernels<T>().csr_spmv(*this->backend_, view(), x.data(), y.data());
}

template <typename T>
EllMatrix<T>::EllMatrix(std::shared_ptr<const Backend> backend, const EllData<T>& data)
    : StoredMatrix<T>(std::move(backend), data.rows), width_(data.width) {
    require_square(data.rows, data.cols, "ELLPACK-R");
    const std::size_t slots =
        static_cast<std::size_t>(this->rows()) * static_cast<std::size_t>(width_);
    if (data.col.size() != slots || data.values.size() != slots ||
        data.row_length.size() != static_cast<std::size_t>(this->rows())) {
        throw std::invalid_argument("ELLPACK-R matrix: array sizes do not match rows x width");
    }
    col_ = Array<std::int32_t>::from_host(this->backend_, data.col);
    values_ = Array<T>::from_host(this->backend_, data.values);
    row_length_ = Array<std::int32_t>::from_host(this->backend_, data.row_length);
}

template <typename T>
void EllMatrix<T>::apply(const Array<T>& x, Array<T>& y) const {
    check_spmv("ELLPACK-R", this->size(), x, y);
    if (this->rows() == 0) return;
    this->backend_->template kernels<T>().ell_spmv(*this->backend_, view(), x.data(), y.data());
}

template <typename T>
EllView<T> EllMatrix<T>::view() const {
    return EllView<T>{this->rows(), width_, col_.data(), values_.data(), row_length_.data()};
}

template <typename T>
CooMatrix<T>::CooMatrix(std::shared_ptr<const Backend> backend, const CooData<T>& data)
    : StoredMatrix<T>(std::move(backend), data.rows) {
    require_square(data.rows, data.cols, "COO");
    const CooData<T> sorted = to_coo(to_csr(data));
    nnz_ = sorted.nnz();
    row_ = Array<std::int32_t>::from_host(this->backend_, sorted.row);
    col_ = Array<std::int32_t>::from_host(this->backend_, sorted.col);
    values_ = Array<T>::from_host(this->backend_, sorted.values);
    const std::size_t bytes =
        this->backend_->template kernels<T>().coo_workspace_bytes(this->rows(), nnz_);
    workspace_ = Array<unsigned char>(this->backend_, bytes);
}

template <typename T>
void CooMatrix<T>::apply(const Array<T>& x, Array<T>& y) const {
    check_spmv("COO", this->size(), x, y);
    if (this->rows() == 0) return;
    const CooView<T> v{this->rows(),     nnz_,           row_.data(),
                       col_.data(),      values_.data(), workspace_.data(),
                       workspace_.size()};
    this->backend_->template kernels<T>().coo_spmv(*this->backend_, v, x.data(), y.data());
}

template <typename T>
DenseMatrix<T>::DenseMatrix(std::shared_ptr<const Backend> backend, const DenseData<T>& data)
    : StoredMatrix<T>(std::move(backend), data.rows) {
    require_square(data.rows, data.cols, "dense");
    if (data.values.size() !=
        static_cast<std::size_t>(this->rows()) * static_cast<std::size_t>(this->rows())) {
        throw std::invalid_argument("dense matrix: values do not match rows x cols");
    }
    values_ = Array<T>::from_host(this->backend_, data.values);
}

template <typename T>
void DenseMatrix<T>::apply(const Array<T>& x, Array<T>& y) const {
    check_spmv("dense", this->size(), x, y);
    if (this->rows() == 0) return;
    const DenseView<T> v{this->rows(), this->rows(), values_.data()};
    this->backend_->template kernels<T>().dense_spmv(*this->backend_, v, x.data(), y.data());
}

template class CsrMatrix<float>;
template class CsrMatrix<double>;
template class EllMatrix<float>;
template class EllMatrix<double>;
template class CooMatrix<float>;
template class CooMatrix<double>;
template class DenseMatrix<float>;
template class DenseMatrix<double>;

}  // namespace simrun::solvers
