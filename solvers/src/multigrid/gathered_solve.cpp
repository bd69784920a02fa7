#include "multigrid/gathered_solve.hpp"

#include <utility>

#include "multigrid/hierarchy.hpp"
#include "multigrid/whole_levels.hpp"
#include "simrun/solvers/base/communicator.hpp"

namespace simrun::solvers::multigrid {
namespace {

template <typename T>
class GatheredSolve final : public CoarsestSolve<T> {
public:
    GatheredSolve(std::unique_ptr<Hierarchy<T>> rest, std::unique_ptr<Redistribution<T>> gather,
                  std::unique_ptr<Redistribution<T>> window_of)
        : rest_(std::move(rest)), gather_(std::move(gather)), window_of_(std::move(window_of)) {}

    void solve(Level<T>& level, const T* b, T* x, MultigridCycle kind, bool x_zero,
               bool timed) const override {
        gather_->run(b, level.b.data());
        if (!x_zero) gather_->run(x, level.x.data());
        // The cycle asked for (an F-cycle visits with F, then V): the gathered hierarchy's
        // own, recorded, where it is that kind.
        if (kind == rest_->parameters().cycle && !timed) {
            rest_->cycle(level.b, level.x);
        } else {
            rest_->runner().run(0, level.b.data(), level.x.data(), kind, nullptr);
        }
        // The correction back where the level above reads it (gathered in place: there).
        if (window_of_) window_of_->run(level.x.data(), x);
    }
    double bytes(const Level<T>&) const override { return rest_->bytes_per_cycle(); }

private:
    std::unique_ptr<Hierarchy<T>> rest_;
    std::unique_ptr<Redistribution<T>> gather_, window_of_;
};

}  // namespace

template <typename T>
std::unique_ptr<CoarsestSolve<T>> gathered_solve(std::unique_ptr<Hierarchy<T>> rest,
                                                 std::unique_ptr<Redistribution<T>> gather,
                                                 std::unique_ptr<Redistribution<T>> window_of) {
    return std::make_unique<GatheredSolve<T>>(std::move(rest), std::move(gather),
                                              std::move(window_of));
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
        WholeLevels plan(rows, box, parameters, backend_);
        rest->build(plan, static_cast<std::size_t>(box.size()), {});
        const auto n = static_cast<std::size_t>(box.size());
        gathered->b = Array<T>(backend_, n);
        gathered->x = Array<T>(backend_, n);
    });
    const auto& rest_levels = rest->summaries();
    summaries_.insert(summaries_.end(), rest_levels.begin(), rest_levels.end());
    split_levels_ = split_levels;
    return gathered;
}

#define SIMRUN_GATHERED_SOLVE(T)                                                                   \
    template std::unique_ptr<CoarsestSolve<T>> gathered_solve(std::unique_ptr<Hierarchy<T>>,       \
                                                              std::unique_ptr<Redistribution<T>>,  \
                                                              std::unique_ptr<Redistribution<T>>); \
    template std::unique_ptr<Level<T>> Hierarchy<T>::gathered_level(                               \
        const DiaData<double>&, const GridBox&, std::size_t, std::unique_ptr<Hierarchy<T>>&);
SIMRUN_GATHERED_SOLVE(float)
SIMRUN_GATHERED_SOLVE(double)
#undef SIMRUN_GATHERED_SOLVE

}  // namespace simrun::solvers::multigrid
