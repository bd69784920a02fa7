#pragma once
// The kernels every back-end provides, declared once. Each back-end fills one table per value
// type; algorithms call them through Backend::kernels<T>() and never branch on the back-end.
// Pointers are to memory of the back-end that owns the table. Sizes are element counts. The
// traffic comment of each kernel is the minimum it must move; implementations state theirs.
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "base/bicgstab_device_state.hpp"
#include "base/cg_device_state.hpp"
#include "base/jacobi_device_state.hpp"
#include "simrun/solvers/base/host_device.hpp"
#include "simrun/solvers/base/matrix_views.hpp"

namespace simrun::solvers {

class Backend;

// A structured box of points, x fastest: point (i, j, k) is row i + nx (j + ny k). Unused axes
// have one point.
struct BoxShape {
    int dimension;
    std::int64_t points[3];
    SIMRUN_HOST_DEVICE std::int64_t size() const { return points[0] * points[1] * points[2]; }
};

// The points [lower, upper) of a box along each axis (1 beyond the dimension: [0, 1)).
struct BoxRange {
    std::int64_t lower[3];
    std::int64_t upper[3];
    SIMRUN_HOST_DEVICE std::int64_t size() const {
        return (upper[0] - lower[0]) * (upper[1] - lower[1]) * (upper[2] - lower[2]);
    }
};

// The transfer between a box and the next coarser one of a multigrid hierarchy. Per axis, step
// 2 (coarsened: coarse point I lies on fine point first + 2 I) or 1 (kept: first 0). P, the
// interpolation, is stored by coarse point: weights[s * coarse.size() + I] is the weight of
// coarse point I at the fine point s away from where it lies, s running over {-1, 0, 1} on the
// coarsened axes (slot (sx + 1) + 3 (sy + 1) + 9 (sz + 1), axes beyond the dimension left out).
// Restriction is R = P^T. Where the coarse points' weights take few distinct sets (a constant-
// coefficient operator: the inner points alike, the sides and corners each alike), they are
// kept as classes instead: weight_class[I] names coarse point I's set, class_weights[c *
// max_transfer_slots + s] its weight in slot s (weights is then null), so the transfers read a
// byte per coarse point instead of 3^dimension values.
inline constexpr int max_transfer_slots = 27;

// The most classes a set of points is kept as (a byte names each point's).
inline constexpr int max_value_classes = 256;

template <typename T>
struct BoxTransferView {
    BoxShape fine;
    BoxShape coarse;
    int step[3];
    int first[3];
    const T* weights;
    const std::uint8_t* weight_class = nullptr;
    const T* class_weights = nullptr;
};

// The weight of coarse point I (of nc) in slot s, in either layout.
template <typename T>
SIMRUN_HOST_DEVICE inline T transfer_weight(const BoxTransferView<T>& t, int slot,
                                            std::int64_t point, std::int64_t nc) {
    return t.weight_class != nullptr
               ? t.class_weights[t.weight_class[point] * max_transfer_slots + slot]
               : t.weights[slot * nc + point];
}

// Each DIA diagonal's step in the box (dx, dy, dz), where every offset is one step and one only
// (`decoded`: the box has at least 3 points along each axis it uses); otherwise the steps are
// computed entry by entry from the columns' coordinates.
struct BoxDiagonalSteps {
    bool decoded = true;
    int step[max_dia_diagonals][3] = {};
};

// Where the terms of a Galerkin row go for a coarse point inside the box (at least one point from
// each end of every axis with room): for fine point p of the coarse point's weights (its slot and
// row offset from the coarse point's fine point) and diagonal d, the reaches [begin[p D + d],
// begin[p D + d + 1]) as (coarse stencil step, column offset J - I, P's slot of the entry's
// column at J). Made on the host (multigrid/galerkin_operator.cpp), read by every back-end.
struct GalerkinTableView {
    int fine_points = 0;
    const int* fine_slot = nullptr;
    const std::int64_t* fine_offset = nullptr;
    const std::int64_t* begin = nullptr;
    const int* reach_step = nullptr;
    const std::int64_t* reach_column = nullptr;
    const int* reach_slot = nullptr;
};

// The coarse operator's layout: per coarse stencil step (dx + 1) + 3 (dy + 1) + 9 (dz + 1) its
// diagonal (-1 where the coarse box has no room for it), and the number of diagonals.
struct GalerkinLayout {
    int step_diagonal[27] = {};
    int diagonals = 0;
};

// The slot of offset (sx, sy, sz) in a transfer's weights.
SIMRUN_HOST_DEVICE inline int transfer_slot(int dimension, int sx, int sy, int sz) {
    return (sx + 1) + (dimension >= 2 ? 3 * (sy + 1) : 0) + (dimension == 3 ? 9 * (sz + 1) : 0);
}

// The coarse points whose weights reach fine coordinate f along one axis of a transfer: the one
// on f's line (offset 0), or the two around it (f one step above the lower, offset 1, and one
// below the upper, offset -1), each valid where it lies inside the coarse box. Fixed slots, so
// a kernel keeps them in registers (a count-indexed array went to local memory).
struct AxisNeighbours {
    std::int64_t index[2];
    int offset[2];
    bool valid[2];
};

SIMRUN_HOST_DEVICE inline AxisNeighbours coarse_neighbours_on_axis(std::int64_t f, int step,
                                                                   int first,
                                                                   std::int64_t coarse_points) {
    const std::int64_t u = f - first;  // >= -1
    if (step == 1 || u % 2 == 0) return {{step == 1 ? u : u / 2, 0}, {0, 0}, {true, false}};
    const std::int64_t below = (u - 1) / 2;  // -1 below the first coarse point
    return {{below, below + 1}, {1, -1}, {below >= 0, below + 1 < coarse_points}};
}

// Calls visit(coarse point, i, j, k, slot) for each coarse point (i, j, k) of `coarse` whose
// weights reach the fine point with coordinates f, x neighbours outermost, lower first (the
// order every transfer sums in). Unrolled: the neighbours stay in registers.
template <typename Visit>
SIMRUN_HOST_DEVICE inline void for_each_coarse_neighbour(const std::int64_t (&f)[3],
                                                         const int (&step)[3],
                                                         const int (&first)[3],
                                                         const BoxShape& coarse, Visit&& visit) {
    AxisNeighbours n[3];
    SIMRUN_UNROLL
    for (int axis = 0; axis < 3; ++axis) {
        n[axis] = coarse_neighbours_on_axis(f[axis], step[axis], first[axis], coarse.points[axis]);
    }
    SIMRUN_UNROLL
    for (int a = 0; a < 2; ++a) {
        if (!n[0].valid[a]) continue;
        SIMRUN_UNROLL
        for (int b = 0; b < 2; ++b) {
            if (!n[1].valid[b]) continue;
            SIMRUN_UNROLL
            for (int c = 0; c < 2; ++c) {
                if (!n[2].valid[c]) continue;
                const std::int64_t i = n[0].index[a], j = n[1].index[b], k = n[2].index[c];
                visit(i + coarse.points[0] * (j + coarse.points[1] * k), i, j, k,
                      transfer_slot(coarse.dimension, n[0].offset[a], n[1].offset[b],
                                    n[2].offset[c]));
            }
        }
    }
}

// A Krylov basis of separately stored vectors (GMRES), passed to the kernels by value: the
// vectors' addresses, and one coefficient per vector where a kernel combines them.
inline constexpr int max_krylov_vectors = 129;  // a restart length of up to 128

template <typename T>
struct KrylovBasis {
    const T* vectors[max_krylov_vectors];
};

template <typename T>
struct KrylovCoefficients {
    T values[max_krylov_vectors];
};

// The order of multicolour sweeps.
enum class SweepOrder { forward, backward, forward_then_backward };
// The most rows the CUDA back-end sweeps in one block (1024 threads, a barrier per colour).
inline constexpr std::int32_t sor_block_rows = 32768;
// The most rows the CPU back-end runs SSOR-preconditioned CG on one core (fuses_cg_sweeps).
// Measured on 2 cores (us per iteration, one core against the OpenMP pass per step and colour):
// nos3 (960 rows) 74 against 465, 2D Poisson 100^2 157 against 326, 3D 20^3 184 against 333,
// 200^2 605-915 against 845-860, 400^2 3900-5300 against 3290.
inline constexpr std::int64_t cpu_serial_sweep_rows = 16384;

// The other precision of the two a back-end computes in: double for float, float for double.
template <typename T>
using OtherPrecision = std::conditional_t<std::is_same_v<T, double>, float, double>;

template <typename T>
struct KernelTable {
    // ---- element-wise (written once for both back-ends) ----
    // x = value. Traffic: n writes.
    void (*fill)(const Backend&, std::size_t n, T value, T* x);
    // d = the main diagonal of A (`main`: the index of offset 0), in any DIA storage.
    // Traffic: n values (or n masks) read, n writes.
    void (*dia_diagonal)(const Backend&, const DiaView<T>& a, int main, T* d);
    // y = x rounded (or widened) to the other precision. Traffic: n reads, n writes (of the
    // other precision's size).
    void (*copy_to_other)(const Backend&, std::size_t n, const T* x, OtherPrecision<T>* y);
    // The points of `part` (a range of a box whose vectors are laid out as `window`, x fastest)
    // between a vector of them alone (in order, x fastest) and their places in a vector of the
    // window, rounded (or widened) to the other precision: into the window's places where
    // `into_window`, else out of them. Fewer than 2^32 points. Traffic: n reads, n writes (of the
    // other precision's size), the window's in runs of the part's rows.
    void (*copy_part_to_other)(const Backend&, BoxShape window, BoxRange part, bool into_window,
                               const T* from, OtherPrecision<T>* to);
    // y = y + alpha x. Traffic: 2n reads, n writes.
    void (*axpy)(const Backend&, std::size_t n, T alpha, const T* x, T* y);
    // y = x + beta y. Traffic: 2n reads, n writes.
    void (*xpby)(const Backend&, std::size_t n, const T* x, T beta, T* y);
    // z = x .* y. Traffic: 2n reads, n writes.
    void (*multiply)(const Backend&, std::size_t n, const T* x, const T* y, T* z);
    // x = x + alpha d .* r (weighted Jacobi update). Traffic: 3n reads, n writes.
    void (*scaled_axpy)(const Backend&, std::size_t n, T alpha, const T* d, const T* r, T* x);
    // out_i = x[index_i]: the rows other ranks read, gathered into one buffer. Traffic: n
    // indices and n values read, n written.
    void (*gather)(const Backend&, std::size_t n, const std::int64_t* index, const T* x, T* out);
    // out[index_i] = x_i for n distinct indices: values received put in their places. Traffic:
    // n indices and n values read, n written.
    void (*scatter)(const Backend&, std::size_t n, const std::int64_t* index, const T* x, T* out);
    // y[rows_i] += sum over k in [starts_i, starts_{i+1}) of values_k * halo[slots_k], for n
    // distinct rows: a block's couplings to the rows of one other rank. Traffic per row: its
    // index, two starts, y read and written; per entry: its slot, its value and a halo value.
    void (*add_couplings)(const Backend&, std::size_t n, const std::int64_t* rows,
                          const std::int64_t* starts, const std::int32_t* slots, const T* values,
                          const T* halo, T* y);
    // CG step 1: p = z + beta p. Traffic: 2n reads, n writes.
    void (*cg_step_1)(const Backend&, std::size_t n, T beta, const T* z, T* p);
    // CG step 2: x = x + alpha p, r = r - alpha q. Traffic: 4n reads, 2n writes.
    void (*cg_step_2)(const Backend&, std::size_t n, T alpha, const T* p, const T* q, T* x, T* r);
    // BiCGStab: p = r + beta (p - omega v). Traffic: 3n reads, n writes.
    void (*bicgstab_p)(const Backend&, std::size_t n, T beta, T omega, const T* r, const T* v,
                       T* p);
    // BiCGStab: x = x + alpha p_hat + omega s_hat; r = s - omega t. Traffic: 5n reads, 2n writes.
    void (*bicgstab_update)(const Backend&, std::size_t n, T alpha, T omega, const T* p_hat,
                            const T* s_hat, const T* s, const T* t, T* x, T* r);

