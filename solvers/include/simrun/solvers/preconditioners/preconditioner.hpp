#pragma once
// Preconditioners M ~ A^-1, applied as z = M r on the back-end of r.
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/matrices/dia_matrix.hpp"
#include "simrun/solvers/matrices/linear_operator.hpp"
#include "simrun/solvers/preconditioners/multicolour.hpp"

namespace simrun::solvers {

template <typename T>
class Preconditioner {
public:
    virtual ~Preconditioner() = default;
    virtual std::string name() const = 0;
    // z = M r; r and z have the operator's size and back-end; r and z are distinct.
    virtual void apply(const Array<T>& r, Array<T>& z) const = 0;
    // When M is diagonal, so that fused kernels can apply it row by row: its entries on the
    // back-end, or a null pointer for M = I. std::nullopt for any other M.
    virtual std::optional<const T*> pointwise_factors() const { return std::nullopt; }
    // When M is multicolour SSOR, so that a fused kernel can sweep it inside a method's
    // iterations: its sweeps. std::nullopt for any other M.
    virtual std::optional<MulticolourSweepsView<T>> multicolour_sweeps() const {
        return std::nullopt;
    }
    // Whether those sweeps were built from the entries of the operator a, for it, so that a
    // method may form A v from the sweeps' matrix (their diagonal and off-diagonal entries)
    // instead of from a.
    virtual bool sweeps_hold(const LinearOperator<T>& a) const {
        (void)a;
        return false;
    }
    // What the user should know of how M was built (a multigrid hierarchy's levels, ILU(0)'s
    // shifted pivots); empty where there is nothing to say.
    virtual std::string describe() const { return {}; }
};

// M = I.
template <typename T>
class IdentityPreconditioner final : public Preconditioner<T> {
public:
    std::string name() const override { return "none"; }
    void apply(const Array<T>& r, Array<T>& z) const override;
    std::optional<const T*> pointwise_factors() const override { return nullptr; }
};

// M = D^-1, D the main diagonal. Throws std::invalid_argument naming the first row whose
// diagonal entry is zero or not finite.
template <typename T>
class JacobiPreconditioner final : public Preconditioner<T> {
public:
    JacobiPreconditioner(std::shared_ptr<const Backend> backend, std::span<const T> diagonal);
    explicit JacobiPreconditioner(const DiaMatrix<T>& matrix);
    std::string name() const override { return "jacobi"; }
    void apply(const Array<T>& r, Array<T>& z) const override;
    std::optional<const T*> pointwise_factors() const override { return inverse_diagonal_.data(); }

private:
    Array<T> inverse_diagonal_;
};

// Symmetric multicolour Gauss-Seidel (SSOR with weight omega): z = M r is one forward sweep over
// the colours then one backward sweep, from z = 0. Symmetric positive definite for SPD A and
// 0 < omega < 2, so it serves CG; parallel, unlike the seed's sequential SSOR.
template <typename T>
class SsorPreconditioner final : public Preconditioner<T> {
public:
    // `of`: the operator whose entries a holds, where the caller has one (sweeps_hold).
    SsorPreconditioner(std::shared_ptr<const Backend> backend, const CsrData<T>& a, T omega = 1,
                       const LinearOperator<T>* of = nullptr);
    std::string name() const override { return "ssor"; }
    void apply(const Array<T>& r, Array<T>& z) const override;
    int num_colours() const { return sweeper_.num_colours(); }
    std::optional<MulticolourSweepsView<T>> multicolour_sweeps() const override {
        return sweeper_.view(omega_);
    }
    bool sweeps_hold(const LinearOperator<T>& a) const override { return &a == of_; }

private:
    MulticolourSweeper<T> sweeper_;
    T omega_;
    const LinearOperator<T>* of_;
    mutable RecordedForOperands recorded_;
};

// The main diagonal of a CSR matrix (zero where a row stores none).
template <typename T>
std::vector<T> diagonal_of(const CsrData<T>& a);

}  // namespace simrun::solvers
