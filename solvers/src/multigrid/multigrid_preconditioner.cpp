#include "simrun/solvers/multigrid/multigrid_preconditioner.hpp"

#include <string>
#include <type_traits>

#include "base/kernel_table.hpp"
#include "multigrid/hierarchy_access.hpp"
#include "multigrid/level_transfer.hpp"
#include "simrun/solvers/base/errors.hpp"
#include "simrun/solvers/base/vector_ops.hpp"

namespace simrun::solvers {
namespace {

// The hierarchy's parts: whether r and z enter the finest window straight, and the cycle that
// takes them there (enters_other, cycle_other_from_zero: multigrid/hierarchy.hpp).
template <typename V>
const multigrid::Hierarchy<V>& parts_of(const MultigridHierarchy<V>& hierarchy) {
    return multigrid::HierarchyAccess<V>::parts(hierarchy);
}

}  // namespace

template <typename T>
MultigridPreconditioner<T>::MultigridPreconditioner(
    std::shared_ptr<MultigridHierarchy<T>> hierarchy)
    : same_(std::move(hierarchy)) {}

template <typename T>
MultigridPreconditioner<T>::MultigridPreconditioner(
    std::shared_ptr<MultigridHierarchy<Other>> hierarchy)
    : other_(std::move(hierarchy)),
      // Over ranks r and z go straight into and out of the finest level's window.
      r_other_(other_->backend(), parts_of(*other_).enters_other() ? 0 : other_->size()),
      z_other_(other_->backend(), parts_of(*other_).enters_other() ? 0 : other_->size()) {}

template <typename T>
MultigridPreconditioner<T>::~MultigridPreconditioner() = default;

template <typename T>
void MultigridPreconditioner<T>::apply(const Array<T>& r, Array<T>& z) const {
    if (same_) {
        same_->cycle_from_zero(r, z);
        return;
    }
    // r rounded, the cycle from 0, z widened. Traffic: the cycle's, plus n values of T read
    // and written and 3n of Other moved (n over ranks: r rounded straight into the finest
    // level's window, z widened straight from it).
    const Backend& backend = r.backend();
    const std::size_t n = r.size();
    if (n != other_->size() || z.size() != n) {
        throw DimensionMismatch("MultigridPreconditioner::apply: the cycle takes " +
                                std::to_string(other_->size()) + " points but r has " +
                                std::to_string(n) + " and z " + std::to_string(z.size()));
    }
    const multigrid::Hierarchy<Other>& parts = parts_of(*other_);
    if (parts.enters_other()) {
        parts.cycle_other_from_zero(r.data(), z.data());
        return;
    }
    backend.kernels<T>().copy_to_other(backend, n, r.data(), r_other_.data());
    other_->cycle_from_zero(r_other_, z_other_);
    backend.kernels<Other>().copy_to_other(backend, n, z_other_.data(), z.data());
}

template <typename T>
void MultigridPreconditioner<T>::refresh(const DiaData<T>& fine,
                                         const DiaMatrix<T>* fine_operator) {
    if (same_) {
        same_->refresh(fine, fine_operator);
    } else {
        other_->refresh(fine, fine_operator);
    }
}

template <typename T>
std::string MultigridPreconditioner<T>::describe() const {
    if (same_) return same_->describe();
    return other_->describe() + " in " + (std::is_same_v<Other, float> ? "float" : "double");
}

Precision cycle_precision(const MultigridParameters& parameters, BackendKind kind, Precision solve,
                          bool coefficients_jump) {
    // On an H100 a float cycle took CG 21-24 iterations on coefficients jumping by 1e3-1e6,
    // where a double one takes 12-19.
    const bool float_pays = kind == BackendKind::cuda && !coefficients_jump;
    return parameters.precision.value_or(float_pays ? Precision::single_precision : solve);
}

namespace {

// A preconditioner of a solve in T whose hierarchy computes in cycle_precision():
// hierarchy(std::type_identity<U>{}) makes it in U, T or the other precision.
template <typename T, typename MakeHierarchy>
std::unique_ptr<MultigridPreconditioner<T>> in_cycle_precision(
    BackendKind kind, const MultigridParameters& parameters, bool coefficients_jump,
    MakeHierarchy&& hierarchy) {
    using Other = typename MultigridPreconditioner<T>::Other;
    const Precision solve =
        std::is_same_v<T, double> ? Precision::double_precision : Precision::single_precision;
    if (cycle_precision(parameters, kind, solve, coefficients_jump) == solve) {
        return std::make_unique<MultigridPreconditioner<T>>(hierarchy(std::type_identity<T>{}));
    }
    return std::make_unique<MultigridPreconditioner<T>>(hierarchy(std::type_identity<Other>{}));
}

}  // namespace

template <typename T>
std::unique_ptr<MultigridPreconditioner<T>> make_multigrid_preconditioner(
    std::shared_ptr<const Backend> backend, const DiaData<T>& fine, const GridBox& box,
    const MultigridParameters& parameters, const DiaMatrix<T>* fine_operator) {
    const BackendKind kind = backend->kind();
    // Looked for only where the precision depends on it.
    const bool jumps = kind == BackendKind::cuda && !parameters.precision &&
                       multigrid::has_coefficient_jumps(fine, multigrid::cycle_jump_ratio);
    return in_cycle_precision<T>(kind, parameters, jumps, [&]<typename U>(std::type_identity<U>) {
        return std::make_shared<MultigridHierarchy<U>>(std::move(backend), fine, box, parameters,
                                                       fine_operator);
    });
}

template <typename T>
std::unique_ptr<MultigridPreconditioner<T>> make_multigrid_preconditioner(
    std::shared_ptr<const Backend> backend, const PartRows<double>& rows,
    const MultigridParameters& parameters, const DiaMatrix<T>* fine_operator) {
    const BackendKind kind = backend->kind();
    // Looked for only where the precision depends on it; every rank takes the same (collective).
    bool jumps = false;
    if (kind == BackendKind::cuda && !parameters.precision) {
        const bool here =
            multigrid::has_coefficient_jumps(rows.window, multigrid::cycle_jump_ratio);
        jumps = backend->communicator().max(here ? 1.0 : 0.0) > 0;
    }
    return in_cycle_precision<T>(kind, parameters, jumps, [&]<typename U>(std::type_identity<U>) {
        // The finest level's storage is named by the operator's where the cycle computes in
        // T; in the other precision the hierarchy makes its own.
        const DiaMatrix<U>* storage = nullptr;
        if constexpr (std::is_same_v<U, T>) storage = fine_operator;
        return std::make_shared<MultigridHierarchy<U>>(std::move(backend), rows, parameters,
                                                       storage);
    });
}

template std::unique_ptr<MultigridPreconditioner<float>> make_multigrid_preconditioner(
    std::shared_ptr<const Backend>, const PartRows<double>&, const MultigridParameters&,
    const DiaMatrix<float>*);
template std::unique_ptr<MultigridPreconditioner<double>> make_multigrid_preconditioner(
    std::shared_ptr<const Backend>, const PartRows<double>&, const MultigridParameters&,
    const DiaMatrix<double>*);
template std::unique_ptr<MultigridPreconditioner<float>> make_multigrid_preconditioner(
    std::shared_ptr<const Backend>, const DiaData<float>&, const GridBox&,
    const MultigridParameters&, const DiaMatrix<float>*);
template std::unique_ptr<MultigridPreconditioner<double>> make_multigrid_preconditioner(
    std::shared_ptr<const Backend>, const DiaData<double>&, const GridBox&,
    const MultigridParameters&, const DiaMatrix<double>*);
template class MultigridPreconditioner<float>;
template class MultigridPreconditioner<double>;

}  // namespace simrun::solvers