    // ---- reductions (deterministic: the same inputs give the same bits every run) ----
    // x . y returned to the host. Traffic: 2n reads.
    T (*dot)(const Backend&, std::size_t n, const T* x, const T* y);
    // x . y with compensated (Neumaier) summation. Traffic: 2n reads.
    T (*dot_compensated)(const Backend&, std::size_t n, const T* x, const T* y);

    // ---- Krylov bases (GMRES's Gram-Schmidt: one pass for all of a step's products) ----
    // out[j] = v_j . w for j < k and out[k] = w . w, into host memory; deterministic, as dot.
    // Traffic: (k + 1) n reads (w re-read from the cache per group of vectors).
    void (*basis_dots)(const Backend&, std::size_t n, int k, const KrylovBasis<T>& basis,
                       const T* w, T* out);
    // out = beta w + sum_{j < k} c_j v_j (w not read when beta = 0; out may be w).
    // Traffic: k n reads (+ n for w) + n writes.
    void (*basis_combine)(const Backend&, std::size_t n, int k, const KrylovBasis<T>& basis,
                          const KrylovCoefficients<T>& c, T beta, const T* w, T* out);

    // ---- sparse matrix-vector products y = A x ----
    // Traffic: num_diagonals * n values + x (~n, cached) + n writes.
    void (*dia_spmv)(const Backend&, const DiaView<T>& a, const T* x, T* y);
    // Traffic: nnz (values + columns) + rows + 1 pointers + x (gathered) + rows writes.
    void (*csr_spmv)(const Backend&, const CsrView<T>& a, const T* x, T* y);
    // Traffic: width * rows (values + columns, padding skipped per row) + lengths + x + writes.
    void (*ell_spmv)(const Backend&, const EllView<T>& a, const T* x, T* y);
    // Traffic: nnz (row, column, value) + x (gathered) + rows writes.
    void (*coo_spmv)(const Backend&, const CooView<T>& a, const T* x, T* y);
    // Bytes of scratch memory coo_spmv needs for a matrix of this shape.
    std::size_t (*coo_workspace_bytes)(std::int32_t rows, std::int64_t nnz);
    // Traffic: rows * cols values + x + rows writes.
    void (*dense_spmv)(const Backend&, const DenseView<T>& a, const T* x, T* y);

