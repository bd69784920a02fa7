#include "multigrid/finest_entry.hpp"

#include <stdexcept>
#include <utility>

#include "base/kernel_table.hpp"
#include "simrun/solvers/base/vector_ops.hpp"

namespace simrun::solvers::multigrid {

template <typename T>
void FinestEntry<T>::run_other_from_zero(const OtherPrecision<T>*, OtherPrecision<T>*) const {
    throw std::logic_error(
        "multigrid: a cycle entered from the other precision where this rank's points are not "
        "in the finest window");
}

namespace {

// One process: the caller's vectors are the finest level's. The whole cycle is one recorded
// unit (on CUDA a graph: one launch instead of a few per level), recorded again when it is
// asked of other vectors.
template <typename T>
class WholeEntry final : public FinestEntry<T> {
public:
    WholeEntry(std::shared_ptr<const Backend> backend, const Cycle<T>& cycle,
               const MultigridParameters& parameters)
        : backend_(std::move(backend)), cycle_(cycle), parameters_(parameters) {}

    void run(const Array<T>& b, Array<T>& x, bool from_zero,
             std::vector<double>* seconds) const override {
        if (seconds != nullptr) {
            cycle_.run(0, b.data(), x.data(), parameters_.cycle, seconds);
            return;
        }
        if (from_zero) fill(x, T(0));
        const T* b_data = b.data();
        T* x_data = x.data();
        recorded_.run(*backend_, b_data, x_data, [this, b_data, x_data] {
            cycle_.run(0, b_data, x_data, parameters_.cycle, nullptr);
        });
    }

private:
    std::shared_ptr<const Backend> backend_;
    const Cycle<T>& cycle_;
    const MultigridParameters& parameters_;
    mutable RecordedForOperands recorded_;
};

// Over ranks the cycle is not recorded: host-staged exchanges wait on the host, the device
// halos count their exchanges (and so their slots) on the host, and the coarse level is
// gathered through the host. (A recording in parts, the gathers between them, the exchanges
// counted on the device, was measured no faster on four GPUs: docs/benchmarks.md.)

// A part that is one run of its window (whole planes of it, as a slab's is): b and x into the
// finest level's vectors (a window, or the level gathered whole) at this rank's offset, x's
// halo from the neighbours (or, from zero, the window zeroed); after the cycle x back from them.
template <typename T>
class OffsetEntry final : public FinestEntry<T> {
public:
    OffsetEntry(std::shared_ptr<const Backend> backend, const Cycle<T>& cycle,
                const MultigridParameters& parameters, Level<T>& finest, std::size_t size)
        : backend_(std::move(backend)),
          cycle_(cycle),
          parameters_(parameters),
          finest_(finest),
          size_(size) {}

    bool enters_other() const override { return true; }

    void run(const Array<T>& b, Array<T>& x, bool from_zero,
             std::vector<double>* seconds) const override {
        const std::size_t bytes = size_ * sizeof(T);
        backend_->copy(own_b(), b.data(), bytes);
        if (from_zero) {
            fill(finest_.x, T(0));
        } else {
            backend_->copy(finest_.x.data() + finest_.spread.own_offset, x.data(), bytes);
            finest_.exchange(finest_.x.data());
        }
        cycle_.run(0, finest_.b.data(), finest_.x.data(), parameters_.cycle, seconds, from_zero);
        backend_->copy(x.data(), own_x(), bytes);
    }

    void run_other_from_zero(const OtherPrecision<T>* r, OtherPrecision<T>* z) const override {
        // The window zeroed: n + 2 planes written instead of n read and written and a halo
        // exchanged.
        backend_->kernels<OtherPrecision<T>>().copy_to_other(*backend_, size_, r, own_b());
        fill(finest_.x, T(0));
        cycle_.run(0, finest_.b.data(), finest_.x.data(), parameters_.cycle, nullptr, true);
        backend_->kernels<T>().copy_to_other(*backend_, size_, own_x(), z);
    }

private:
    T* own_b() const { return finest_.b.data() + finest_.spread.own_offset; }
    const T* own_x() const { return finest_.x.data() + finest_.spread.own_offset; }

    std::shared_ptr<const Backend> backend_;
    const Cycle<T>& cycle_;
    const MultigridParameters& parameters_;
    Level<T>& finest_;
    std::size_t size_;
};

// Over a process grid: the part's points scattered into the finest window, or where the
// finest level is gathered, the part is its own window.
template <typename T>
class ScatterEntry final : public FinestEntry<T> {
public:
    ScatterEntry(std::shared_ptr<const Backend> backend, const Cycle<T>& cycle,
                 const MultigridParameters& parameters, Level<T>& finest,
                 Array<std::int64_t> own_index, BoxRange own, bool finest_gathered)
        : backend_(std::move(backend)),
          cycle_(cycle),
          parameters_(parameters),
          finest_(finest),
          own_index_(std::move(own_index)),
          own_(own),
          finest_gathered_(finest_gathered) {}

