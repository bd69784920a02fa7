// BiCGStab with its scalars on the back-end (bicgstab_device_state.hpp): the three steps of an
// iteration (unified/fused_steps.hpp), written once, run by each back-end's fused_iterations.
// Included inside the namespace of each back-end. (No include guard: included once per
// back-end.)
//
// Per iteration, with M = diag(factors) or I and D stored diagonals:
//   1. p' = r + beta (p - omega v) (p' = r first), v' = A M p', r0'v'   -> alpha
//   2. s = r - alpha v', t = A M s, t't, t's, s's                        -> omega
//   3. x += alpha M p' + omega M s, r = s - omega t, r'r, r0'r          -> ||r||, beta
// Neighbours' p' and s are formed where they are read, never read back. Traffic (M = I):
// 2 D n matrix values + 17 n vector values (r, p, v, r0 read and p', v' written; r, v' read
// and t written; x, p', r, v', t, r0 read and x, r written), against 15 n for a floor that
// stores nothing twice.

// M z_j for a vector z given entry-wise.
template <typename T, typename Z>
struct Preconditioned {
    const T* factors;  // null: M = I
    Z z;
    SIMRUN_HOST_DEVICE T operator()(std::int64_t j) const {
        return factors != nullptr ? read_only(factors + j) * z(j) : z(j);
    }
};

// p'_j = r_j + beta (p_j - omega v_j), or r_j on the first iteration.
template <typename T>
struct BiCgStabDirectionEntries {
    const T* r;
    const T* p;  // the old direction and its product (unused on the first iteration)
    const T* v;
    T beta;
    T omega;
    bool first;
    SIMRUN_HOST_DEVICE T operator()(std::int64_t j) const {
        const T r_j = read_only(r + j);
        return first ? r_j : r_j + beta * (read_only(p + j) - omega * read_only(v + j));
    }
};

// s_j = r_j - alpha v_j.
template <typename T>
struct BiCgStabHalfStepEntries {
    const T* r;
    const T* v;
    T alpha;
    SIMRUN_HOST_DEVICE T operator()(std::int64_t j) const {
        return read_only(r + j) - alpha * read_only(v + j);
    }
};

template <typename T>
struct BiCgStabDirectionContext {
    Preconditioned<T, BiCgStabDirectionEntries<T>> direction;
    T* p_next;
    T* v_next;
};

// 1. p', v' = A M p', r0'v'; then alpha = rho / r0'v'.
template <typename T, typename View>
struct BiCgStabDirectionStep {
    static constexpr int sums = 1;
    View a;
    BiCgStabVectors<T> v;

    SIMRUN_HOST_DEVICE BiCgStabDirectionContext<T> setup(const BiCgStabScalars<T>& s) const {
        const std::int64_t k = s.iteration;
        return {{v.factors, {v.r, v.p[k % 2], v.v[k % 2], s.beta, s.omega, k == 0}},
                v.p[(k + 1) % 2],
                v.v[(k + 1) % 2]};
    }
    SIMRUN_HOST_DEVICE void row(std::int64_t i, const BiCgStabDirectionContext<T>& c,
                                T (&partial)[1]) const {
        const T p_i = c.direction.z(i);
        const T v_i = row_product(a, i, c.direction);
        c.p_next[i] = p_i;
        c.v_next[i] = v_i;
        partial[0] += v.r0[i] * v_i;
    }
    SIMRUN_HOST_DEVICE void finish(BiCgStabScalars<T>& s, const T (&totals)[1]) const {
        const T r0v = totals[0];
        s.phase = bicgstab_alpha_phase(r0v);  // the reference's decision
        if (s.running()) {
            s.alpha = s.rho / r0v;
        } else {
            s.breakdown_value = r0v;
        }
    }
};

template <typename T>
struct BiCgStabStabiliseContext {
    Preconditioned<T, BiCgStabHalfStepEntries<T>> s;
};

// 2. t = A M s, t't, t's and s's; then the half-step check, or omega = t's / t't.
template <typename T, typename View>
struct BiCgStabStabiliseStep {
    static constexpr int sums = 3;
    View a;
    BiCgStabVectors<T> v;

