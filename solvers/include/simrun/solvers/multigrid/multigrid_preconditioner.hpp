#pragma once
// One multigrid cycle as a preconditioner: z = M r is the cycle's correction from z = 0. With
// as many sweeps after the coarse correction as before, M is symmetric positive definite for
// SPD A (forward colour order before, backward after), so it serves CG; BiCGStab takes it for
// nonsymmetric A.
#include <memory>

#include "simrun/solvers/multigrid/multigrid_hierarchy.hpp"
#include "simrun/solvers/preconditioners/preconditioner.hpp"

namespace simrun::solvers {

template <typename T>
class MultigridPreconditioner final : public Preconditioner<T> {
public:
    explicit MultigridPreconditioner(std::shared_ptr<const MultigridHierarchy<T>> hierarchy)
        : hierarchy_(std::move(hierarchy)) {}
    std::string name() const override { return "multigrid"; }
    void apply(const Array<T>& r, Array<T>& z) const override;
    const MultigridHierarchy<T>& hierarchy() const { return *hierarchy_; }

private:
    std::shared_ptr<const MultigridHierarchy<T>> hierarchy_;
};

}  // namespace simrun::solvers
