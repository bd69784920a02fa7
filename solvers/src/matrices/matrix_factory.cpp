#include "simrun/solvers/matrices/matrix_factory.hpp"

#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/matrices/dia_matrix.hpp"
#include "simrun/solvers/matrices/sparse_matrices.hpp"

namespace simrun::solvers {

template <typename T>
std::unique_ptr<LinearOperator<T>> make_operator(std::shared_ptr<const Backend> backend,
                                                 const CsrData<T>& matrix, Format format) {
    switch (format) {
        case Format::dia:
            return std::make_unique<DiaMatrix<T>>(std::move(backend), to_dia(matrix));
        case Format::stencil:
            return std::make_unique<DiaMatrix<T>>(std::move(backend), to_dia(matrix),
                                                  DiaStorage::stencil);
        case Format::ell:
            return std::make_unique<EllMatrix<T>>(std::move(backend), to_ell(matrix));
        case Format::csr:
            return std::make_unique<CsrMatrix<T>>(std::move(backend), matrix);
        case Format::coo:
            return std::make_unique<CooMatrix<T>>(std::move(backend), to_coo(matrix));
        case Format::dense:
            return std::make_unique<DenseMatrix<T>>(std::move(backend), to_dense(matrix));
    }
    throw std::invalid_argument("unknown format");
}

template std::unique_ptr<LinearOperator<float>> make_operator(std::shared_ptr<const Backend>,
                                                              const CsrData<float>&, Format);
template std::unique_ptr<LinearOperator<double>> make_operator(std::shared_ptr<const Backend>,
                                                               const CsrData<double>&, Format);

}  // namespace simrun::solvers
