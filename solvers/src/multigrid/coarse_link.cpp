#include "multigrid/coarse_link.hpp"

#include <utility>

#include "base/kernel_table.hpp"
#include "multigrid/level.hpp"
#include "multigrid/slab_exchange.hpp"

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
    HandoffLink(std::shared_ptr<const Backend> backend, std::unique_ptr<LevelHandoff<T>> handoff)
        : backend_(std::move(backend)), handoff_(std::move(handoff)) {}
    T* next_b(Level<T>& next) const override { return next.b.data(); }
    T* next_x(Level<T>& next) const override { return next.x.data(); }
    T* restricted(Level<T>&) const override { return handoff_->window(); }
    void hand_down(Level<T>& next) const override {
        handoff_->hand_down(next.b.data() + next.spread.own_offset);
        zero_x(*backend_, next);
    }
    const T* take_up(Level<T>& next) const override {
        handoff_->take_up(next.x.data() + next.spread.own_offset);
        return handoff_->window();
    }
    std::size_t coarse_points(const Level<T>&) const override { return handoff_->window_points(); }

private:
    std::shared_ptr<const Backend> backend_;
    std::unique_ptr<LevelHandoff<T>> handoff_;
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
                                            std::unique_ptr<LevelHandoff<T>> handoff) {
    return std::make_unique<HandoffLink<T>>(std::move(backend), std::move(handoff));
}

template <typename T>
std::unique_ptr<CoarseLink<T>> window_link(std::shared_ptr<const Backend> backend,
                                           std::size_t window_points) {
    return std::make_unique<WindowLink<T>>(std::move(backend), window_points);
}

#define SIMRUN_COARSE_LINKS(T)                                                              \
    template std::unique_ptr<CoarseLink<T>> offset_link(std::shared_ptr<const Backend>,     \
                                                        std::size_t);                       \
    template std::unique_ptr<CoarseLink<T>> handoff_link(std::shared_ptr<const Backend>,    \
                                                         std::unique_ptr<LevelHandoff<T>>); \
    template std::unique_ptr<CoarseLink<T>> window_link(std::shared_ptr<const Backend>,     \
                                                        std::size_t);
SIMRUN_COARSE_LINKS(float)
SIMRUN_COARSE_LINKS(double)
#undef SIMRUN_COARSE_LINKS

}  // namespace simrun::solvers::multigrid
