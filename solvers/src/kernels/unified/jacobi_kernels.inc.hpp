// Weighted Jacobi with its scalars on the back-end (jacobi_device_state.hpp): one step per
// iteration (unified/fused_steps.hpp), written once, run by each back-end's fused_iterations.
// Included inside the namespace of each back-end. (No include guard: included once per
// back-end.)

template <typename T>
struct JacobiContext {
    const T* x;  // x_k
    T* x_next;   // x_{k+1}
};

// r_k = b - A x_k, x_{k+1} = x_k + omega D^-1 r_k, ||r_k||^2; then ||r_k|| recorded and checked
// (the same checks in the same order as ResidualMonitor). Traffic, DIA: D n values + 3n reads
// (b, x_k, D^-1) + n writes (x_{k+1}), the neighbours' x through the cache.
template <typename T, typename View>
struct JacobiStep {
    static constexpr int sums = 1;
    View a;
    JacobiVectors<T> v;

    SIMRUN_HOST_DEVICE JacobiContext<T> setup(const JacobiScalars<T>& s) const {
        return {v.x[s.current % 2], v.x[(s.current + 1) % 2]};
    }
    SIMRUN_HOST_DEVICE void row(std::int64_t i, const JacobiContext<T>& c, T (&partial)[1]) const {
        const T x_i = c.x[i];
        const T r_i = v.b[i] - row_product(a, i, VectorEntries<T>{c.x});
        c.x_next[i] = x_i + v.omega * v.inverse_diagonal[i] * r_i;
        partial[0] += r_i * r_i;
    }
    SIMRUN_HOST_DEVICE void finish(JacobiScalars<T>& s, const T (&totals)[1]) const {
        const std::int64_t k = s.current;
        if (k >= 1) {  // ||r_0|| is the host's
            if (record_residual(s, k, static_cast<double>(square_root(totals[0])))) {
                s.phase = JacobiPhase::residual_stop;
                return;
            }
            if (k >= s.max_iterations) {
                s.phase = JacobiPhase::max_iterations;
                return;
            }
        }
        s.current = k + 1;
    }
};

// `count` iterations (fewer when the solve stops).
template <typename T>
void jacobi_iterations(const Backend& backend, const RowMatrixView<T>& a, const JacobiVectors<T>& v,
                       JacobiScalars<T>* s, std::int64_t count) {
    with_row_view(a, [&](const auto& view) {
        using View = std::decay_t<decltype(view)>;
        fused_iterations<T>(backend, v.n, s, v.workspace, count, JacobiStep<T, View>{view, v});
    });
}
