#pragma once
// What a user may choose of a multigrid cycle ([solver.multigrid] in a run's input).
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "simrun/solvers/base/enum_names.hpp"
#include "simrun/solvers/base/precision.hpp"

namespace simrun::solvers {

// V: one visit of each coarser level per cycle; W: two; F: an F-cycle on the coarser level,
// then a V-cycle. Automatic: V, or W where the finest operator's coefficients jump (a row whose
// couplings to the two sides along an axis differ more than 100 times): there each level's
// interpolation misses some of the error, and the misses add up over a V-cycle's levels
// (MG-PCG on 16 x 16 random blocks of conductivities up to 1e6 apart: 33 and 40 iterations at
// 129^2 and 257^2 with V, 29 and 32 with F, 19 and 18 with W, whose cycle costs about 1.5 V-cycles
// in 2D and 1.2 in 3D).
enum class MultigridCycle { v, w, f, automatic };
// Red-black Gauss-Seidel (2 colours for stencils along the axes, 2^dimension for stencils with
// diagonal neighbours, so each colour's points are uncoupled), or Chebyshev polynomials in
// D^-1 A (degree = sweeps) on [0.3, 1] times a Gershgorin bound of its largest eigenvalue.
enum class MultigridSmoother { red_black_gauss_seidel, chebyshev };

template <>
inline constexpr std::array enum_names<MultigridCycle> = {
    EnumName{MultigridCycle::v, "v"}, EnumName{MultigridCycle::w, "w"},
    EnumName{MultigridCycle::f, "f"}, EnumName{MultigridCycle::automatic, "auto"}};
template <>
inline constexpr std::array enum_names<MultigridSmoother> = {
    EnumName{MultigridSmoother::red_black_gauss_seidel, "red_black_gauss_seidel"},
    EnumName{MultigridSmoother::chebyshev, "chebyshev"}};

struct MultigridParameters {
    MultigridCycle cycle = MultigridCycle::automatic;
    MultigridSmoother smoother = MultigridSmoother::red_black_gauss_seidel;
    int pre_sweeps = 1;   // before the coarse correction (>= 0)
    int post_sweeps = 1;  // after it (>= 0; equal to pre_sweeps for a symmetric cycle)
    // The hierarchy stops at the first level with at most this many points and solves it
    // directly (a dense inverse applied as one product); at least 1, at most 4096.
    std::int64_t coarsest_size = 512;
    int max_levels = 40;  // at least 1
    // Over ranks: the first level of at most this many points is gathered whole on every rank,
    // and the levels below it are repeated on each, so that a cycle makes one gather instead of
    // the small levels' halo exchanges. (A level is also gathered once a rank would hold too
    // few of its planes; 0: only then.) In [0, 2^24]. None: the back-end's (gather_size_on,
    // multigrid_hierarchy.hpp).
    std::optional<std::int64_t> gather_size;
    // Gauss-Seidel's colours in backward order after the coarse correction, so that the cycle
    // is a symmetric operator (what CG needs); false keeps the forward order, which contracts
    // more per cycle (for BiCGStab and the cycle as a solver on its own).
    bool symmetric = true;
    // The precision the cycle computes in; none: float on a GPU, where the cycle is bound by
    // memory traffic and float halves it (the Krylov method around the cycle keeps its own
    // precision: the cycle only has to reduce the error by about 10x, and its rounding at 1e-7
    // does not show in the iterations), the solve's own on the CPU (where float gained
    // nothing measurable and its conversions cost set-up time).
    std::optional<Precision> precision;
    // Multicolour Gauss-Seidel (2^dimension colours, where couplings are not along the axes)
    // sweeps the colours of even parity along these axes (bit a: axis a) before the others, so
    // that a level split over ranks along them exchanges its halo once per half of the colours
    // instead of after each. None: the axes the finest level is split along (on one process,
    // none: the colours in order, x's parity fastest, as also where the split axes are the
    // slowest ones: slabs). Any order smooths alike; over ranks a cycle is, to rounding, that of
    // one process sweeping in the same order. At most 7.
    std::optional<unsigned> slow_colour_axes;

    struct Problem {
        const char* key;  // "pre_sweeps", "post_sweeps", "coarsest_size", "max_levels",
                          // "gather_size" or "slow_colour_axes"
        std::string message;
    };
    // The first value out of range, or nothing.
    std::optional<Problem> problem() const;
    // Throws std::invalid_argument("multigrid: KEY MESSAGE") for problem().
    void validate() const;
};

}  // namespace simrun::solvers
