#include "multigrid/smoother.hpp"

namespace simrun::solvers::multigrid {

template <typename T>
SmootherKind<T> smoother_kind(MultigridSmoother smoother) {
    switch (smoother) {
        case MultigridSmoother::chebyshev:
            return chebyshev<T>();
        case MultigridSmoother::red_black_gauss_seidel:
            break;
    }
    return red_black_gauss_seidel<T>();
}

template SmootherKind<float> smoother_kind(MultigridSmoother);
template SmootherKind<double> smoother_kind(MultigridSmoother);

}  // namespace simrun::solvers::multigrid
