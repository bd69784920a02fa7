#pragma once
// When a series index (the .pvd, the .xmf) is rewritten. An index is replaced whole, atomically
// (a reader or a killed run sees the old one or the new one), so rewriting it at every step
// costs time quadratic in the steps: 8,000 output steps took 100 s. It is rewritten once it
// would list a sixteenth more steps than the copy on disk (every step while it lists fewer than
// 16), so all the rewrites together write at most 17 times its final size, and brought up to
// date when the run's output ends. A killed run's index lists all but its last few steps
// (each one it lists is complete); --restart reads the .h5, which holds every step.
#include <cstddef>

namespace simrun::framework {

class IndexSchedule {
public:
    // A change (a step added or replaced) now lists `listed` steps; true when the index should
    // be rewritten now.
    bool changed(std::size_t listed) {
        stale_ = true;
        return listed > on_disk_ && 16 * listed >= 17 * on_disk_;
    }
    bool stale() const { return stale_; }
    void written(std::size_t listed) {
        on_disk_ = listed;
        stale_ = false;
    }

private:
    std::size_t on_disk_ = 0;
    bool stale_ = false;
};

}  // namespace simrun::framework
