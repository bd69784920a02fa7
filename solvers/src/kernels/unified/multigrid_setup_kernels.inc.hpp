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
// on k axes.
inline void box_collapsed_weights(const Backend& backend, const DiaView<double>& a,
                                  const BoxDiagonalSteps& steps, const BoxTransferView<double>& t,
                                  double* weights) {
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
// gathered, its row of the coarse operator written.
inline void box_galerkin(const Backend& backend, const DiaView<double>& a,
                         const BoxDiagonalSteps& steps, const BoxTransferView<double>& t,
                         const GalerkinTableView& table, const GalerkinLayout& layout,
                         double* coarse) {
    if (t.weights == nullptr || t.weight_class != nullptr) {
        throw std::invalid_argument("box_galerkin: the transfer's weights must be in the general "
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
