#pragma once
// CG preconditioned by multicolour SSOR with the whole of a small system in one block of
// workers (KernelTable::cg_sweep_iterations): the GPU's threads of one block, a barrier
// wherever a vector another thread wrote is read (between colours, before the product), or one
// CPU core, whose barriers are no-ops. Written once for both; a back-end supplies the Block:
//   void rows(std::int64_t n, F f);            f(i) for the worker's share of i in [0, n)
//   void row_products(std::int64_t n, const View& a, const T* x, F f);
//                                              f(i, (A x)_i) for its share of the rows
//   void colour_row_sums(const MulticolourSweepsView<T>& m, std::int32_t begin,
//                        std::int32_t end, const T* x, F f);
//                                              f(i, sum_{j != i} a_ij x_j), i = m.rows[begin ..
//                                              end)
//   T sum(T partial);                          the block's total, the same bits on every
//                                              worker, in an order fixed by the block's size
//   bool leader();                             one worker: it advances the shared scalars
//   void sync();                               every worker's writes seen by every worker
// The scalars (CgScalars) are shared by the workers: the leader writes them between barriers.
// The vectors are written and read back within the block, so no read goes through a
// read-only cache (VectorEntries) here.
#include <cstdint>

#include "base/cg_device_state.hpp"
#include "cg_scalar_steps.hpp"
#include "iteration_decisions.hpp"
#include "simrun/solvers/base/host_device.hpp"

namespace simrun::solvers {

// z = M r: z = 0, then an SOR sweep over the colours forward and one backward with right-hand
// side r (SsorPreconditioner's apply), one pass fewer in each of two places (below). Traffic:
// the matrix twice, r, z and the inverse diagonal twice; n writes for the zeros. (Zeroing z in
// the update pass and summing r'z as the backward sweep finishes each row saves two passes, yet
// measured slower on an H100: 48-52 against 38 us per iteration on nos3, with other changes;
// kept apart.)
template <typename T, typename Block>
SIMRUN_HOST_DEVICE void ssor_in_block(Block& block, const CgSweepVectors<T>& v) {
    const MulticolourSweepsView<T>& m = v.m;
    // z = 0 and the forward sweep's first colour in one pass: that colour's rows read only
    // rows of other colours, all still zero, so theirs is omega inv_diag_i r_i.
    const std::int32_t first_end = m.colours > 0 ? m.offsets[1] : 0;
    block.rows(v.n, [&](std::int64_t r) {
        const std::int32_t i = m.rows[r];
        v.z[i] = r < first_end ? m.omega * m.inv_diag[i] * v.r[i] : T(0);
    });
    block.sync();
    // With omega = 1 the backward sweep's first colour, the forward sweep's last, would compute
    // the same values from the same ones again: it is skipped.
    const bool repeats_last_colour = m.omega != T(1);
    for (int step = 1; step < 2 * m.colours; ++step) {
        if (step == m.colours && !repeats_last_colour) continue;
        const int c = step < m.colours ? step : 2 * m.colours - 1 - step;
        block.colour_row_sums(m, m.offsets[c], m.offsets[c + 1], v.z, [&](std::int32_t i, T sum) {
            v.z[i] = (T(1) - m.omega) * v.z[i] + m.omega * m.inv_diag[i] * (v.r[i] - sum);
        });
        block.sync();
    }
}

// `count` iterations (fewer once the solve stops), each as the reference loop takes it
// (ConjugateGradient::solve_reference): p = z + beta p (p = z on iteration 0); q = A p, p'q,
// alpha; x += alpha p, r -= alpha q, ||r||; unless ||r|| stops the solve, z = M r and r'z;
// then beta, the checks and the record of ||r|| (cg_scalar_steps.hpp). z = M r0 and rho = r0'z
// are the caller's. A p from the sweeps' matrix where it holds A's entries (one matrix read three
// times, which a GPU block keeps in its shared memory), else from A's rows. Passes over the rows
// per iteration: 5 and 2 per colour, with 4 block sums. Traffic per iteration: A once and M's
// matrix twice, about 14 n vector values; all of it from the caches for a system that fits them.
template <typename T, typename Block, typename View>
SIMRUN_HOST_DEVICE void cg_sweep_iterations_in_block(Block& block, const View& a,
                                                     const CgSweepVectors<T>& v, CgScalars<T>& s,
                                                     std::int64_t count) {
    for (std::int64_t k = 0; k < count && s.running(); ++k) {
        const bool first = s.iteration == 0;
        const T beta = s.beta;
        block.rows(v.n, [&](std::int64_t i) { v.p[i] = first ? v.z[i] : v.z[i] + beta * v.p[i]; });
        block.sync();

        T pq = 0;
        const auto product = [&](std::int64_t i, T q_i) {
            v.q[i] = q_i;
            pq += v.p[i] * q_i;
        };
        if (v.product_from_sweeps) {
            // A's rows as the sweeps hold them: the off-diagonal entries, then the diagonal.
            block.colour_row_sums(v.m, 0, v.m.n, v.p, [&](std::int32_t i, T sum) {
                product(i, sum + v.m.diag[i] * v.p[i]);
            });
        } else {
            block.row_products(v.n, a, v.p, product);
        }
        pq = block.sum(pq);
        if (block.leader()) finish_cg_direction(s, pq);
        block.sync();
        if (!s.running()) break;

        const T alpha = s.alpha;
        T rr = 0;
        block.rows(v.n, [&](std::int64_t i) {
            v.x[i] += alpha * v.p[i];
            const T r_i = v.r[i] - alpha * v.q[i];
            v.r[i] = r_i;
            rr += r_i * r_i;
        });
        rr = block.sum(rr);

        // record_residual (in finish_cg_update) reaches the same verdict on the same value.
        T rz = 0;
        if (residual_verdict(static_cast<double>(square_root(rr)), s.target, s.divergence) ==
            ResidualVerdict::go_on) {
            ssor_in_block(block, v);
            block.rows(v.n, [&](std::int64_t i) { rz += v.r[i] * v.z[i]; });
            rz = block.sum(rz);
        }
        if (block.leader()) finish_cg_update(s, rr, rz);
        block.sync();
    }
}

}  // namespace simrun::solvers
