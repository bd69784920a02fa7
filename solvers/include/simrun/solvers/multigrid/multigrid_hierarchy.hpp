#pragma once
// Geometric multigrid on a box of unknowns: the levels of a hierarchy and the cycle that
// runs them, on any back-end.
//
// Set-up (on the host, in double precision): each level coarsens by 2 the axes whose coupling
// is at least a quarter of the strongest (semi-coarsening where the operator is anisotropic),
// choosing per axis whether the box's end points are coarse points from the operator (ends
// that keep their coupling, as Neumann sides and identity rows do, are kept on the coarse
// level; ends that lost it, as eliminated Dirichlet sides, are not). The interpolation P is
// operator-dependent (black-box multigrid): a fine point between coarse points takes the
// weights -a_ij / a_ii of the stencil collapsed onto the axes it lies between, which are the
// (bi/tri)linear weights for constant coefficients and follow the flux across a coefficient
// jump. Restriction is P^T (full weighting for constant coefficients) and the coarse operator
// is the Galerkin product P^T A P, summed point by point on the box and kept in DIA with at
// most 3^dimension diagonals (the stencil storage where the coefficients are constant). The
// coarsest level is solved by a dense inverse.
//
// The cycle runs on the back-end (multigrid kernels of the kernel table) as one recorded unit
// (a CUDA graph on the GPU); no host round trip.
//
// Over several ranks (the back-end's communicator) each rank gives its rows: a block of whole
// planes of the box along its last axis (distributed_matrix.hpp's blocks: slabs, the process
// grid 1 x ... x K), or its part of a process grid of boxes with its rows on the part's window
// (PartRows). Both are one partition of the box: every level a part per rank with a point of
// halo on every side another rank holds (a plane on each side for slabs; faces, edges and
// corners for boxes), exchanged within each sweep where a colour reads what the colours before
// it wrote across the ranks (the colours of even parity across the split axes first,
// MultigridParameters::slow_colour_axes: after each half of the colours where one axis is split,
// each quarter where two are, each colour where three are), after each sweep, the residual and
// the interpolation; the colours are the whole box's, so a cycle over ranks is, to rounding, the
// cycle of one process sweeping them in the same order (one process's own where the split axes
// are the slowest: slabs). Where some rank's part would be too thin, the level is split
// anew over fewer ranks (the others wait for the levels below), and once that is one rank, or
// the level is small, it is gathered whole on every rank and the rest of the cycle is one
// process's, repeated on each. The cycle is not recorded over ranks.
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/boxes/box.hpp"
#include "simrun/solvers/distributed/part_rows.hpp"
#include "simrun/solvers/matrices/dia_data.hpp"
#include "simrun/solvers/matrices/dia_matrix.hpp"
#include "simrun/solvers/multigrid/multigrid_parameters.hpp"

namespace simrun::solvers {

namespace multigrid {
template <typename T>
class Hierarchy;
template <typename T>
struct HierarchyAccess;
}  // namespace multigrid

// One level of a hierarchy, as describe() and the tests read it.
struct MultigridLevelSummary {
    GridBox box;
    int num_diagonals;  // of the level's operator (0 for the coarsest's dense inverse)
    int colours;        // of the Gauss-Seidel smoother
    DiaStorage storage = DiaStorage::general;  // of the level's operator
};

// MultigridParameters::gather_size, or where it is none the back-end's: 65536 on a GPU, where a
// small level's exchanges (a few microseconds each, six a cycle) cost more than its work (on
// four H200, docs/benchmarks.md, one run each: 0.093 -> 0.090 s for 2D weak scaling, 0.045 ->
// 0.041 s for 3D, measured at 2^15, which gathers the same level there; 2^18 gave 0.089 and
// 0.042 s, within a run's millisecond of noise, 2^20 0.097 s in 2D); 0 on the CPU, where they
// cost less than the work the gathered levels repeat on every rank (Poisson 2049^2 on 2 ranks
// of a 2-core machine: 0.712-0.721 s against 0.729-0.733 s with 65536).
std::int64_t gather_size_on(const MultigridParameters& parameters, BackendKind kind);

template <typename T>
class MultigridHierarchy {
public:
    // Builds the levels of `fine`, a matrix on the points of `box`. Throws std::invalid_argument
    // when the matrix is not the box's size, couples a point to one that is not its neighbour
    // in the box (saying which), has a zero or negative diagonal entry (the smoothers divide by
    // it), or the parameters are out of range. `fine_operator`, when given, is `fine` already on
    // the back-end (a solver's own operator, which must outlive the hierarchy): the finest
    // level uses it instead of uploading a copy. Over several ranks, `fine` is this rank's
    // block of rows of the matrix on `box` (its couplings to the neighbours' rows kept), and
    // `fine_operator` (the block's own couplings) only names the finest level's storage;
    // collective.
    MultigridHierarchy(std::shared_ptr<const Backend> backend, const DiaData<T>& fine,
                       const GridBox& box, const MultigridParameters& parameters,
                       const DiaMatrix<T>* fine_operator = nullptr);
    // The same from a matrix in the other precision (a double solve's matrix for a float
    // cycle); the finest level's operator is `fine_operator` converted on the back-end where
    // it is given, else made here.
    using OtherValue = std::conditional_t<std::is_same_v<T, double>, float, double>;
    MultigridHierarchy(std::shared_ptr<const Backend> backend, const DiaData<OtherValue>& fine,
                       const GridBox& box, const MultigridParameters& parameters,
                       const DiaMatrix<OtherValue>* fine_operator = nullptr);
    // Over a process grid (the back-end's communicator): this rank's part of the box and its
    // rows on the part's window (part_rows.hpp); the levels are split as the finest is, in
    // parts, each with a point of halo around it.
    // `fine_operator`, where given, names the finest level's storage. Collective.
    MultigridHierarchy(std::shared_ptr<const Backend> backend, const PartRows<double>& rows,
                       const MultigridParameters& parameters,
                       const DiaMatrix<T>* fine_operator = nullptr);
    ~MultigridHierarchy();
    MultigridHierarchy(const MultigridHierarchy&) = delete;

