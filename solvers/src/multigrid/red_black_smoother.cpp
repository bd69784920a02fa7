// Red-black Gauss-Seidel: 2 colours where the couplings lie along the axes, 2^dimension (the
// parity of each coordinate) where they do not, so that each colour's points are uncoupled.
// The colours are the whole box's, so over ranks a sweep is, to rounding, that of one process
// taking the colours in the same order (colour_order).
#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

#include "base/kernel_table.hpp"
#include "multigrid/level.hpp"
#include "multigrid/smoother.hpp"
#include "simrun/solvers/base/vector_ops.hpp"

namespace simrun::solvers::multigrid {
namespace {

// The points of `own` (a part of the window, in its coordinates) next to the window's halo, as
// disjoint ranges: along each axis in turn, the layer before and after where the window goes
// on, without the layers already taken.
std::vector<BoxRange> boundary_ranges(const Box& own, const GridBox& window) {
    std::vector<BoxRange> ranges;
    Box rest = own;
    for (std::size_t axis = 0; axis < static_cast<std::size_t>(window.dimension); ++axis) {
        const auto add = [&](std::int64_t at) {
            BoxRange range{};
            for (std::size_t a = 0; a < 3; ++a) {
                range.lower[a] = rest.lower[a];
                range.upper[a] = rest.upper[a];
            }
            range.lower[axis] = at;
            range.upper[axis] = at + 1;
            if (range.size() > 0) ranges.push_back(range);
        };
        if (rest.lower[axis] > 0 && rest.points(axis) > 0) add(rest.lower[axis]++);
        if (rest.upper[axis] < window.points[axis] && rest.points(axis) > 0) {
            add(--rest.upper[axis]);
        }
    }
    return ranges;
}

// The colours of the whole box in the order a forward sweep takes them: with 2^dimension
// colours, those of even parity along `slow_axes` first, each group in order (x's parity
// fastest); red and black in order.
std::vector<int> colour_order(int colours, unsigned slow_axes) {
    std::vector<int> order(static_cast<std::size_t>(colours));
    std::iota(order.begin(), order.end(), 0);
    if (colours == 2) return order;
    const auto key = [slow_axes](int colour) {
        const auto bits = static_cast<unsigned>(colour);
        return ((bits & slow_axes) << 3) | (bits & ~slow_axes);
    };
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return key(a) < key(b); });
    return order;
}

template <typename T>
class RedBlackSmoother final : public Smoother<T> {
public:
    RedBlackSmoother(std::shared_ptr<const Backend> backend, const SmootherSetup& setup)
        : backend_(std::move(backend)),
          colours_(setup.colours),
          order_(colour_order(setup.colours, setup.slow_axes)),
          colour_flip_(setup.colour_flip),
          split_axes_(setup.split_axes) {}

    // Both colours of a sweep in one pass where the back-end fuses them: `swept`, the vector a
    // pass writes into, and over ranks the points next to the halo (`own`'s boundary layers in
    // the window), whose second colour is swept again after the exchange.
    void fuse(Array<T> swept, std::vector<BoxRange> boundary) {
        swept_ = std::move(swept);
        boundary_ = std::move(boundary);
    }

    bool moves_iterate() const override { return swept_.size() > 0; }
    T* spare(T* x) const override { return swept_.size() > 0 ? swept_.data() : x; }

    T* smooth(Level<T>& level, const T* b, T* x, T* spare, int sweeps,
              bool forward) const override {
        if (swept_.size() > 0) return fused(level, b, x, spare, sweeps, forward);
        return by_colour(level, b, x, sweeps, forward);
    }

