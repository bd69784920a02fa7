// CG with its scalars on the back-end (cg_device_state.hpp): the two steps of an iteration
// (unified/fused_steps.hpp), written once; their finishes are unified/cg_scalar_steps.hpp. Included
// inside the namespace of each back-end, whose fused_iterations runs them. (No include guard:
// included once per back-end.)

// z_j + beta p_j, the new direction, computed where it is needed: by its own row (which stores
// it) and by the rows that multiply it (which would otherwise read it back from memory).
template <typename T>
struct CgDirectionEntries {
    const T* factors;  // null: z = r
    const T* r;
    const T* p;  // the old direction (unused on the first iteration)
    T beta;
    bool first;
    SIMRUN_HOST_DEVICE T operator()(std::int64_t j) const {
        const T z =
            factors != nullptr ? read_only(factors + j) * read_only(r + j) : read_only(r + j);
        return first ? z : z + beta * read_only(p + j);
    }
};

template <typename T>
struct CgDirectionContext {
    CgDirectionEntries<T> direction;
    T* p_next;
};

// p' = z + beta p, q = A p', p'q; then alpha = rho / p'q.
template <typename T, typename View>
struct CgDirectionStep {
    static constexpr int sums = 1;
    View a;
    CgVectors<T> v;

    SIMRUN_HOST_DEVICE CgDirectionContext<T> setup(const CgScalars<T>& s) const {
        const std::int64_t k = s.iteration;
        return {{v.factors, v.r, v.p[k % 2], s.beta, k == 0}, v.p[(k + 1) % 2]};
    }
    SIMRUN_HOST_DEVICE void row(std::int64_t i, const CgDirectionContext<T>& c,
                                T (&partial)[1]) const {
        const T p_i = c.direction(i);
        const T q_i = row_product(a, i, c.direction);
        c.p_next[i] = p_i;
        v.q[i] = q_i;
        partial[0] += p_i * q_i;
    }
    SIMRUN_HOST_DEVICE void finish(CgScalars<T>& s, const T (&totals)[1]) const {
        finish_cg_direction(s, totals[0]);
    }
};

template <typename T>
struct CgUpdateContext {
    const T* p;  // the new direction
    T alpha;
};

// x += alpha p', r -= alpha q; r'r and r'z; then the residual check and beta.
template <typename T>
struct CgUpdateStep {
    static constexpr int sums = 2;
    CgVectors<T> v;

    SIMRUN_HOST_DEVICE CgUpdateContext<T> setup(const CgScalars<T>& s) const {
        return {v.p[(s.iteration + 1) % 2], s.alpha};
    }
    SIMRUN_HOST_DEVICE void row(std::int64_t i, const CgUpdateContext<T>& c,
                                T (&partial)[2]) const {
        v.x[i] += c.alpha * c.p[i];
        const T r_i = v.r[i] - c.alpha * v.q[i];
        v.r[i] = r_i;
        const T z_i = v.factors != nullptr ? v.factors[i] * r_i : r_i;
        partial[0] += r_i * r_i;
        partial[1] += r_i * z_i;
    }
    SIMRUN_HOST_DEVICE void finish(CgScalars<T>& s, const T (&totals)[2]) const {
        finish_cg_update(s, totals[0], totals[1]);
    }
};

// `count` iterations (fewer when the solve stops): direction, then update.
template <typename T>
void cg_iterations(const Backend& backend, const RowMatrixView<T>& a, const CgVectors<T>& v,
                   CgScalars<T>* s, std::int64_t count) {
    const auto run = [&](const auto& view) {
        using View = std::decay_t<decltype(view)>;
        fused_iterations<T>(backend, v.n, s, v.workspace, count, CgDirectionStep<T, View>{view, v},
                            CgUpdateStep<T>{v});
    };
    with_row_view(a, run);
}