    bool enters_other() const override { return !finest_gathered_; }

    void run_other_from_zero(const OtherPrecision<T>* r, OtherPrecision<T>* z) const override {
        if (finest_gathered_) FinestEntry<T>::run_other_from_zero(r, z);  // (throws)
        // Traffic: r read and the finest b's own points written, the window's x zeroed, its
        // own points read and z written: as a part that is one run of its window moves.
        backend_->kernels<OtherPrecision<T>>().copy_part_to_other(*backend_, finest_.shape, own_,
                                                                  true, r, finest_.b.data());
        fill(finest_.x, T(0));
        cycle_.run(0, finest_.b.data(), finest_.x.data(), parameters_.cycle, nullptr, true);
        backend_->kernels<T>().copy_part_to_other(*backend_, finest_.shape, own_, false,
                                                  finest_.x.data(), z);
    }

    void run(const Array<T>& b, Array<T>& x, bool from_zero,
             std::vector<double>* seconds) const override {
        const KernelTable<T>& kernels = backend_->kernels<T>();
        if (from_zero) fill(finest_.x, T(0));
        if (finest_gathered_) {
            cycle_.run(0, b.data(), x.data(), parameters_.cycle, seconds, from_zero);
            return;
        }
        const std::size_t n = own_index_.size();
        kernels.scatter(*backend_, n, own_index_.data(), b.data(), finest_.b.data());
        if (!from_zero) {
            kernels.scatter(*backend_, n, own_index_.data(), x.data(), finest_.x.data());
            finest_.exchange(finest_.x.data());
        }
        cycle_.run(0, finest_.b.data(), finest_.x.data(), parameters_.cycle, seconds, from_zero);
        kernels.gather(*backend_, n, own_index_.data(), finest_.x.data(), x.data());
    }

private:
    std::shared_ptr<const Backend> backend_;
    const Cycle<T>& cycle_;
    const MultigridParameters& parameters_;
    Level<T>& finest_;
    Array<std::int64_t> own_index_;
    BoxRange own_;
    bool finest_gathered_;
};

}  // namespace

template <typename T>
std::unique_ptr<FinestEntry<T>> whole_entry(std::shared_ptr<const Backend> backend,
                                            const Cycle<T>& cycle,
                                            const MultigridParameters& parameters) {
    return std::make_unique<WholeEntry<T>>(std::move(backend), cycle, parameters);
}

template <typename T>
std::unique_ptr<FinestEntry<T>> offset_entry(std::shared_ptr<const Backend> backend,
                                             const Cycle<T>& cycle,
                                             const MultigridParameters& parameters,
                                             Level<T>& finest, std::size_t size) {
    return std::make_unique<OffsetEntry<T>>(std::move(backend), cycle, parameters, finest, size);
}

template <typename T>
std::unique_ptr<FinestEntry<T>> scatter_entry(std::shared_ptr<const Backend> backend,
                                              const Cycle<T>& cycle,
                                              const MultigridParameters& parameters,
                                              Level<T>& finest, Array<std::int64_t> own_index,
                                              BoxRange own, bool finest_gathered) {
    return std::make_unique<ScatterEntry<T>>(std::move(backend), cycle, parameters, finest,
                                             std::move(own_index), own, finest_gathered);
}

#define SIMRUN_FINEST_ENTRIES(T)                                                                \
    template class FinestEntry<T>;                                                              \
    template std::unique_ptr<FinestEntry<T>> whole_entry(                                       \
        std::shared_ptr<const Backend>, const Cycle<T>&, const MultigridParameters&);           \
    template std::unique_ptr<FinestEntry<T>> offset_entry(                                      \
        std::shared_ptr<const Backend>, const Cycle<T>&, const MultigridParameters&, Level<T>&, \
        std::size_t);                                                                           \
    template std::unique_ptr<FinestEntry<T>> scatter_entry(                                     \
        std::shared_ptr<const Backend>, const Cycle<T>&, const MultigridParameters&, Level<T>&, \
        Array<std::int64_t>, BoxRange, bool);
SIMRUN_FINEST_ENTRIES(float)
SIMRUN_FINEST_ENTRIES(double)
#undef SIMRUN_FINEST_ENTRIES

}  // namespace simrun::solvers::multigrid
