#include "cpu_kernels.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/unified/box_setup_points.hpp"
#include "kernels/unified/cg_scalar_steps.hpp"
#include "kernels/unified/cg_sweeps_in_block.hpp"
#include "kernels/unified/device_math.hpp"
#include "kernels/unified/fused_steps.hpp"
#include "kernels/unified/row_products.hpp"
#include "matrices/value_classes.hpp"
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/base/host_device.hpp"

namespace simrun::solvers::cpu {
namespace {

template <typename F>
void parallel_for(const Backend&, std::size_t n, F f) {
    const auto count = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < count; ++i) f(static_cast<std::size_t>(i));
}

#include "kernels/unified/elementwise_kernels.inc.hpp"
#include "kernels/unified/multigrid_kernels.inc.hpp"
#include "kernels/unified/multigrid_setup_kernels.inc.hpp"

// Whether two weights are the same bits (+0 and -0 apart, as a product keeps them).
inline bool same_bits(double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0; }

// The coarse point in the middle of the coarse box, and the fine row under a coarse point.
inline std::int64_t middle_point(const BoxShape& coarse) {
    return coarse.points[0] / 2 +
           coarse.points[0] * (coarse.points[1] / 2 + coarse.points[1] * (coarse.points[2] / 2));
}
inline std::int64_t centre_row(const BoxTransferView<double>& t, const std::int64_t (&at)[3]) {
    std::int64_t c[3];
    for (int axis = 0; axis < 3; ++axis) c[axis] = t.first[axis] + t.step[axis] * at[axis];
    return c[0] + t.fine.points[0] * (c[1] + t.fine.points[1] * c[2]);
}

// Whether the rows of the fine points coarse point `at` reaches (3 along each coarsened axis)
// are of the kinds (class or mask) of those the middle point reaches, `at` inside the box.
inline bool reaches_middle_rows(const DiaView<double>& a, const BoxTransferView<double>& t,
                                const std::int64_t (&at)[3], std::int64_t middle_row) {
    const BoxShape& shape = t.coarse;
    for (int axis = 0; axis < 3; ++axis) {
        if (shape.points[axis] > 1 && (at[axis] < 1 || at[axis] > shape.points[axis] - 2)) {
            return false;
        }
    }
    const std::int64_t row = centre_row(t, at);
    const int reach[3] = {t.step[0] == 2 ? 1 : 0, t.step[1] == 2 ? 1 : 0, t.step[2] == 2 ? 1 : 0};
    const std::int64_t nx = t.fine.points[0], ny = t.fine.points[1];
    for (int z = -reach[2]; z <= reach[2]; ++z) {
        for (int y = -reach[1]; y <= reach[1]; ++y) {
            for (int x = -reach[0]; x <= reach[0]; ++x) {
                const std::int64_t offset = x + nx * (y + ny * z);
                if (dia_row_key(a, row + offset) != dia_row_key(a, middle_row + offset)) {
                    return false;
                }
            }
        }
    }
    return true;
}

// The collapsed weights of the fine points between coarse points on `axes` axes, but those
// whose every coarse point within 2 fine points (those it writes lie within 1) is a copy (`copies`:
// its weights will be the middle point's).
struct CollapsedWeightsLeft {
    DiaView<double> a;
    BoxDiagonalSteps steps;
    BoxTransferView<double> t;
    double* w;
    const std::uint8_t* copies;
    int axes;
    bool all_copies(const std::int64_t (&c)[3]) const {
        std::int64_t low[3], high[3];
        for (int axis = 0; axis < 3; ++axis) {
            const std::int64_t n = t.coarse.points[axis];
            if (t.step[axis] == 1) {
                low[axis] = high[axis] = c[axis] - t.first[axis];
                continue;
            }
            const std::int64_t u = c[axis] - t.first[axis];
            // (A coarse point's fine point first + 2 J lies within 2 of c: J in [(u - 2) / 2,
            // (u + 2) / 2], the lower end rounded down, which only checks one more.)
            low[axis] = u >= 2 ? (u - 2) / 2 : 0;
            high[axis] = std::min<std::int64_t>(n - 1, (u + 2) / 2);
        }
        for (std::int64_t k = low[2]; k <= high[2]; ++k) {
            for (std::int64_t j = low[1]; j <= high[1]; ++j) {
                for (std::int64_t i = low[0]; i <= high[0]; ++i) {
                    if (copies[i + t.coarse.points[0] * (j + t.coarse.points[1] * k)] == 0) {
                        return false;
                    }
                }
            }
        }
        return true;
    }
    void operator()(std::size_t p) const {
        const auto row = static_cast<std::int64_t>(p);
        std::int64_t c[3];
        box_coordinates(t.fine, row, c);
        const unsigned mask = fine_axes_of(c, t);
        if (axes_count(mask) != axes || all_copies(c)) return;
        collapsed_weights_at(a, steps, t, w, row, c, mask);
    }
};

// The collapsed weights as box_collapsed_weights_by_points makes them, a coarse point's copied
// from the middle point's where the rows its fine points read are of the middle point's kinds
// (each coarse point's weights read those rows and its own weights only, in one order): for
// rows kept as classes or masks. The fine points that write only copies are skipped (what they
// would write to a copy's neighbour-reads is overwritten). Traffic: the rows' keys of 3^dimension
// fine points per coarse point, then as box_collapsed_weights_by_points for the points left,
// and the copies written.
inline void box_collapsed_weights(const Backend& backend, const DiaView<double>& a,
                                  const BoxDiagonalSteps& steps, const BoxTransferView<double>& t,
                                  double* weights) {
    const BoxShape& shape = t.coarse;
    bool wide = true;  // the middle point inside the box
    for (int axis = 0; axis < 3; ++axis) {
        wide = wide && (shape.points[axis] == 1 || shape.points[axis] >= 3);
    }
    if ((a.row_masks == nullptr && a.row_classes == nullptr) || !steps.decoded || !wide) {
        box_collapsed_weights_by_points(backend, a, steps, t, weights);
        return;
    }
    const int dimension = t.fine.dimension;
    const std::int64_t nc = shape.size();
    const int slots = dimension == 1 ? 3 : dimension == 2 ? 9 : 27;
    const std::int64_t middle = middle_point(shape);
    std::int64_t middle_at[3];
    box_coordinates(shape, middle, middle_at);
    const std::int64_t middle_row = centre_row(t, middle_at);
    std::vector<std::uint8_t> copy_flags(static_cast<std::size_t>(nc));
    std::uint8_t* copies = copy_flags.data();
    parallel_for(backend, static_cast<std::size_t>(nc), [=](std::size_t p) {
        const auto point = static_cast<std::int64_t>(p);
        std::int64_t at[3];
        box_coordinates(shape, point, at);
        copies[p] = point != middle && reaches_middle_rows(a, t, at, middle_row) ? 1 : 0;
    });
    parallel_for(backend, static_cast<std::size_t>(nc),
                 CentreWeights{weights, nc, slots, transfer_slot(dimension, 0, 0, 0)});
    for (int k = 1; k <= dimension; ++k) {
        parallel_for(backend, static_cast<std::size_t>(t.fine.size()),
                     CollapsedWeightsLeft{a, steps, t, weights, copies, k});
    }
    parallel_for(backend, static_cast<std::size_t>(nc), [=](std::size_t p) {
        if (copies[p] == 0) return;
        for (int s = 0; s < slots; ++s) weights[s * nc + p] = weights[s * nc + middle];
    });
}

// Where coarse point I's row by the table (tabled_galerkin_row) is the middle point M's: I is
// inside the box, the rows of its fine points are of M's corresponding rows' kinds (class or
// mask), and the weights of I and of its neighbours are M's own (`same_weights`), as those of
// M's neighbours are (box_galerkin checks it once). It reads nothing else, so its row is then
// M's to the bit.
struct GalerkinCopies {
    DiaView<double> a;
    BoxTransferView<double> t;
    GalerkinTableView table;
    GalerkinLayout layout;
    const std::uint8_t* same_weights;
    BoxDiagonalSteps steps;
    std::int64_t middle, middle_row;
    double* coarse;
    // (The table's fine points are those a coarse point reaches, as reaches_middle_rows reads.)
    bool copied(std::int64_t point, const std::int64_t (&at)[3]) const {
        return reaches_middle_rows(a, t, at, middle_row) && same_around(point);
    }
    // Whether the weights of `point` (inside the box) and of its neighbours are the middle
    // point's.
    bool same_around(std::int64_t point) const {
        const BoxShape& shape = t.coarse;
        const int reach[3] = {shape.points[0] > 1 ? 1 : 0, shape.points[1] > 1 ? 1 : 0,
                              shape.points[2] > 1 ? 1 : 0};
        for (int z = -reach[2]; z <= reach[2]; ++z) {
            for (int y = -reach[1]; y <= reach[1]; ++y) {
                for (int x = -reach[0]; x <= reach[0]; ++x) {
                    if (same_weights[point + x + shape.points[0] * (y + shape.points[1] * z)] ==
                        0) {
                        return false;
                    }
                }
            }
        }
        return true;
    }
    void operator()(std::size_t p) const {
        const auto point = static_cast<std::int64_t>(p);
        if (point == middle) return;
        std::int64_t at[3];
        box_coordinates(t.coarse, point, at);
        if (!copied(point, at)) {
            galerkin_row(a, steps, t, table, layout, point, coarse);
            return;
        }
        const std::int64_t nc = t.coarse.size();
        for (int d = 0; d < layout.diagonals; ++d) coarse[d * nc + point] = coarse[d * nc + middle];
    }
};

// P^T A P as box_galerkin_by_points makes it, each coarse point's row whose inputs are the
// middle point's copied from it (GalerkinCopies): for rows kept as classes or masks, where
// most points inside a box of constant coefficients read the same rows and weights. Traffic:
// per coarse point its weights compared (3^dimension values) and its fine rows' keys read; its
// row written, computed as box_galerkin_by_points does where it is not copied.
inline void box_galerkin(const Backend& backend, const DiaView<double>& a,
                         const BoxDiagonalSteps& steps, const BoxTransferView<double>& t,
                         const GalerkinTableView& table, const GalerkinLayout& layout,
                         double* coarse) {
    const BoxShape& shape = t.coarse;
    bool wide = true;  // the middle point inside the box (2 points or more from its ends)
    for (int axis = 0; axis < 3; ++axis)
        wide = wide && (shape.points[axis] == 1 || shape.points[axis] >= 3);
    if ((a.row_masks == nullptr && a.row_classes == nullptr) || !steps.decoded || !wide ||
        t.weights == nullptr || t.weight_class != nullptr) {
        box_galerkin_by_points(backend, a, steps, t, table, layout, coarse);
        return;
    }
    const std::int64_t nc = shape.size();
    const std::int64_t middle = middle_point(shape);
    std::int64_t middle_at[3];
    box_coordinates(shape, middle, middle_at);
    galerkin_row(a, steps, t, table, layout, middle, coarse);
    const int slots = t.fine.dimension == 1 ? 3 : t.fine.dimension == 2 ? 9 : 27;
    std::vector<std::uint8_t> same_weights(static_cast<std::size_t>(nc));
    std::uint8_t* same = same_weights.data();
    const double* w = t.weights;
    parallel_for(backend, static_cast<std::size_t>(nc), [=](std::size_t p) {
        const auto point = static_cast<std::int64_t>(p);
        bool equal = true;
        for (int s = 0; s < slots && equal; ++s) {
            equal = same_bits(w[s * nc + point], w[s * nc + middle]);
        }
        same[p] = equal ? 1 : 0;
    });
    // The middle row reads its neighbours' weights: a copy reads its own neighbours', which
    // equal the middle point's own, so the middle point's neighbours must too (else no copies).
    const GalerkinCopies copies{
        a, t, table, layout, same, steps, middle, centre_row(t, middle_at), coarse};
    if (!copies.same_around(middle)) {
        box_galerkin_by_points(backend, a, steps, t, table, layout, coarse);
        return;
    }
    parallel_for(backend, static_cast<std::size_t>(nc), copies);
}

// The reference: the host's classification (value_classes.hpp), in order of first appearance.
template <typename T>
bool classify_points(const Backend&, const T* values, std::int64_t points, int slots,
                     std::uint8_t* of_point, std::vector<T>& table) {
    auto classes = classify_values<T>(points, slots, slots, [&](int s, std::int64_t i) {
        return values[static_cast<std::int64_t>(s) * points + i];
    });
    if (!classes) return false;
    std::copy(classes->of_point.begin(), classes->of_point.end(), of_point);
    table = std::move(classes->table);
    return true;
}

// The reference: a pass per colour.
template <typename T>
void box_red_black_sweep(const Backend& backend, const DiaView<T>& a, int main, BoxShape box,
                         int first, const T* b, const T* x, T* x_out) {
    box_colour_sweeps(backend, a, main, box, first, b, x, x_out);
}

template <typename T>
bool fuses_red_black_sweep(const DiaView<T>&, BoxShape) {
    return false;
}

// Reductions are summed in fixed chunks, then the chunk sums in chunk order, so the result is
// the same for any number of threads.
constexpr std::size_t reduction_chunk = 4096;

// Traffic: 2n reads.
template <typename T>
T dot(const Backend&, std::size_t n, const T* x, const T* y) {
    const auto chunks = static_cast<std::int64_t>((n + reduction_chunk - 1) / reduction_chunk);
    std::vector<T> partial(static_cast<std::size_t>(chunks));
#pragma omp parallel for schedule(static)
    for (std::int64_t c = 0; c < chunks; ++c) {
        const std::size_t begin = static_cast<std::size_t>(c) * reduction_chunk;
        const std::size_t end = std::min(n, begin + reduction_chunk);
        T sum = 0;
        for (std::size_t i = begin; i < end; ++i) sum += x[i] * y[i];
        partial[static_cast<std::size_t>(c)] = sum;
    }
    T total = 0;
    for (T value : partial) total += value;
    return total;
}

// v_j . w (j < k) and w . w: per fixed chunk all k + 1 sums, then the chunks' sums in chunk
// order, so the result is the same for any number of threads. Traffic: (k + 1) n reads.
template <typename T>
void basis_dots(const Backend&, std::size_t n, int k, const KrylovBasis<T>& basis, const T* w,
                T* out) {
    const auto chunks = static_cast<std::int64_t>((n + reduction_chunk - 1) / reduction_chunk);
    const auto sums = static_cast<std::size_t>(k + 1);
    std::vector<T> partial(static_cast<std::size_t>(chunks) * sums);
#pragma omp parallel for schedule(static)
    for (std::int64_t c = 0; c < chunks; ++c) {
        const std::size_t begin = static_cast<std::size_t>(c) * reduction_chunk;
        const std::size_t end = std::min(n, begin + reduction_chunk);
        for (std::size_t j = 0; j < sums; ++j) {
            const T* v = j < static_cast<std::size_t>(k) ? basis.vectors[j] : w;
            T sum = 0;
            for (std::size_t i = begin; i < end; ++i) sum += v[i] * w[i];
            partial[static_cast<std::size_t>(c) * sums + j] = sum;
        }
    }
    for (std::size_t j = 0; j < sums; ++j) {
        T total = 0;
        for (std::int64_t c = 0; c < chunks; ++c) {
            total += partial[static_cast<std::size_t>(c) * sums + j];
        }
        out[j] = total;
    }
}

// Neumaier's compensated sum: (sum, compensation) carries the rounding error of each addition.
template <typename T>
struct CompensatedSum {
    T sum = 0;
    T compensation = 0;
    void add(T value) {
        const T t = sum + value;
        compensation += std::abs(sum) >= std::abs(value) ? (sum - t) + value : (value - t) + sum;
        sum = t;
    }
    T total() const { return sum + compensation; }
};

// Traffic: 2n reads.
template <typename T>
T dot_compensated(const Backend&, std::size_t n, const T* x, const T* y) {
    const auto chunks = static_cast<std::int64_t>((n + reduction_chunk - 1) / reduction_chunk);
    std::vector<CompensatedSum<T>> partial(static_cast<std::size_t>(chunks));
#pragma omp parallel for schedule(static)
    for (std::int64_t c = 0; c < chunks; ++c) {
        const std::size_t begin = static_cast<std::size_t>(c) * reduction_chunk;
        const std::size_t end = std::min(n, begin + reduction_chunk);
        CompensatedSum<T> sum;
        for (std::size_t i = begin; i < end; ++i) sum.add(x[i] * y[i]);
        partial[static_cast<std::size_t>(c)] = sum;
    }
    CompensatedSum<T> total;
    for (const auto& p : partial) {
        total.add(p.sum);
        total.add(p.compensation);
    }
    return total.total();
}

// y = A x. Traffic: num_diagonals * n values (or n mask bytes), x (~n, reused from cache),
// n writes.
template <typename T>
void dia_spmv(const Backend&, const DiaView<T>& a, const T* x, T* y) {
    const std::int64_t n = a.n;
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) y[i] = row_product(a, i, VectorEntries<T>{x});
}