    // New values on the rows the hierarchy was built from (the same box and diagonals, the same
    // neighbours coupled): on one process the levels are made again from them as decided before
    // (each level's coarsening and colours, the cycle; nothing measured, the couplings not checked
    // again), by the back-end; over ranks they are built anew (collective). `fine_operator` as
    // in the constructors. Throws what they throw, where the rows do not fit, and
    // std::logic_error for a hierarchy built from a part's rows; the hierarchy is unchanged then.
    void refresh(const DiaData<T>& fine, const DiaMatrix<T>* fine_operator = nullptr);
    void refresh(const DiaData<OtherValue>& fine,
                 const DiaMatrix<OtherValue>* fine_operator = nullptr);
    MultigridHierarchy& operator=(const MultigridHierarchy&) = delete;

    // x = x + one cycle's correction for A x = b (b and x on the back-end, the box's size).
    // Not thread-safe (the cycle uses the hierarchy's work vectors).
    void cycle(const Array<T>& b, Array<T>& x) const;
    // x = one cycle's correction from x = 0 (x's values on entry are not read): a
    // preconditioner's cycle. Over ranks it spares cycle()'s copy of x into the finest level
    // and the exchange of its halo (the finest level's x is zeroed instead).
    void cycle_from_zero(const Array<T>& b, Array<T>& x) const;
    // Runs `cycles` cycles as cycle() does, timing each level's own work (smoothing, residual,
    // transfers; the coarsest level's solve) between synchronisations: seconds per cycle per
    // level, finest first. For the benchmark; slower than cycle() by the synchronisations.
    std::vector<double> time_levels(const Array<T>& b, Array<T>& x, int cycles) const;

    // The bytes one cycle must move at least: each kernel's stated minimum traffic (the
    // level's matrix, stencil masks or values, once per pass; each vector it reads or writes
    // once), summed over the levels as the cycle visits them. The benchmark's floor for a cycle.
    double bytes_per_cycle() const;

    using LevelSummary = MultigridLevelSummary;
    const std::vector<LevelSummary>& levels() const;
    // One line: "6 levels: 255x255 -> 127x127 -> ... -> 7x7 (direct), V(1,1), red-black
    // Gauss-Seidel".
    std::string describe() const;
    const MultigridParameters& parameters() const;
    const std::shared_ptr<const Backend>& backend() const;
    // The points of the finest level (the size of b and x): this rank's, over ranks.
    std::size_t size() const;

private:
    friend struct multigrid::HierarchyAccess<T>;
    template <typename V>
    void refresh_rows(const DiaData<V>& fine, const DiaMatrix<V>* fine_operator);
    // The levels, the cycle and how b and x reach the finest level (multigrid/hierarchy.hpp).
    std::unique_ptr<multigrid::Hierarchy<T>> parts_;
    bool from_part_rows_ = false;
};

}  // namespace simrun::solvers
