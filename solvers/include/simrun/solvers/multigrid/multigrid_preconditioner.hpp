#pragma once
// One multigrid cycle as a preconditioner: z = M r is the cycle's correction from z = 0. With
// as many sweeps after the coarse correction as before, M is symmetric positive definite for
// SPD A (forward colour order before, backward after), so it serves CG; BiCGStab takes it for
// nonsymmetric A. The cycle may compute in the other precision than the method (float inside
// a double solve): r is rounded to it and z widened back, two passes over the vectors that
// save half of every pass of the cycle.
#include <memory>
#include <string>

#include "simrun/solvers/multigrid/multigrid_hierarchy.hpp"
#include "simrun/solvers/preconditioners/preconditioner.hpp"

namespace simrun::solvers {

template <typename T>
class MultigridPreconditioner final : public Preconditioner<T> {
public:
    using Other = std::conditional_t<std::is_same_v<T, double>, float, double>;

    // The cycle in T.
    explicit MultigridPreconditioner(std::shared_ptr<MultigridHierarchy<T>> hierarchy);
    // The cycle in the other precision.
    explicit MultigridPreconditioner(std::shared_ptr<MultigridHierarchy<Other>> hierarchy);
    ~MultigridPreconditioner() override;

    std::string name() const override { return "multigrid"; }
    void apply(const Array<T>& r, Array<T>& z) const override;
    // The hierarchy's description, with the precision of the cycle where it is not T's.
    std::string describe() const override;
    // New values on the same rows (MultigridHierarchy::refresh): the cycle keeps its precision.
    void refresh(const DiaData<T>& fine, const DiaMatrix<T>* fine_operator = nullptr);

private:
    std::shared_ptr<MultigridHierarchy<T>> same_;
    std::shared_ptr<MultigridHierarchy<Other>> other_;
    mutable Array<Other> r_other_, z_other_;  // r and z in the cycle's precision
};

// The precision a cycle computes in for a solve in `solve` on a back-end of `kind`:
// parameters.precision, or where it names none float on a GPU (unless the coefficients jump by
// more than the automatic cycle's ratio: there the coarse operators' weak couplings need
// double's digits) and `solve` on the CPU.
Precision cycle_precision(const MultigridParameters& parameters, BackendKind kind, Precision solve,
                          bool coefficients_jump = false);

// One cycle on `fine`, a matrix on the points of `box`, as a preconditioner for a solve in T,
// its hierarchy computing in cycle_precision(). `fine_operator`, `fine` on the back-end where
// the caller has it: the finest level itself where the cycle computes in T, converted on the
// back-end otherwise. Throws what MultigridHierarchy throws.
template <typename T>
std::unique_ptr<MultigridPreconditioner<T>> make_multigrid_preconditioner(
    std::shared_ptr<const Backend> backend, const DiaData<T>& fine, const GridBox& box,
    const MultigridParameters& parameters, const DiaMatrix<T>* fine_operator = nullptr);
// The same over a process grid, from this rank's part (part_rows.hpp); collective.
template <typename T>
std::unique_ptr<MultigridPreconditioner<T>> make_multigrid_preconditioner(
    std::shared_ptr<const Backend> backend, const PartRows<double>& rows,
    const MultigridParameters& parameters, const DiaMatrix<T>* fine_operator = nullptr);

}  // namespace simrun::solvers