// Traffic: nnz (values + columns) + rows + 1 pointers + x gathered + rows writes.
template <typename T>
void csr_spmv(const Backend&, const CsrView<T>& a, const T* x, T* y) {
#pragma omp parallel for schedule(static)
    for (std::int32_t i = 0; i < a.rows; ++i) y[i] = row_product(a, i, VectorEntries<T>{x});
}

// Traffic: row lengths + the stored entries of each row (padding skipped) + x + rows writes.
template <typename T>
void ell_spmv(const Backend&, const EllView<T>& a, const T* x, T* y) {
#pragma omp parallel for schedule(static)
    for (std::int32_t i = 0; i < a.rows; ++i) y[i] = row_product(a, i, VectorEntries<T>{x});
}

template <typename T>
std::size_t coo_workspace_bytes(std::int32_t, std::int64_t) {
    return 0;
}

// Sequential: the triplets are summed in storage order, as the interchange format's reference.
// Traffic: nnz (row, column, value) + x gathered + rows writes.
template <typename T>
void coo_spmv(const Backend&, const CooView<T>& a, const T* x, T* y) {
    std::fill(y, y + a.rows, T(0));
    for (std::int64_t k = 0; k < a.nnz; ++k) y[a.row[k]] += a.values[k] * x[a.col[k]];
}

