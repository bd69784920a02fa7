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
// Over several ranks (the back-end's communicator) each rank gives its block of rows (whole
// planes of the box along its last axis, distributed_matrix.hpp's blocks) and the hierarchy
// is split in slabs (multigrid/slab_levels.hpp): every level a slab of planes per rank with a
// plane of halo on each side, exchanged after each sweep's colour, the residual and the
// interpolation; the colours are the whole box's, so a cycle over ranks is one process's cycle
// to rounding. Where a rank would hold too few planes, the level is split anew over fewer
// ranks (the others wait for the levels below), and once that is one rank, or the level is
// small, it is gathered whole on every rank and the rest of the cycle is one process's,
// repeated on each. Over a process grid of boxes (PartRows) the levels are split in parts the
// same way (multigrid/box_levels.hpp), with a point of halo on every side that another rank
// holds (faces, edges and corners), and gathered once a part gets thinner than 2 points. The
// cycle is not recorded over ranks.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/matrices/dia_data.hpp"
#include "simrun/solvers/matrices/dia_matrix.hpp"
#include "simrun/solvers/boxes/box.hpp"
#include "simrun/solvers/multigrid/multigrid_parameters.hpp"
#include "simrun/solvers/distributed/part_rows.hpp"

namespace simrun::solvers {

namespace multigrid {
struct BoxCoarsening;
}

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
    // parts (multigrid/box_levels.hpp), each with a point of halo around it. `fine_operator`,
    // where given, names the finest level's storage. Collective.
    MultigridHierarchy(std::shared_ptr<const Backend> backend, const PartRows<double>& rows,
                       const MultigridParameters& parameters,
                       const DiaMatrix<T>* fine_operator = nullptr);
    ~MultigridHierarchy();
    MultigridHierarchy(const MultigridHierarchy&) = delete;
    MultigridHierarchy& operator=(const MultigridHierarchy&) = delete;

    // x = x + one cycle's correction for A x = b (b and x on the back-end, the box's size).
    // Not thread-safe (the cycle uses the hierarchy's work vectors).
    void cycle(const Array<T>& b, Array<T>& x) const;
    // x = one cycle's correction from x = 0 (x's values on entry are not read): a
    // preconditioner's cycle. Over ranks it spares cycle()'s copy of x into the finest level
    // and the exchange of its halo (the finest level's x is zeroed instead).
    void cycle_from_zero(const Array<T>& b, Array<T>& x) const;
    // Over ranks the cycle reads b from, and leaves x in, the finest level's own vectors (a
    // window with the neighbours' planes, or the level gathered whole): own_b() is this rank's
    // part of that b (null on one process), own_x() that of x. A caller that converts its
    // vectors anyway (a cycle in the other precision) writes b into own_b(), calls
    // cycle_own_b_from_zero() and reads the correction from own_x(), sparing cycle_from_zero()'s
    // copy each way: 4 values a point read and written.
    T* own_b() const;
    const T* own_x() const;
    void cycle_own_b_from_zero() const;
    // Runs `cycles` cycles as cycle() does, timing each level's own work (smoothing, residual,
    // transfers; the coarsest level's solve) between synchronisations: seconds per cycle per
    // level, finest first. For the benchmark; slower than cycle() by the synchronisations.
    std::vector<double> time_levels(const Array<T>& b, Array<T>& x, int cycles) const;

    // The bytes one cycle must move at least: each kernel's stated minimum traffic (the
    // level's matrix, stencil masks or values, once per pass; each vector it reads or writes
    // once), summed over the levels as the cycle visits them. The benchmark's floor for a cycle.
    double bytes_per_cycle() const;

