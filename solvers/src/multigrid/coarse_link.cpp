#include "multigrid/coarse_link.hpp"

#include <utility>

#include "base/kernel_table.hpp"
#include "multigrid/level.hpp"
#include "multigrid/partitioned_levels.hpp"
#include "simrun/solvers/base/vector_ops.hpp"

namespace simrun::solvers::multigrid {
namespace {

// The next level's x set to zero (where this rank holds any of it).
template <typename T>
void zero_x(const Backend& backend, Level<T>& next) {
    if (next.x.size() > 0) backend.kernels<T>().fill(backend, next.x.size(), T(0), next.x.data());
}

template <typename T>
class OffsetLink final : public CoarseLink<T> {
public:
    OffsetLink(std::shared_ptr<const Backend> backend, std::size_t offset)
        : backend_(std::move(backend)), offset_(offset) {}
    T* next_b(Level<T>& next) const override { return next.b.data(); }
    T* next_x(Level<T>& next) const override { return next.x.data(); }
    T* restricted(Level<T>& next) const override { return next.b.data() + offset_; }
    void hand_down(Level<T>& next) const override { zero_x(*backend_, next); }
    const T* take_up(Level<T>& next) const override { return next.x.data() + offset_; }
    std::size_t coarse_points(const Level<T>& next) const override {
        return static_cast<std::size_t>(next.box.size());
    }

private:
    std::shared_ptr<const Backend> backend_;
    std::size_t offset_;
};

template <typename T>
class HandoffLink final : public CoarseLink<T> {
public:
    HandoffLink(std::shared_ptr<const Backend> backend, const HandoffPlan& handoff)
        : backend_(std::move(backend)),
          window_(backend_, static_cast<std::size_t>(handoff.window_points)),
          down_(Redistribution<T>::point_to_point(backend_, handoff.restricted, handoff.held)),
          up_(Redistribution<T>::point_to_point(backend_, handoff.held, handoff.reached)) {
        // Zero once: the window's points no rank restricts (beyond this rank's own) stay
        // finite.
        if (window_.size() > 0) fill(window_, T(0));
    }
    T* next_b(Level<T>& next) const override { return next.b.data(); }
    T* next_x(Level<T>& next) const override { return next.x.data(); }
    T* restricted(Level<T>&) const override { return window_.data(); }
    void hand_down(Level<T>& next) const override {
        down_->run(window_.data(), next.b.data());
        zero_x(*backend_, next);
    }
    const T* take_up(Level<T>& next) const override {
        up_->run(next.x.data(), window_.data());
        return window_.data();
    }
    std::size_t coarse_points(const Level<T>&) const override { return window_.size(); }

private:
    std::shared_ptr<const Backend> backend_;
    mutable Array<T> window_;
    std::unique_ptr<Redistribution<T>> down_, up_;
};

template <typename T>
class WindowLink final : public CoarseLink<T> {
public:
    WindowLink(std::shared_ptr<const Backend> backend, std::size_t window_points)
        : backend_(std::move(backend)), b_(backend_, window_points), x_(backend_, window_points) {}
    T* next_b(Level<T>&) const override { return b_.data(); }
    T* next_x(Level<T>&) const override { return x_.data(); }
    T* restricted(Level<T>&) const override { return b_.data(); }
    void hand_down(Level<T>& next) const override { zero_x(*backend_, next); }
    const T* take_up(Level<T>&) const override { return x_.data(); }
    std::size_t coarse_points(const Level<T>&) const override { return b_.size(); }

private:
    std::shared_ptr<const Backend> backend_;
    mutable Array<T> b_, x_;
};

}  // namespace

template <typename T>
std::unique_ptr<CoarseLink<T>> offset_link(std::shared_ptr<const Backend> backend,
                                           std::size_t offset) {
    return std::make_unique<OffsetLink<T>>(std::move(backend), offset);
}

template <typename T>
std::unique_ptr<CoarseLink<T>> handoff_link(std::shared_ptr<const Backend> backend,
                                            const HandoffPlan& handoff) {
    return std::make_unique<HandoffLink<T>>(std::move(backend), handoff);
}

template <typename T>
std::unique_ptr<CoarseLink<T>> window_link(std::shared_ptr<const Backend> backend,
                                           std::size_t window_points) {
    return std::make_unique<WindowLink<T>>(std::move(backend), window_points);
}

#define SIMRUN_COARSE_LINKS(T)                                                           \
    template std::unique_ptr<CoarseLink<T>> offset_link(std::shared_ptr<const Backend>,  \
                                                        std::size_t);                    \
    template std::unique_ptr<CoarseLink<T>> handoff_link(std::shared_ptr<const Backend>, \
                                                         const HandoffPlan&);            \
    template std::unique_ptr<CoarseLink<T>> window_link(std::shared_ptr<const Backend>,  \
                                                        std::size_t);
SIMRUN_COARSE_LINKS(float)
SIMRUN_COARSE_LINKS(double)
#undef SIMRUN_COARSE_LINKS

}  // namespace simrun::solvers::multigrid
