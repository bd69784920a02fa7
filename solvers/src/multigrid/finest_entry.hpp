#pragma once
// How a caller's b and x (this rank's points of the finest level) reach the finest level's
// vectors and come back around a cycle: on one process they are its vectors (the cycle
// recorded once per pair); where this rank's part is one run of its finest window (whole
// planes of it, as a slab's is) they are copied into and out of the finest window (or the level
// gathered whole) at this rank's offset; otherwise they are scattered into the finest window
// and gathered back (or, where the finest level is gathered, are the window the gather reads).
#include <memory>
#include <vector>

#include "base/kernel_table.hpp"
#include "multigrid/cycle.hpp"
#include "simrun/solvers/base/array.hpp"

namespace simrun::solvers::multigrid {

template <typename T>
class FinestEntry {
public:
    virtual ~FinestEntry() = default;
    // x = x + one cycle's correction for A x = b, or from x = 0 (x not read); timed by level
    // where `seconds` is given.
    virtual void run(const Array<T>& b, Array<T>& x, bool from_zero,
                     std::vector<double>* seconds) const = 0;
    // Whether run_other_from_zero serves: over ranks, where this rank's points lie in the
    // finest window (not where the finest level is gathered).
    virtual bool enters_other() const { return false; }
    // z = one cycle from zero on r, both in the other precision: r rounded straight into this
    // rank's points of the finest level's b, z widened straight out of its x (no vectors of
    // this precision between). Where enters_other().
    virtual void run_other_from_zero(const OtherPrecision<T>* r, OtherPrecision<T>* z) const;
};

// `parameters`, `cycle` and `finest` are the hierarchy's, which outlives the entry.
template <typename T>
std::unique_ptr<FinestEntry<T>> whole_entry(std::shared_ptr<const Backend> backend,
                                            const Cycle<T>& cycle,
                                            const MultigridParameters& parameters);
template <typename T>
std::unique_ptr<FinestEntry<T>> offset_entry(std::shared_ptr<const Backend> backend,
                                             const Cycle<T>& cycle,
                                             const MultigridParameters& parameters,
                                             Level<T>& finest, std::size_t size);
// `own_index`: where this rank's points lie in the finest window, `own` the same as a range of
// it (empty where the finest level is gathered).
template <typename T>
std::unique_ptr<FinestEntry<T>> scatter_entry(std::shared_ptr<const Backend> backend,
                                              const Cycle<T>& cycle,
                                              const MultigridParameters& parameters,
                                              Level<T>& finest, Array<std::int64_t> own_index,
                                              BoxRange own, bool finest_gathered);

}  // namespace simrun::solvers::multigrid