    struct LevelSummary {
        GridBox box;
        int num_diagonals;  // of the level's operator (0 for the coarsest's dense inverse)
        int colours;        // of the Gauss-Seidel smoother
        DiaStorage storage = DiaStorage::general;  // of the level's operator
    };
    const std::vector<LevelSummary>& levels() const { return summaries_; }
    // One line: "6 levels: 255x255 -> 127x127 -> ... -> 7x7 (direct), V(1,1), red-black
    // Gauss-Seidel".
    std::string describe() const;
    const MultigridParameters& parameters() const { return parameters_; }
    const std::shared_ptr<const Backend>& backend() const { return backend_; }
    // The points of the finest level (the size of b and x): this rank's, over ranks.
    std::size_t size() const { return size_; }

private:
    struct Level;
    // One process's hierarchy of a level gathered on each rank.
    struct OnThisRank {};
    MultigridHierarchy(std::shared_ptr<const Backend> backend, const DiaData<double>& whole,
                       const GridBox& box, const MultigridParameters& parameters, OnThisRank);
    // The levels over ranks, from this rank's block of rows; the finest in the storage of
    // `fine_operator` (the solver's block) where it is given.
    template <typename Fine>
    void build_split(const DiaData<double>& block, const GridBox& box,
                     const DiaMatrix<Fine>* fine_operator);
    // The levels over a process grid, from this rank's part.
    void build_boxes(const PartRows<double>& rows, std::optional<DiaStorage> fine_storage);
    bool split() const { return backend_->communicator().size() > 1 && !on_this_rank_; }
    // An automatic cycle made V or W (MultigridCycle) by whether the operator's coefficients
    // jump on some rank; collective over ranks.
    void resolve_cycle(bool jumps_on_this_rank);
    // The finest level's operator is `fine_operator` (the caller's) or `fine_owned` where one
    // is given, else made from `fine`.
    void build(const DiaData<double>& fine, const GridBox& box, const DiaMatrix<T>* fine_operator,
               std::unique_ptr<DiaMatrix<T>> fine_owned = nullptr);
    std::unique_ptr<DiaMatrix<T>> make_level_operator(const DiaData<T>& a) const;
    // `x_zero`: x is zero on every rank (a cycle from zero), so a gathered finest level need
    // not gather it.
    void run_cycle(std::size_t level, const T* b, T* x, MultigridCycle cycle,
                   std::vector<double>* seconds, bool x_zero = false) const;
    void check_sizes(const Array<T>& b, const Array<T>& x) const;
    // The level's transfer to the next: its weights on the back-end (or their classes) and
    // the view the transfer kernels take.
    void set_transfer(Level& level, const std::vector<double>& weights,
                      const multigrid::BoxCoarsening& coarsening) const;
    // A level split over ranks (slabs or parts) from its window's rows: its operator (the
    // finest in `fine_storage` where given and its rows take it), smoother data, zeroed
    // vectors (and the swept vector where the back-end fuses red-black sweeps), and its
    // transfer.
    void set_split_level(Level& level, const DiaData<double>& window_rows, const GridBox& window,
                         const std::vector<double>& weights,
                         const multigrid::BoxCoarsening& transfer, std::size_t l,
                         std::optional<DiaStorage> fine_storage);
    // The first level gathered whole on every rank (after `split_levels` split ones): one
    // process's hierarchy of the rest on each rank, its levels added to the summaries.
    std::unique_ptr<Level> gathered_level(const DiaData<double>& rows, const GridBox& box,
                                          std::size_t split_levels);
    // A cycle over ranks (see cycle()), timed by level where `seconds` is given.
    // Where this rank's part starts in the finest level's vectors (over ranks).
    std::size_t finest_own_offset() const;
    void run_split(const Array<T>& b, Array<T>& x, std::vector<double>* seconds,
                   bool from_zero = false) const;
    // `sweeps` sweeps of the iterate in x; returns where it ends: x, or `spare` where the
    // sweeps write into another vector (two-colour Gauss-Seidel moves it between the two).
    T* smooth(Level& level, const T* b, T* x, T* spare, int sweeps, bool forward) const;
    double level_bytes(std::size_t level, MultigridCycle cycle) const;

    std::shared_ptr<const Backend> backend_;
    MultigridParameters parameters_;
    std::vector<std::unique_ptr<Level>> levels_;
    std::vector<LevelSummary> summaries_;
    std::size_t size_ = 0;
    bool on_this_rank_ = false;
    std::size_t split_levels_ = 0;    // over ranks: the levels split in slabs, then one gathered
    std::vector<int> split_holders_;  // over ranks: how many ranks hold each split level
    bool boxes_ = false;              // over ranks: split in a process grid's parts
    // The cycle recorded once for the vectors it was last asked of.
    mutable RecordedForOperands recorded_;
};

}  // namespace simrun::solvers