// Traffic: rows * cols values + x + rows writes.
template <typename T>
void dense_spmv(const Backend&, const DenseView<T>& a, const T* x, T* y) {
    const auto cols = static_cast<std::size_t>(a.cols);
#pragma omp parallel for schedule(static)
    for (std::int32_t i = 0; i < a.rows; ++i) {
        const T* row = a.values + static_cast<std::size_t>(i) * cols;
        T sum = 0;
        for (std::size_t j = 0; j < cols; ++j) sum += row[j] * x[j];
        y[i] = sum;
    }
}

// Rows of one colour are not coupled, so updating them in parallel is exact Gauss-Seidel.
// A colour of fewer than sweep_parallel_rows rows (a triangular solve's level often has a
// handful) runs on the calling thread: waking the others would cost more.
constexpr std::int32_t sweep_parallel_rows = 2048;

template <typename T>
void sor_colour_sweep(const Backend&, const MulticolourSweepsView<T>& m, std::int32_t begin,
                      std::int32_t end, const T* b, T* x) {
#pragma omp parallel for schedule(static) if (end - begin >= sweep_parallel_rows)
    for (std::int32_t r = begin; r < end; ++r) {
        const std::int32_t i = m.rows[r];
        T sum = b[i];
        for (std::int32_t k = m.row_ptr[r]; k < m.row_ptr[r + 1]; ++k) {
            sum -= m.values[k] * x[m.col[k]];
        }
        x[i] = (T(1) - m.omega) * x[i] + m.omega * m.inv_diag[i] * sum;
    }
}