    // A sweep (all colours): the matrix, b and x read, x written.
    double sweep_bytes(double matrix, double n, double value) const override {
        return matrix + 3 * n * value;
    }

private:
    T* fused(Level<T>& level, const T* b, T* x, T* spare, int sweeps, bool forward) const {
        const KernelTable<T>& kernels = backend_->kernels<T>();
        const DiaView<T> a = level.a->view();
        // Both colours in one pass (fused on this back-end), from one vector into the other.
        for (int sweep = 0; sweep < sweeps; ++sweep) {
            const int first = (forward ? 0 : 1) ^ colour_flip_;
            kernels.box_red_black_sweep(*backend_, a, level.main, level.shape, first, b, x, spare);
            std::swap(x, spare);
            if (level.exchanges()) {
                // Over ranks the pass read the halo as it was before the neighbours' sweep, so
                // the second colour of this rank's points next to the halo (which reads the
                // first colour across) is not yet the one-process sweep's; everything else is.
                // With the neighbours' points after their pass (their first colour now right),
                // that colour is swept again on those points, and the halo exchanged again: the
                // same exchanges as a colour at a time, and one pass over the level instead of
                // two.
                level.exchange(x);
                for (const BoxRange& part : boundary_) {
                    kernels.box_colour_sweep_part(*backend_, a, level.main, level.shape, 1 - first,
                                                  part, b, x);
                }
                level.exchange(x);
            }
        }
        return x;
    }

    T* by_colour(Level<T>& level, const T* b, T* x, int sweeps, bool forward) const {
        const KernelTable<T>& kernels = backend_->kernels<T>();
        const DiaView<T> a = level.a->view();
        // Over ranks a colour's new values cross to the neighbours' halo before a colour that
        // reads them. A point reads across the ranks only neighbours one step along a split
        // axis, whose parity along it differs: with red-black colours the other colour; with
        // the parity of each coordinate (2^dimension colours, bit a the parity along axis a)
        // the colours whose bits along the split axes differ. So the halo is exchanged before a
        // colour whose split bits differ from those swept since the last exchange, and after
        // each sweep. On slabs (the last axis split, its bit the highest) that is once after
        // each half of the colours, the points of the even planes and those of the odd ones:
        // 2 exchanges a sweep instead of 2^dimension, the same values; on a process grid of
        // boxes split along every axis, after each colour.
        const unsigned split_bits = colours_ == 2 ? 1u : split_axes_;
        for (int sweep = 0; sweep < sweeps; ++sweep) {
            bool pending = false;
            unsigned pending_bits = 0;
            for (int c = 0; c < colours_; ++c) {
                const int colour =
                    order_[static_cast<std::size_t>(forward ? c : colours_ - 1 - c)] ^ colour_flip_;
                const unsigned bits = static_cast<unsigned>(colour) & split_bits;
                if (pending && bits != pending_bits) level.exchange(x);
                kernels.box_colour_sweep(*backend_, a, level.main, level.shape, colours_, colour, b,
                                         x);
                pending = true;
                pending_bits = bits;
            }
            level.exchange(x);
        }
        return x;
    }

    std::shared_ptr<const Backend> backend_;
    int colours_;
    std::vector<int> order_;  // the whole box's colours, as a forward sweep takes them
    int colour_flip_;
    unsigned split_axes_;
    mutable Array<T> swept_;
    std::vector<BoxRange> boundary_;
};

}  // namespace

template <typename T>
SmootherKind<T> red_black_gauss_seidel() {
    return {.words = "red-black Gauss-Seidel",
            .reads_inverse_diagonal = false,
            .make = [](std::shared_ptr<const Backend> backend, const Level<T>& level, Array<T>,
                       const SmootherSetup& setup) {
                auto smoother = std::make_unique<RedBlackSmoother<T>>(backend, setup);
                // Both colours of a sweep in one pass where the back-end fuses them (over ranks
                // the second colour of the points next to the halo is then swept again, with
                // the neighbours').
                if (setup.colours == 2 &&
                    backend->kernels<T>().fuses_red_black_sweep(level.a->view(), level.shape)) {
                    Array<T> swept(backend, static_cast<std::size_t>(level.box.size()));
                    if (setup.zeroed) fill(swept, T(0));
                    smoother->fuse(std::move(swept), setup.own
                                                         ? boundary_ranges(*setup.own, level.box)
                                                         : std::vector<BoxRange>{});
                }
                return std::unique_ptr<Smoother<T>>(std::move(smoother));
            }};
}

template SmootherKind<float> red_black_gauss_seidel();
template SmootherKind<double> red_black_gauss_seidel();

}  // namespace simrun::solvers::multigrid
