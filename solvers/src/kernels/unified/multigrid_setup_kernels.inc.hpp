// The kernels of a multigrid level's set-up on a box (multigrid/, double), each point's arithmetic
// from box_setup_points.hpp, run by each back-end's parallel_for. Included inside the namespace
// of each back-end, after parallel_for and multigrid_kernels.inc.hpp (box_coordinates). (No include
// guard: included once per back-end.)

// Coarse point I's weights: 1 in the centre slot, 0 elsewhere.
struct CentreWeights {
    double* w;
    std::int64_t nc;
    int slots;
    int centre;
    SIMRUN_HOST_DEVICE void operator()(std::size_t i) const {
        for (int s = 0; s < slots; ++s) {
            w[s * nc + static_cast<std::int64_t>(i)] = s == centre ? 1.0 : 0.0;
        }
    }
};

// The collapsed weights of the fine points that lie between coarse points on `axes` axes.
struct CollapsedWeightsPoints {
    DiaView<double> a;
    BoxDiagonalSteps steps;
    BoxTransferView<double> t;
    double* w;
    int axes;
    SIMRUN_HOST_DEVICE void operator()(std::size_t p) const {
        const auto row = static_cast<std::int64_t>(p);
        std::int64_t c[3];
        box_coordinates(t.fine, row, c);
        const unsigned mask = fine_axes_of(c, t);
        if (axes_count(mask) != axes) return;
        collapsed_weights_at(a, steps, t, w, row, c, mask);
    }
};

// Traffic: the weights written twice (set, then added to by the fine points), the fine rows read
// (D values, a mask or a class per row) once per class of points and twice more for its points
// (the terms are counted, then followed), 2^k weights read per fine point between coarse points
// on k axes. (Each back-end's box_collapsed_weights runs it.)
inline void box_collapsed_weights_by_points(const Backend& backend, const DiaView<double>& a,
                                            const BoxDiagonalSteps& steps,
                                            const BoxTransferView<double>& t, double* weights) {
    const int dimension = t.fine.dimension;
    const std::int64_t nc = t.coarse.size();
    const int slots = dimension == 1 ? 3 : dimension == 2 ? 9 : 27;
    parallel_for(backend, static_cast<std::size_t>(nc),
                 CentreWeights{weights, nc, slots, transfer_slot(dimension, 0, 0, 0)});
    for (int k = 1; k <= dimension; ++k) {
        parallel_for(backend, static_cast<std::size_t>(t.fine.size()),
                     CollapsedWeightsPoints{a, steps, t, weights, k});
    }
}

struct GalerkinPoints {
    DiaView<double> a;
    BoxDiagonalSteps steps;
    BoxTransferView<double> t;
    GalerkinTableView table;
    GalerkinLayout layout;
    double* coarse;
    SIMRUN_HOST_DEVICE void operator()(std::size_t point) const {
        galerkin_row(a, steps, t, table, layout, static_cast<std::int64_t>(point), coarse);
    }
};

// Traffic: per coarse point its 3^dimension weights and the rows of the fine points they reach
// (shared with the neighbouring coarse points through the cache), the neighbours' weights
// gathered, its row of the coarse operator written. (Each back-end's box_galerkin runs it.)
inline void box_galerkin_by_points(const Backend& backend, const DiaView<double>& a,
                                   const BoxDiagonalSteps& steps, const BoxTransferView<double>& t,
                                   const GalerkinTableView& table, const GalerkinLayout& layout,
                                   double* coarse) {
    if (t.weights == nullptr || t.weight_class != nullptr) {
        throw std::invalid_argument(
            "box_galerkin: the transfer's weights must be in the general "
            "layout (not classes)");
    }
    parallel_for(backend, static_cast<std::size_t>(t.coarse.size()),
                 GalerkinPoints{a, steps, t, table, layout, coarse});
}

template <typename T>
struct InverseDiagonalRows {
    DiaView<double> a;
    int main;
    T* out;
    SIMRUN_HOST_DEVICE void operator()(std::size_t i) const {
        out[i] = static_cast<T>(1.0 / dia_entry(a, main, static_cast<std::int64_t>(i)));
    }
};

// Traffic: the main diagonal's values (or a mask or class per row) read, n values written.
template <typename T>
void dia_inverse_diagonal(const Backend& backend, const DiaView<double>& a, int main, T* out) {
    parallel_for(backend, static_cast<std::size_t>(a.n), InverseDiagonalRows<T>{a, main, out});
}

// The values of point p of `points` from its place in `from` to its place in `to`, array by
// array.
struct CopyRowsPoints {
    const double* from;
    BoxShape from_shape;
    std::int64_t from_at[3];
    double* to;
    BoxShape to_shape;
    std::int64_t to_at[3];
    BoxShape points;
    int count;
    SIMRUN_HOST_DEVICE void operator()(std::size_t p) const {
        std::int64_t c[3];
        box_coordinates(points, static_cast<std::int64_t>(p), c);
        const std::int64_t i =
            from_at[0] + c[0] +
            from_shape.points[0] * (from_at[1] + c[1] + from_shape.points[1] * (from_at[2] + c[2]));
        const std::int64_t j =
            to_at[0] + c[0] +
            to_shape.points[0] * (to_at[1] + c[1] + to_shape.points[1] * (to_at[2] + c[2]));
        const std::int64_t from_n = from_shape.size(), to_n = to_shape.size();
        for (int s = 0; s < count; ++s) to[s * to_n + j] = from[s * from_n + i];
    }
};

// Traffic: 8 bytes read and 8 written per point and array.
inline void box_copy_rows(const Backend& backend, const double* from, const BoxShape& from_shape,
                          const std::int64_t (&from_at)[3], double* to, const BoxShape& to_shape,
                          const std::int64_t (&to_at)[3], const BoxShape& points, int count) {
    CopyRowsPoints copy{from, from_shape, {}, to, to_shape, {}, points, count};
    for (int axis = 0; axis < 3; ++axis) {
        copy.from_at[axis] = from_at[axis];
        copy.to_at[axis] = to_at[axis];
    }
    parallel_for(backend, static_cast<std::size_t>(points.size()), copy);
}

// Value s of point p zeroed where its step leaves the box.
struct ZeroLeavingPoints {
    double* values;
    BoxShape shape;
    BoxDiagonalSteps steps;
    int count;
    SIMRUN_HOST_DEVICE void operator()(std::size_t p) const {
        std::int64_t c[3];
        box_coordinates(shape, static_cast<std::int64_t>(p), c);
        const std::int64_t n = shape.size();
        for (int s = 0; s < count; ++s) {
            bool inside = true;
            for (int axis = 0; axis < 3; ++axis) {
                const std::int64_t to = c[axis] + steps.step[s][axis];
                inside = inside && to >= 0 && to < shape.points[axis];
            }
            if (!inside) values[s * n + static_cast<std::int64_t>(p)] = 0.0;
        }
    }
};

// Traffic: the zeroed values written (the faces' points); each point's coordinates computed.
inline void box_zero_leaving(const Backend& backend, double* values, const BoxShape& shape,
                             const BoxDiagonalSteps& steps, int count) {
    parallel_for(backend, static_cast<std::size_t>(shape.size()),
                 ZeroLeavingPoints{values, shape, steps, count});
}