// A pass per colour, in the order asked.
template <typename T>
void sor_sweeps(const Backend& backend, const MulticolourSweepsView<T>& m,
                const std::int32_t* offsets, SweepOrder order, const T* b, T* x) {
    const auto sweep = [&](int c) {
        sor_colour_sweep(backend, m, offsets[c], offsets[c + 1], b, x);
    };
    if (order != SweepOrder::backward) {
        for (int c = 0; c < m.colours; ++c) sweep(c);
    }
    if (order != SweepOrder::forward) {
        for (int c = m.colours - 1; c >= 0; --c) sweep(c);
    }
}

// The block of unified/cg_sweeps_in_block.hpp as one core: every row in order, no barriers.
template <typename T>
struct SerialBlock {
    template <typename F>
    void rows(std::int64_t n, F f) const {
        for (std::int64_t i = 0; i < n; ++i) f(i);
    }
    template <typename View, typename F>
    void row_products(std::int64_t n, const View& a, const T* x, F f) const {
        const auto entries = [x](std::int64_t j) { return x[j]; };
        for (std::int64_t i = 0; i < n; ++i) f(i, row_product(a, i, entries));
    }
    template <typename F>
    void colour_row_sums(const MulticolourSweepsView<T>& m, std::int32_t begin, std::int32_t end,
                         const T* x, F f) const {
        for (std::int32_t r = begin; r < end; ++r) {
            T sum = 0;
            for (std::int32_t k = m.row_ptr[r]; k < m.row_ptr[r + 1]; ++k) {
                sum += m.values[k] * x[m.col[k]];
            }
            f(m.rows[r], sum);
        }
    }
    T sum(T partial) const { return partial; }
    bool leader() const { return true; }
    void sync() const {}
};

