#pragma once
// Preconditioners M ~ A^-1, applied as z = M r on the back-end of r.
#include <memory>
#include <string>

#include "simrun/solvers/array.hpp"
#include "simrun/solvers/dia_matrix.hpp"

namespace simrun::solvers {

template <typename T>
class Preconditioner {
public:
    virtual ~Preconditioner() = default;
    virtual std::string name() const = 0;
    // z = M r; r and z have the operator's size and back-end.
    virtual void apply(const Array<T>& r, Array<T>& z) const = 0;
};

// M = I.
template <typename T>
class IdentityPreconditioner final : public Preconditioner<T> {
public:
    std::string name() const override { return "none"; }
    void apply(const Array<T>& r, Array<T>& z) const override;
};

// M = D^-1, D the main diagonal. Throws std::invalid_argument naming the first row whose
// diagonal entry is zero or not finite.
template <typename T>
class JacobiPreconditioner final : public Preconditioner<T> {
public:
    explicit JacobiPreconditioner(const DiaMatrix<T>& matrix);
    std::string name() const override { return "jacobi"; }
    void apply(const Array<T>& r, Array<T>& z) const override;

private:
    Array<T> inverse_diagonal_;
};

}  // namespace simrun::solvers