    // ---- CG with its scalars on the back-end (cg_device_state.hpp) ----
    // `count` iterations, each reading the scalars the previous one left; nothing happens once
    // s->phase is not running, so a batch of iterations is issued without waiting for the host.
    // An iteration is two steps:
    // - direction and product: p' = z + beta p (z = factors .* r; p' = z on iteration 0),
    //   q = A p', then alpha = rho / p'q (or a breakdown). Traffic, DIA: D n values + 2n reads
    //   (r, p; plus n factors) + 2n writes (p', q), neighbours' r and p through the cache;
    // - update: x += alpha p', r -= alpha q, then ||r|| recorded and checked, rho' = r'z,
    //   beta = rho' / rho. Traffic: 4n reads (x, r, p', q; plus n factors), 2n writes.
    void (*cg_iterations)(const Backend&, const RowMatrixView<T>& a, const CgVectors<T>& v,
                          CgScalars<T>* s, std::int64_t count);

    // ---- CG preconditioned by multicolour SSOR, a small system in one block ----
    // Whether cg_sweep_iterations takes a system of n rows on this back-end: the CUDA one runs
    // up to sor_block_rows rows in one block of threads; the CPU one up to
    // cpu_serial_sweep_rows on one core (below that, the OpenMP threads' start and barriers at
    // each colour cost more than they share).
    bool (*fuses_cg_sweeps)(std::int64_t n);
    // `count` iterations, as cg_iterations, with z = M r by v.m's sweeps (SSOR from z = 0),
    // the whole system in one block (unified/cg_sweeps_in_block.hpp): no launch, no host
    // round trip, between steps or colours; A p from the sweeps' matrix where v.product_from_sweeps
    // (the CUDA back-end then keeps the one matrix and the vectors the sweeps gather in the
    // block's shared memory, where they fit). z = M r0 and s->rho = r0'z on entry. Traffic per
    // iteration: A once, M's matrix twice, about 14 n vector values.
    void (*cg_sweep_iterations)(const Backend&, const RowMatrixView<T>& a,
                                const CgSweepVectors<T>& v, CgScalars<T>* s, std::int64_t count);