template <typename T>
bool fuses_cg_sweeps(std::int64_t n) {
    return n <= cpu_serial_sweep_rows;
}

template <typename T>
void cg_sweep_iterations(const Backend&, const RowMatrixView<T>& a, const CgSweepVectors<T>& v,
                         CgScalars<T>* s, std::int64_t count) {
    SerialBlock<T> block;
    with_row_view(
        a, [&](const auto& view) { cg_sweep_iterations_in_block(block, view, v, *s, count); });
}

// One fused step (unified/fused_steps.hpp): rows in fixed chunks run in parallel, then the
// chunk sums are added in chunk order, so the totals do not depend on the thread count.
template <typename T, typename State, typename Step>
void fused_reduce(std::int64_t n, State& state, const Step& step) {
    constexpr int sums_count = Step::sums;
    const auto chunk = static_cast<std::int64_t>(reduction_chunk);
    const std::int64_t chunks = (n + chunk - 1) / chunk;
    std::vector<std::array<T, sums_count>> partial(static_cast<std::size_t>(chunks));
#pragma omp parallel for schedule(static)
    for (std::int64_t c = 0; c < chunks; ++c) {
        const auto context = step.setup(state);
        T sums[sums_count] = {};
        const std::int64_t end = std::min(n, (c + 1) * chunk);
        for (std::int64_t i = c * chunk; i < end; ++i) step.row(i, context, sums);
        std::copy(sums, sums + sums_count, partial[static_cast<std::size_t>(c)].begin());
    }
    T totals[sums_count] = {};
    for (const auto& sums : partial) {
        for (int k = 0; k < sums_count; ++k) totals[k] += sums[static_cast<std::size_t>(k)];
    }
    step.finish(state, totals);
}

// `count` iterations of the steps, in order, while the state is running.
template <typename T, typename State, typename... Steps>
void fused_iterations(const Backend&, std::int64_t n, State* state, FusedWorkspace<T>,
                      std::int64_t count, const Steps&... steps) {
    if (n == 0) return;  // as on the GPU: nothing to sum, the state stays as it is
    for (std::int64_t k = 0; k < count && state->running(); ++k) {
        ((state->running() ? fused_reduce<T>(n, *state, steps) : void()), ...);
    }
}

#include "kernels/unified/bicgstab_kernels.inc.hpp"
#include "kernels/unified/cg_kernels.inc.hpp"
#include "kernels/unified/jacobi_kernels.inc.hpp"

}  // namespace

#include "kernels/unified/kernel_table.inc.hpp"

}  // namespace simrun::solvers::cpu
