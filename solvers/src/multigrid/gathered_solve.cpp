#include "multigrid/gathered_solve.hpp"

#include <utility>

#include "multigrid/box_exchange.hpp"
#include "multigrid/hierarchy.hpp"
#include "multigrid/slab_exchange.hpp"
#include "simrun/solvers/base/communicator.hpp"

namespace simrun::solvers::multigrid {
namespace {

// Each rank's part into `whole` on every rank: over slabs it is already there (the level
// above restricted into it); over a process grid it comes from the rank's `window`.
template <typename T>
void gather_into(const LevelGather<T>& gather, const T*, Array<T>& whole) {
    gather.gather(whole);
}
template <typename T>
void gather_into(const BoxGather<T>& gather, const T* window, Array<T>& whole) {
    gather.gather(window, whole);
}
// The correction back where the level above reads it: over slabs `whole` itself.
template <typename T>
void give_back(const LevelGather<T>&, const Array<T>&, T*) {}
template <typename T>
void give_back(const BoxGather<T>& gather, const Array<T>& whole, T* window) {
    gather.window_of(whole, window);
}

template <typename T, typename Gather>
class GatheredSolve final : public CoarsestSolve<T> {
public:
    GatheredSolve(std::unique_ptr<Hierarchy<T>> rest, std::unique_ptr<Gather> gather)
        : rest_(std::move(rest)), gather_(std::move(gather)) {}

    void solve(Level<T>& level, const T* b, T* x, MultigridCycle kind, bool x_zero,
               bool timed) const override {
        gather_into(*gather_, b, level.b);
        if (!x_zero) gather_into(*gather_, static_cast<const T*>(x), level.x);
        // The cycle asked for (an F-cycle visits with F, then V): the gathered hierarchy's
        // own, recorded, where it is that kind.
        if (kind == rest_->parameters().cycle && !timed) {
            rest_->cycle(level.b, level.x);
        } else {
            rest_->runner().run(0, level.b.data(), level.x.data(), kind, nullptr);
        }
        give_back(*gather_, level.x, x);
    }
    double bytes(const Level<T>&) const override { return rest_->bytes_per_cycle(); }

private:
    std::unique_ptr<Hierarchy<T>> rest_;
    std::unique_ptr<Gather> gather_;
};

}  // namespace

template <typename T, typename Gather>
std::unique_ptr<CoarsestSolve<T>> gathered_solve(std::unique_ptr<Hierarchy<T>> rest,
                                                 std::unique_ptr<Gather> gather) {
    return std::make_unique<GatheredSolve<T, Gather>>(std::move(rest), std::move(gather));
}

template <typename T>
std::unique_ptr<Level<T>> Hierarchy<T>::gathered_level(const DiaData<double>& rows,
                                                       const GridBox& box, std::size_t split_levels,
                                                       std::unique_ptr<Hierarchy<T>>& rest) {
    // The rest, gathered: one process's hierarchy on each rank, with the levels left.
    auto gathered = std::make_unique<Level<T>>();
    gathered->box = box;
    gathered->shape = shape_of(box);
    MultigridParameters parameters = parameters_;
    parameters.max_levels = parameters_.max_levels - static_cast<int>(split_levels);
    all_or_none(backend_->communicator(), [&] {
        rest = std::make_unique<Hierarchy<T>>(backend_, parameters, true);
        rest->build_whole(rows, box, {});
        const auto n = static_cast<std::size_t>(box.size());
        gathered->b = Array<T>(backend_, n);
        gathered->x = Array<T>(backend_, n);
    });
    const auto& rest_levels = rest->summaries();
    summaries_.insert(summaries_.end(), rest_levels.begin(), rest_levels.end());
    split_levels_ = split_levels;
    return gathered;
}

#define SIMRUN_GATHERED_SOLVE(T)                                                                \
    template std::unique_ptr<CoarsestSolve<T>> gathered_solve(std::unique_ptr<Hierarchy<T>>,    \
                                                              std::unique_ptr<LevelGather<T>>); \
    template std::unique_ptr<CoarsestSolve<T>> gathered_solve(std::unique_ptr<Hierarchy<T>>,    \
                                                              std::unique_ptr<BoxGather<T>>);   \
    template std::unique_ptr<Level<T>> Hierarchy<T>::gathered_level(                            \
        const DiaData<double>&, const GridBox&, std::size_t, std::unique_ptr<Hierarchy<T>>&);
SIMRUN_GATHERED_SOLVE(float)
SIMRUN_GATHERED_SOLVE(double)
#undef SIMRUN_GATHERED_SOLVE

}  // namespace simrun::solvers::multigrid