    // ---- BiCGStab with its scalars on the back-end (bicgstab_device_state.hpp) ----
    // `count` iterations, as cg_iterations. An iteration is three steps
    // (unified/bicgstab_kernels.inc.hpp): p' = r + beta (p - omega v), v' = A M p', r0'v';
    // s = r - alpha v', t = A M s, t't, t's, s's; x += alpha M p' + omega M s,
    // r = s - omega t, r'r, r0'r. Traffic, DIA with M = I: 2 D n values + 17 n vector values.
    void (*bicgstab_iterations)(const Backend&, const RowMatrixView<T>& a,
                                const BiCgStabVectors<T>& v, BiCgStabScalars<T>* s,
                                std::int64_t count);

    // ---- weighted Jacobi with its scalars on the back-end (jacobi_device_state.hpp) ----
    // `count` iterations, as cg_iterations; an iteration is one step: r = b - A x_k,
    // x_{k+1} = x_k + omega D^-1 r, ||r||^2. Traffic, DIA: D n values + 4n vector values.
    void (*jacobi_iterations)(const Backend&, const RowMatrixView<T>& a, const JacobiVectors<T>& v,
                              JacobiScalars<T>* s, std::int64_t count);

    // ---- multigrid on a box (multigrid/) ----
    // r = b - A x. Traffic: D n values (or n masks) + 2n reads + n writes, x's neighbours
    // through the cache.
    void (*dia_residual)(const Backend&, const DiaView<T>& a, const T* b, const T* x, T* r);
    // Gauss-Seidel on the points of one colour of the box, which must not be coupled to each
    // other: x_i += (b_i - (A x)_i) / a_ii, a_ii the entry of diagonal `main` (offset 0; the
    // row's own, already read for (A x)_i, so no inverse diagonal travels). With 2 colours a
    // point's colour is (i + j + k) mod 2 (for stencils along the axes); with 2^dimension it
    // is i mod 2 + 2 (j mod 2) + 4 (k mod 2) (for any 3^dimension-point stencil). Traffic:
    // the colour's share of A's rows, b and x (read and written), neighbours' x gathered;
    // each colour's pass touches every cache line of x and b (its points alternate).
    void (*box_colour_sweep)(const Backend&, const DiaView<T>& a, int main, BoxShape box,
                             int num_colours, int colour, const T* b, T* x);
    // box_colour_sweep of one colour of 2, on the points of `part` only (a range of the box:
    // the boundary points of a rank's part, which a fused sweep over ranks sweeps again).
    // Traffic: the part's x read (its colour), and that of box_colour_sweep on its points of
    // the colour.
    void (*box_colour_sweep_part)(const Backend&, const DiaView<T>& a, int main, BoxShape box,
                                  int colour, BoxRange part, const T* b, T* x);
    // One red-black sweep (2 colours, couplings along the axes) from x into x_out (another
    // vector: the sweep reads every x before it writes): colour `first` ((i + j + k) mod 2),
    // then the other, as two box_colour_sweep passes on a copy of x would make it. Traffic:
    // A's rows, b and x read and x_out written once where the colours are fused (the CUDA
    // back-end on 2D boxes: tiles with a halo of 2 in shared memory), else a copy and two
    // passes.
    void (*box_red_black_sweep)(const Backend&, const DiaView<T>& a, int main, BoxShape box,
                                int first, const T* b, const T* x, T* x_out);
    // Whether box_red_black_sweep fuses the colours for this operator and box (where it does
    // not, a pass per colour in place moves less).
    bool (*fuses_red_black_sweep)(const DiaView<T>& a, BoxShape box);
    // coarse = P^T fine. Traffic: 3^dimension weights and a write per coarse point, the fine
    // vector once (its points shared by neighbouring coarse points through the cache).
    void (*box_restrict)(const Backend&, const BoxTransferView<T>& t, const T* fine, T* coarse);
    // fine += P coarse. Traffic: fine read and written, the coarse vector and the weights
    // gathered (each read by up to 3^dimension fine points, through the cache).
    void (*box_interpolate_add)(const Backend&, const BoxTransferView<T>& t, const T* coarse,
                                T* fine);
    // ---- a multigrid level's set-up on a box (multigrid/, double: box_setup_points.hpp) ----
    // The collapsed (black-box) interpolation weights of transfer t from the fine rows a
    // (t.weights unread): `weights` (t's general layout, on the back-end) made whole. Traffic:
    // the weights written and then added to once, the fine rows read once per class of points
    // (fine on 1, ..., dimension axes) and twice more for the points of the class, 2^k weights
    // gathered per point fine on k axes.
    void (*box_collapsed_weights)(const Backend&, const DiaView<double>& a,
                                  const BoxDiagonalSteps& steps, const BoxTransferView<double>& t,
                                  double* weights);
    // P^T A P on t's coarse box into `coarse` (DIA in `layout`, every entry written), from the
    // fine rows a and t's weights in the general layout (t.weights; std::invalid_argument where
    // t holds classes); `table` on the back-end. Traffic: per coarse point its
    // 3^dimension weights and the fine rows they reach (shared through the cache), its row
    // written.
    void (*box_galerkin)(const Backend&, const DiaView<double>& a, const BoxDiagonalSteps& steps,
                         const BoxTransferView<double>& t, const GalerkinTableView& table,
                         const GalerkinLayout& layout, double* coarse);
    // out_i = 1 / a_ii (a_ii the entry of diagonal `main`, rounded to T once). Traffic: the main
    // diagonal (or a mask or class per row) read, n values written.
    void (*dia_inverse_diagonal)(const Backend&, const DiaView<double>& a, int main, T* out);
    // Rows kept by step on the back-end as the multigrid planner over ranks moves them
    // (multigrid/step_rows.hpp): `count` arrays of values, array s at s * size of its
    // box. Copies the values of the points `points` (their count along each axis) from the box
    // `from` (its point from_at onwards) to the box `to` (its point to_at onwards). Traffic:
    // 8 bytes read and written per point and array.
    void (*box_copy_rows)(const Backend&, const double* from, const BoxShape& from_shape,
                          const std::int64_t (&from_at)[3], double* to, const BoxShape& to_shape,
                          const std::int64_t (&to_at)[3], const BoxShape& points, int count);
    // Zeroes value s of each point of `shape` whose step steps.step[s] leaves the box, for
    // s < count. Traffic: the zeroed values written (the faces' points).
    void (*box_zero_leaving)(const Backend&, double* values, const BoxShape& shape,
                             const BoxDiagonalSteps& steps, int count);
    // Classifies `points` points of `slots` values each (slot s of point i at values[s * points +
    // i]) by their sets of values (compared with ==): of_point[i] (on the back-end) names point
    // i's class, `table` (host) gets class c's values at c * slots + s. Returns false, leaving
    // both undefined, where they take more than max_value_classes sets. The classes are numbered
    // as the back-end finds them (the CPU in order of first appearance). A set holding a NaN may
    // be refused (NaN equals nothing). Traffic: the values read twice, a byte per point written.
    bool (*classify_points)(const Backend&, const T* values, std::int64_t points, int slots,
                            std::uint8_t* of_point, std::vector<T>& table);

