// The kernels of geometric multigrid on a box (multigrid/), written once as host-device lambdas
// and run by each back-end's parallel_for. Included inside the namespace of each back-end, after
// parallel_for. (No include guard: included once per back-end.)

// r = b - A x, row by row (a functor, not a lambda: nvcc allows no device lambda inside the
// generic lambda that picks the row view's type).
template <typename T, typename Rows>
struct ResidualRows {
    Rows rows;
    const T* b;
    const T* x;
    T* r;
    SIMRUN_HOST_DEVICE void operator()(std::size_t i) const {
        r[i] = b[i] - row_product(rows, static_cast<std::int64_t>(i), VectorEntries<T>{x});
    }
};

// Traffic: D n values (or n masks) + 2n reads + n writes.
template <typename T>
void dia_residual(const Backend& backend, const DiaView<T>& a, const T* b, const T* x, T* r) {
    with_diagonal_count(a, [&](const auto& rows) {
        using Rows = std::decay_t<decltype(rows)>;
        parallel_for(backend, static_cast<std::size_t>(a.n), ResidualRows<T, Rows>{rows, b, x, r});
    });
}

// Point `slot` of one colour of the box, or -1 past the box's end. The slots of a colour are
// laid out so that consecutive slots are points two apart along x (one row of the box after
// another), each colour's points visited once. The index arithmetic runs in I.
template <typename I>
SIMRUN_HOST_DEVICE inline std::int64_t colour_point_in(const BoxShape& box, int num_colours,
                                                       int colour, I slot) {
    const auto nx = static_cast<I>(box.points[0]), ny = static_cast<I>(box.points[1]);
    if (num_colours == 2) {
        const I half = (nx + 1) / 2;
        const I line = slot / half;  // j + ny k
        const I j = line % ny, k = line / ny;
        const I i = ((j + k + static_cast<I>(colour)) & 1) + 2 * (slot - line * half);
        return i < nx ? static_cast<std::int64_t>(i) +
                            static_cast<std::int64_t>(nx) * static_cast<std::int64_t>(line)
                      : -1;
    }
    // 2^dimension colours: the parity of each coordinate.
    const I cx = colour & 1, cy = (colour >> 1) & 1, cz = (colour >> 2) & 1;
    const I mx = (nx - cx + 1) / 2, my = (ny - cy + 1) / 2;
    const I row = slot / mx, plane = row / my;
    const I i = cx + 2 * (slot - row * mx);
    const I j = cy + 2 * (row - plane * my);
    const I k = cz + 2 * plane;
    return static_cast<std::int64_t>(i) +
           static_cast<std::int64_t>(nx) *
               (static_cast<std::int64_t>(j) + static_cast<std::int64_t>(ny) * k);
}

// Whether a box's point indices fit 32 bits, where index arithmetic is several times cheaper
// (a 64-bit division is a long instruction sequence on the GPU, and slower on the CPU too).
SIMRUN_HOST_DEVICE inline bool narrow_indices(const BoxShape& box) {
    return box.size() <= static_cast<std::int64_t>(0xffffffffu);
}

SIMRUN_HOST_DEVICE inline std::int64_t colour_point(const BoxShape& box, int num_colours,
                                                    int colour, std::int64_t slot) {
    return narrow_indices(box) ? colour_point_in<std::uint32_t>(box, num_colours, colour,
                                                                static_cast<std::uint32_t>(slot))
                               : colour_point_in<std::int64_t>(box, num_colours, colour, slot);
}

// How many slots colour_point takes for one colour.
inline std::int64_t colour_slots(const BoxShape& box, int num_colours, int colour) {
    if (num_colours == 2) return (box.points[0] + 1) / 2 * box.points[1] * box.points[2];
    std::int64_t count = 1;
    for (int axis = 0; axis < 3; ++axis) {
        const std::int64_t parity = (colour >> axis) & 1;
        count *= (box.points[axis] - parity + 1) / 2;
    }
    return count;
}