    SIMRUN_HOST_DEVICE BiCgStabStabiliseContext<T> setup(const BiCgStabScalars<T>& s) const {
        return {{v.factors, {v.r, v.v[(s.iteration + 1) % 2], s.alpha}}};
    }
    SIMRUN_HOST_DEVICE void row(std::int64_t i, const BiCgStabStabiliseContext<T>& c,
                                T (&partial)[3]) const {
        const T s_i = c.s.z(i);
        const T t_i = row_product(a, i, c.s);
        v.t[i] = t_i;
        partial[0] += t_i * t_i;
        partial[1] += t_i * s_i;
        partial[2] += s_i * s_i;
    }
    SIMRUN_HOST_DEVICE void finish(BiCgStabScalars<T>& s, const T (&totals)[3]) const {
        const T tt = totals[0], ts = totals[1];
        const double s_norm = static_cast<double>(square_root(totals[2]));
        // The reference's decisions: the half step (x += alpha M p, r = s), else omega.
        if (bicgstab_half_step(s_norm, s.target)) {
            s.half_step_residual = s_norm;
            s.omega = T(0);
        } else if ((s.phase = bicgstab_omega_phase(tt, ts)) != BiCgStabPhase::running) {
            s.breakdown_value = s.phase == BiCgStabPhase::omega_zero ? T(0) : tt;
        } else {
            s.omega = ts / tt;
        }
    }
};

template <typename T>
struct BiCgStabUpdateContext {
    const T* p;  // the new direction
    const T* v;  // A M p
    T alpha;
    T omega;
};

// 3. x += alpha M p' + omega M s, r = s - omega t, r'r and r0'r; then the residual check
// (the same checks in the same order as ResidualMonitor) and beta.
template <typename T>
struct BiCgStabUpdateStep {
    static constexpr int sums = 2;
    BiCgStabVectors<T> v;

    SIMRUN_HOST_DEVICE BiCgStabUpdateContext<T> setup(const BiCgStabScalars<T>& s) const {
        const std::int64_t next = (s.iteration + 1) % 2;
        return {v.p[next], v.v[next], s.alpha, s.omega};
    }
    SIMRUN_HOST_DEVICE void row(std::int64_t i, const BiCgStabUpdateContext<T>& c,
                                T (&partial)[2]) const {
        const T f = v.factors != nullptr ? v.factors[i] : T(1);
        const T s_i = v.r[i] - c.alpha * c.v[i];
        v.x[i] += c.alpha * (f * c.p[i]) + c.omega * (f * s_i);
        // (omega = 0 ends the iteration at its half step: r = s, whatever t holds)
        const T r_i = c.omega == T(0) ? s_i : s_i - c.omega * v.t[i];
        v.r[i] = r_i;
        partial[0] += r_i * r_i;
        partial[1] += v.r0[i] * r_i;
    }
    SIMRUN_HOST_DEVICE void finish(BiCgStabScalars<T>& s, const T (&totals)[2]) const {
        const std::int64_t k = s.iteration + 1;
        // An iteration ended at its half step records ||s||, which met the tolerance: it stops.
        const double residual = s.half_step_residual >= 0.0
                                    ? s.half_step_residual
                                    : static_cast<double>(square_root(totals[0]));
        const T rho_next = totals[1];
        // The reference's order: the residual, the iteration limit, then the next iteration's
        // rho.
        if (record_residual(s, k, residual)) {
            s.phase = BiCgStabPhase::residual_stop;
        } else if (k >= s.max_iterations) {
            s.phase = BiCgStabPhase::max_iterations;
        } else if ((s.phase = bicgstab_rho_phase(rho_next)) != BiCgStabPhase::running) {
            s.breakdown_value = rho_next;
        } else {
            s.beta = (rho_next / s.rho) * (s.alpha / s.omega);
            s.rho = rho_next;
        }
    }
};

// `count` iterations (fewer when the solve stops).
template <typename T>
void bicgstab_iterations(const Backend& backend, const RowMatrixView<T>& a,
                         const BiCgStabVectors<T>& v, BiCgStabScalars<T>* s, std::int64_t count) {
    const auto run = [&](const auto& view) {
        using View = std::decay_t<decltype(view)>;
        fused_iterations<T>(backend, v.n, s, v.workspace, count,
                            BiCgStabDirectionStep<T, View>{view, v},
                            BiCgStabStabiliseStep<T, View>{view, v}, BiCgStabUpdateStep<T>{v});
    };
    with_row_view(a, run);
}