    // One step of the Chebyshev smoother: d = c_d d + c_r inv_diag .* r, x = x + d.
    // Traffic: 4n reads, 2n writes.
    void (*chebyshev_step)(const Backend&, std::size_t n, T c_d, T c_r, const T* inv_diag,
                           const T* r, T* d, T* x);

    // ---- multicolour Gauss-Seidel / SOR ----
    // One SOR update of the rows at m's positions [begin, end) (one colour: no two are
    // coupled): x_i = (1 - omega) x_i + omega inv_diag_i (b_i - sum_{j != i} a_ij x_j).
    // Traffic: the positions' rows, bounds and entries + their b, inv_diag, x + gathered x.
    void (*sor_colour_sweep)(const Backend&, const MulticolourSweepsView<T>& m, std::int32_t begin,
                             std::int32_t end, const T* b, T* x);
    // Sweeps over every colour of m (as sor_colour_sweep each, with m's omega): colours 0 ..
    // C-1 (forward), C-1 .. 0 (backward) or both, forward first (SSOR). offsets: m.offsets in
    // host memory. The CUDA back-end sweeps a small system (up to sor_block_rows rows) in one
    // block, a barrier between colours instead of a launch each. Traffic: as the sweeps.
    void (*sor_sweeps)(const Backend&, const MulticolourSweepsView<T>& m,
                       const std::int32_t* offsets, SweepOrder order, const T* b, T* x);
};

}  // namespace simrun::solvers