// x_i += (b_i - (A x)_i) / a_ii at the point of one slot of a colour.
template <typename T, typename Rows>
struct ColourSweepPoints {
    Rows rows;
    DiaView<T> a;  // for a_ii
    int main;
    BoxShape box;
    int num_colours;
    int colour;
    const T* b;
    T* x;
    SIMRUN_HOST_DEVICE void operator()(std::size_t slot) const {
        const std::int64_t i =
            colour_point(box, num_colours, colour, static_cast<std::int64_t>(slot));
        if (i < 0) return;
        const T diagonal = dia_entry(a, main, i);
        x[i] += (b[i] - row_product(rows, i, VectorEntries<T>{x})) / diagonal;
    }
};

// Traffic: per point of the colour, its row of A, b_i, x_i read and written, its neighbours'
// x gathered.
template <typename T>
void box_colour_sweep(const Backend& backend, const DiaView<T>& a, int main, BoxShape box,
                      int num_colours, int colour, const T* b, T* x) {
    const auto slots = static_cast<std::size_t>(colour_slots(box, num_colours, colour));
    with_diagonal_count(a, [&](const auto& rows) {
        using Rows = std::decay_t<decltype(rows)>;
        parallel_for(backend, slots,
                     ColourSweepPoints<T, Rows>{rows, a, main, box, num_colours, colour, b, x});
    });
}

// x_i += (b_i - (A x)_i) / a_ii at the points of colour `colour` (of 2) of a part of the box.
template <typename T, typename Rows>
struct ColourSweepPart {
    Rows rows;
    DiaView<T> a;  // for a_ii
    int main;
    BoxShape box;
    int colour;
    BoxRange part;
    const T* b;
    T* x;
    SIMRUN_HOST_DEVICE void operator()(std::size_t slot) const {
        const auto p = static_cast<std::int64_t>(slot);
        const std::int64_t nx = part.upper[0] - part.lower[0], ny = part.upper[1] - part.lower[1];
        const std::int64_t line = p / nx;
        const std::int64_t i = part.lower[0] + (p - line * nx);
        const std::int64_t j = part.lower[1] + line % ny;
        const std::int64_t k = part.lower[2] + line / ny;
        if (((i + j + k) & 1) != colour) return;
        const std::int64_t row = i + box.points[0] * (j + box.points[1] * k);
        const T diagonal = dia_entry(a, main, row);
        x[row] += (b[row] - row_product(rows, row, VectorEntries<T>{x})) / diagonal;
    }
};

template <typename T>
void box_colour_sweep_part(const Backend& backend, const DiaView<T>& a, int main, BoxShape box,
                           int colour, BoxRange part, const T* b, T* x) {
    for (int axis = 0; axis < 3; ++axis) {
        if (part.lower[axis] < 0 || part.upper[axis] < part.lower[axis] ||
            part.upper[axis] > box.points[axis]) {
            throw std::invalid_argument("box_colour_sweep_part: [" +
                                        std::to_string(part.lower[axis]) + ", " +
                                        std::to_string(part.upper[axis]) + ") along axis " +
                                        std::to_string(axis) + " outside the box's " +
                                        std::to_string(box.points[axis]) + " points");
        }
    }
    const auto slots = static_cast<std::size_t>(part.size());
    if (slots == 0) return;
    with_diagonal_count(a, [&](const auto& rows) {
        using Rows = std::decay_t<decltype(rows)>;
        parallel_for(backend, slots,
                     ColourSweepPart<T, Rows>{rows, a, main, box, colour, part, b, x});
    });
}

// One red-black Gauss-Seidel sweep of a box whose couplings lie along the axes from x into
// x_out: x copied, then colour `first` (0: (i + j + k) even) and the other, each its own pass
// (the reference; the CUDA back-end fuses the two colours of a 2D box in one pass over tiles).
template <typename T>
void box_colour_sweeps(const Backend& backend, const DiaView<T>& a, int main, BoxShape box,
                       int first, const T* b, const T* x, T* x_out) {
    backend.copy(x_out, x, static_cast<std::size_t>(a.n) * sizeof(T));
    box_colour_sweep(backend, a, main, box, 2, first, b, x_out);
    box_colour_sweep(backend, a, main, box, 2, 1 - first, b, x_out);
}

template <typename I>
SIMRUN_HOST_DEVICE inline void box_coordinates_in(const BoxShape& box, I point,
                                                  std::int64_t (&c)[3]) {
    const auto nx = static_cast<I>(box.points[0]), ny = static_cast<I>(box.points[1]);
    const I line = point / nx, plane = line / ny;
    c[0] = static_cast<std::int64_t>(point - line * nx);
    c[1] = static_cast<std::int64_t>(line - plane * ny);
    c[2] = static_cast<std::int64_t>(plane);
}

