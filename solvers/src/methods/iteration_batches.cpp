#include "iteration_batches.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace simrun::solvers {

void IterationBatches::issue(std::int64_t count, const Buffers& buffers) {
    if (count < 1 || count > max_batch) {
        throw std::invalid_argument("IterationBatches: a batch has 1 to 64 iterations");
    }
    if (buffers != buffers_) {
        for (auto& run : runs_) run.reset();
        buffers_ = buffers;
    }
    for (std::size_t b = runs_.size(); b-- > 0;) {
        const std::int64_t length = std::int64_t{1} << b;
        if ((count & length) == 0) continue;
        if (!runs_[b]) {
            runs_[b] = backend_.record([this, length] { issue_(length); });
        }
        runs_[b]->run();
    }
}

std::int64_t IterationBatches::next_length(const std::vector<double>& history, double target,
                                           std::int64_t remaining) {
    constexpr std::size_t window = 16;  // iterations the rate is measured over
    std::int64_t length = 8;
    if (history.size() >= 3) {
        const std::size_t last = history.size() - 1;
        const std::size_t span = std::min(window, last - 1);  // r_0 is often atypical
        const double now = history[last];
        const double rate = std::pow(now / history[last - span], 1.0 / double(span));
        if (!(rate < 1.0) || !(now > 0.0) || !(target > 0.0)) {
            length = max_batch;
        } else {
            const double needed = std::log(target / now) / std::log(rate);
            length = needed < double(max_batch) ? std::int64_t(std::ceil(needed)) + 1 : max_batch;
        }
    }
    return std::clamp<std::int64_t>(length, 1, std::min<std::int64_t>(remaining, max_batch));
}

}  // namespace simrun::solvers
