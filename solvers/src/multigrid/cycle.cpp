#include "multigrid/cycle.hpp"

#include <chrono>
#include <span>

#include "base/kernel_table.hpp"
#include "multigrid/level_transfer.hpp"

namespace simrun::solvers::multigrid {
namespace {

// The cycles of the next level a `kind` cycle visits: V once; W twice; F an F-cycle, then V.
std::span<const MultigridCycle> visits(MultigridCycle kind) {
    static constexpr MultigridCycle v[] = {MultigridCycle::v};
    static constexpr MultigridCycle w[] = {MultigridCycle::w, MultigridCycle::w};
    static constexpr MultigridCycle f[] = {MultigridCycle::f, MultigridCycle::v};
    switch (kind) {
        case MultigridCycle::w:
            return w;
        case MultigridCycle::f:
            return f;
        case MultigridCycle::automatic:  // (resolved by the hierarchy)
        case MultigridCycle::v:
            break;
    }
    return v;
}

// A level's own work timed between synchronisations, where `seconds` is given.
class LevelClock {
public:
    LevelClock(const Backend& backend, std::vector<double>* seconds, std::size_t level)
        : backend_(backend), seconds_(seconds), level_(level) {}
    void begin() {
        if (seconds_ == nullptr) return;
        backend_.synchronize();
        start_ = std::chrono::steady_clock::now();
    }
    void end() {
        if (seconds_ == nullptr) return;
        backend_.synchronize();
        (*seconds_)[level_] +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }

private:
    const Backend& backend_;
    std::vector<double>* seconds_;
    std::size_t level_;
    std::chrono::steady_clock::time_point start_;
};

}  // namespace

template <typename T>
void Cycle<T>::run(std::size_t l, const T* b, T* x, MultigridCycle kind,
                   std::vector<double>* seconds, bool x_zero) const {
    const KernelTable<T>& kernels = backend_->kernels<T>();
    Level<T>& level = *levels_[l];
    LevelClock clock(*backend_, seconds, l);
    clock.begin();
    if (level.coarsest) {  // below the finest level, x is zero (its link set it)
        level.coarsest->solve(level, b, x, kind, x_zero || l > 0, seconds != nullptr);
        clock.end();
        return;
    }
    Level<T>& next = *levels_[l + 1];
    const CoarseLink<T>& link = *level.link;
    const auto visit = [&] {
        for (const MultigridCycle below : visits(kind)) {
            run(l + 1, link.next_b(next), link.next_x(next), below, seconds);
        }
    };
    if (!level.holds()) {  // only the levels below, for their collectives
        clock.end();
        visit();
        return;
    }
    // The iterate moves between x and the smoother's spare vector as the sweeps write (where
    // they write into another vector); it ends in x.
    T* spare = level.smoother->spare(x);
    T* current = level.smoother->smooth(level, b, x, spare, parameters_.pre_sweeps, true);
    spare = current == x ? spare : x;
    T* r = level.r.data();
    kernels.dia_residual(*backend_, level.a->view(), b, current, r);  // r = b - A x
    level.exchange(r);
    kernels.box_restrict(*backend_, level.transfer.view, r, link.restricted(next));
    link.hand_down(next);
    clock.end();
    visit();
    clock.begin();
    kernels.box_interpolate_add(*backend_, level.transfer.view, link.take_up(next), current);
    level.exchange(current);
    // Backward for a symmetric cycle; forward again otherwise (about 4 times the contraction of
    // the symmetric order for the 5-point Laplacian: 0.06 against 0.24 per V(1,1) cycle).
    current = level.smoother->smooth(level, b, current, spare, parameters_.post_sweeps,
                                     !parameters_.symmetric);
    if (current != x) {  // an odd number of sweeps in all
        backend_->copy(x, current, static_cast<std::size_t>(level.box.size()) * sizeof(T));
    }
    clock.end();
}

// Level l's traffic and that of the levels below as the cycle visits them (as run() does).
template <typename T>
double Cycle<T>::bytes(std::size_t l, MultigridCycle kind) const {
    const Level<T>& level = *levels_[l];
    if (level.coarsest) return level.coarsest->bytes(level);
    const auto value = static_cast<double>(sizeof(T));
    const double n = static_cast<double>(level.box.size());
    // The levels below, as the cycle visits them.
    const auto below = [&] {
        switch (kind) {
            case MultigridCycle::automatic:  // (resolved by the hierarchy)
            case MultigridCycle::v:
                return bytes(l + 1, MultigridCycle::v);
            case MultigridCycle::w:
                return 2 * bytes(l + 1, MultigridCycle::w);
            case MultigridCycle::f:
                return bytes(l + 1, MultigridCycle::f) + bytes(l + 1, MultigridCycle::v);
        }
        return 0.0;
    };
    if (!level.holds()) return below();
    const DiaView<T> a = level.a->view();
    // One pass over the matrix: a mask or class byte per row, or its diagonals.
    const double matrix =
        a.row_masks != nullptr || a.row_classes != nullptr ? n : n * a.num_diagonals * value;
    // The coarse points the transfer reaches, and their weights (or a class byte each).
    const double coarse = static_cast<double>(level.link->coarse_points(*levels_[l + 1]));
    const double weights = level.transfer.view.weight_class != nullptr
                               ? coarse
                               : coarse * transfer_slots(level.box.dimension) * value;
    const double sweep = level.smoother->sweep_bytes(matrix, n, value);
    const int sweeps = parameters_.pre_sweeps + parameters_.post_sweeps;
    const double own = sweeps * sweep + (matrix + 3 * n * value)     // r = b - A x
                       + (n * value + coarse * value + weights)      // restrict
                       + coarse * value                              // the coarse x set to 0
                       + (2 * n * value + coarse * value + weights)  // x += P x_coarse
                       // the iterate copied back to x after an odd number of swept sweeps
                       + (level.smoother->moves_iterate() && sweeps % 2 == 1 ? 2 * n * value : 0.0);
    return own + below();
}

template class Cycle<float>;
template class Cycle<double>;

}  // namespace simrun::solvers::multigrid