SIMRUN_HOST_DEVICE inline void box_coordinates(const BoxShape& box, std::int64_t point,
                                               std::int64_t (&c)[3]) {
    if (narrow_indices(box)) {
        box_coordinates_in<std::uint32_t>(box, static_cast<std::uint32_t>(point), c);
    } else {
        box_coordinates_in<std::int64_t>(box, point, c);
    }
}

// coarse_I = sum_s w(I, s) fine_{at(I) + s}. Traffic: 3^d weights (or a class byte) + 1 write
// per coarse point, the fine vector (each fine value read by up to 2^d coarse points, through
// the cache).
template <typename T>
void box_restrict(const Backend& backend, const BoxTransferView<T>& t, const T* fine, T* coarse) {
    const std::int64_t nc = t.coarse.size();
    parallel_for(backend, static_cast<std::size_t>(nc), [=] SIMRUN_HOST_DEVICE(std::size_t p) {
        const auto point = static_cast<std::int64_t>(p);
        std::int64_t c[3];
        box_coordinates(t.coarse, point, c);
        std::int64_t at[3];
        int reach[3];
        for (int axis = 0; axis < 3; ++axis) {
            at[axis] = t.first[axis] + t.step[axis] * c[axis];
            reach[axis] = t.step[axis] == 2 ? 1 : 0;
        }
        // Fixed, unrolled loops (the offsets a kept axis lacks skipped): the 3^d loads are
        // issued together.
        T sum = 0;
        SIMRUN_UNROLL
        for (int sz = -1; sz <= 1; ++sz) {
            const std::int64_t k = at[2] + sz;
            if ((sz != 0 && reach[2] == 0) || k < 0 || k >= t.fine.points[2]) continue;
            SIMRUN_UNROLL
            for (int sy = -1; sy <= 1; ++sy) {
                const std::int64_t j = at[1] + sy;
                if ((sy != 0 && reach[1] == 0) || j < 0 || j >= t.fine.points[1]) continue;
                SIMRUN_UNROLL
                for (int sx = -1; sx <= 1; ++sx) {
                    const std::int64_t i = at[0] + sx;
                    if ((sx != 0 && reach[0] == 0) || i < 0 || i >= t.fine.points[0]) continue;
                    const int slot = transfer_slot(t.fine.dimension, sx, sy, sz);
                    sum += transfer_weight(t, slot, point, nc) *
                           fine[i + t.fine.points[0] * (j + t.fine.points[1] * k)];
                }
            }
        }
        coarse[p] = sum;
    });
}

// fine_f += sum over the coarse points I near f of w(I, f - at(I)) coarse_I. Traffic: fine read
// and written; per fine point up to 2^d coarse values and weights (or class bytes) gathered.
template <typename T>
void box_interpolate_add(const Backend& backend, const BoxTransferView<T>& t, const T* coarse,
                         T* fine) {
    const std::int64_t nc = t.coarse.size();
    parallel_for(
        backend, static_cast<std::size_t>(t.fine.size()), [=] SIMRUN_HOST_DEVICE(std::size_t p) {
            std::int64_t f[3];
            box_coordinates(t.fine, static_cast<std::int64_t>(p), f);
            T sum = 0;
            for_each_coarse_neighbour(
                f, t.step, t.first, t.coarse,
                [&](std::int64_t point, std::int64_t, std::int64_t, std::int64_t, int slot) {
                    sum += transfer_weight(t, slot, point, nc) * coarse[point];
                });
            fine[p] += sum;
        });
}

// d = c_d d + c_r inv_diag .* r; x = x + d. Traffic: 4n reads, 2n writes.
template <typename T>
void chebyshev_step(const Backend& backend, std::size_t n, T c_d, T c_r, const T* inv_diag,
                    const T* r, T* d, T* x) {
    parallel_for(backend, n, [=] SIMRUN_HOST_DEVICE(std::size_t i) {
        // c_d = 0 starts the recurrence: d's old values are not read.
        const T step = (c_d != T(0) ? c_d * d[i] : T(0)) + c_r * inv_diag[i] * r[i];
        d[i] = step;
        x[i] += step;
    });
}
