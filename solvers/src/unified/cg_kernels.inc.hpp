// CG with its scalars on the back-end (cg_device_state.hpp): the two kernels of an iteration,
// written once. Included inside the namespace of each back-end, whose
// fused_reduce<T, Sums>(backend, n, phase, partials, ticket, setup, row, finish) runs, unless
// *phase is not running: context = setup() once per thread (or chunk), row(i, context, sums)
// for every i in [0, n) accumulating Sums partial sums, then finish(totals) once with the sums
// over all rows added in an order fixed by n. (No include guard: included once per back-end.)

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

// The last block's step after p'Ap: alpha, or the breakdown that stops the solve.
template <typename T>
SIMRUN_HOST_DEVICE void finish_cg_direction(CgScalars<T>& s, T pq) {
    if (!is_finite(pq) || !is_finite(s.rho)) {
        s.phase = CgPhase::direction_non_finite;
        s.breakdown_value = pq;
    } else if (pq <= T(0)) {
        s.phase = CgPhase::direction_indefinite;
        s.breakdown_value = pq;
    } else {
        s.alpha = s.rho / pq;
    }
}

// The last block's step after the update: record ||r||, decide whether to go on, and beta.
// The order of the checks is ResidualMonitor's, so the host reaches the same verdict.
template <typename T>
SIMRUN_HOST_DEVICE void finish_cg_update(CgScalars<T>& s, T rr, T rz) {
    const std::int64_t k = ++s.iteration;
    const double residual = static_cast<double>(square_root(rr));
    s.history[(k - 1) % cg_history_capacity] = residual;
    if (!is_finite(residual) || residual <= s.target || residual > s.divergence) {
        s.phase = CgPhase::residual_stop;
    } else if (k >= s.max_iterations) {
        s.phase = CgPhase::max_iterations;
    } else if (rz <= T(0)) {
        s.phase = CgPhase::residual_indefinite;
        s.breakdown_value = rz;
    } else {
        s.beta = rz / s.rho;
        s.rho = rz;
    }
}

template <typename T, typename View>
void cg_direction_rows(const Backend& backend, const View& a, const CgVectors<T>& v,
                       CgScalars<T>* s) {
    const CgVectors<T> vectors = v;
    fused_reduce<T, 1>(
        backend, v.n, &s->phase, v.partials, v.ticket,
        [=] SIMRUN_HOST_DEVICE() {
            const std::int64_t k = s->iteration;
            return CgDirectionContext<T>{
                {vectors.factors, vectors.r, vectors.p[k % 2], s->beta, k == 0},
                vectors.p[(k + 1) % 2]};
        },
        [=] SIMRUN_HOST_DEVICE(std::int64_t i, const CgDirectionContext<T>& c, T(&sums)[1]) {
            const T p_i = c.direction(i);
            const T q_i = row_product(a, i, c.direction);
            c.p_next[i] = p_i;
            vectors.q[i] = q_i;
            sums[0] += p_i * q_i;
        },
        [=] SIMRUN_HOST_DEVICE(const T(&totals)[1]) { finish_cg_direction(*s, totals[0]); });
}

// p' = z + beta p, q = A p', p'q; then alpha = rho / p'q.
template <typename T>
void cg_direction(const Backend& backend, const RowMatrixView<T>& a, const CgVectors<T>& v,
                  CgScalars<T>* s) {
    const auto run = [&](const auto& view) { cg_direction_rows(backend, view, v, s); };
    if (const auto* dia = std::get_if<DiaView<T>>(&a)) {
        with_diagonal_count(*dia, run);
    } else {
        std::visit(run, a);
    }
}

template <typename T>
struct CgUpdateContext {
    const T* p;  // the new direction
    T alpha;
};

// x += alpha p', r -= alpha q; r'r and r'z; then the residual check and beta.
template <typename T>
void cg_update(const Backend& backend, const CgVectors<T>& v, CgScalars<T>* s) {
    const CgVectors<T> vectors = v;
    fused_reduce<T, 2>(
        backend, v.n, &s->phase, v.partials, v.ticket,
        [=] SIMRUN_HOST_DEVICE() {
            return CgUpdateContext<T>{vectors.p[(s->iteration + 1) % 2], s->alpha};
        },
        [=] SIMRUN_HOST_DEVICE(std::int64_t i, const CgUpdateContext<T>& c, T(&sums)[2]) {
            vectors.x[i] += c.alpha * c.p[i];
            const T r_i = vectors.r[i] - c.alpha * vectors.q[i];
            vectors.r[i] = r_i;
            const T z_i = vectors.factors != nullptr ? vectors.factors[i] * r_i : r_i;
            sums[0] += r_i * r_i;
            sums[1] += r_i * z_i;
        },
        [=] SIMRUN_HOST_DEVICE(const T(&totals)[2]) {
            finish_cg_update(*s, totals[0], totals[1]);
        });
}
