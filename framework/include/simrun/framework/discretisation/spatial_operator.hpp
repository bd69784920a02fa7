#pragma once
// The spatial operator L of u_t = L u + f on a grid, with the boundary conditions folded in,
// assembled in DIA (one row per node of a box of the grid, the whole grid by default;
// diagonals 0, +-1, +-nx, +-nx*ny with the box's nx and ny).
//
// Assembly runs on the OpenMP threads, calling the stencil function from several at once, each
// thread along its block of lines (for_each_line_in_blocks), a line's free nodes in order.
// A problem gives the stencil of L at every node, boundary nodes included, as if the grid went
// on (the coefficient of the missing neighbour is that of a ghost node). Then per node:
// - on a Dirichlet side: the row is left zero and u = g is imposed by the time integrator;
// - on a Neumann or Robin side: the ghost is eliminated with the second-order central
//   condition u_ghost = u_inner + 2 h (g - a u_node), moving its coefficient c to the inner
//   neighbour, -2 h a c to the node, and 2 h c g(t) to a boundary forcing term;
// - elsewhere the stencil as given.
// Each folded direction halves the row's symmetrising scale: scaling the row by 1/2 restores
// symmetry for symmetric stencils (the folded row couples twice as strongly inward).
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "simrun/framework/discretisation/boundary_conditions.hpp"
#include "simrun/framework/discretisation/grid.hpp"
#include "simrun/framework/discretisation/stencil.hpp"
#include "simrun/solvers/matrices/dia_data.hpp"

namespace simrun::framework {

using StencilFunction =
    std::function<StencilCoefficients(std::int64_t i, std::int64_t j, std::int64_t k)>;

// The system matrix shift I - scale L (system_matrix's) assembled in L's place, for a caller
// that needs no L: one pass writes it, and L is never held.
struct SystemForm {
    double shift = 0.0;
    double scale = 1.0;
};

// A stencil along a line of nodes, as assembly reads it: fill(stencil, i_begin, i_end, j, k,
// out) writes the stencil at (i, j, k) to out[i - i_begin] for i in [i_begin, i_end).
struct LineStencils {
    void (*fill)(const void* stencil, std::int64_t i_begin, std::int64_t i_end, std::int64_t j,
                 std::int64_t k, StencilCoefficients* out);
    const void* stencil;
};

// The line stencils of a callable stencil(i, j, k) -> StencilCoefficients, called inline at
// each node (`stencil` must outlive the result).
template <typename Stencil>
LineStencils line_stencils(const Stencil& stencil) {
    return {[](const void* callable, std::int64_t i_begin, std::int64_t i_end, std::int64_t j,
               std::int64_t k, StencilCoefficients* out) {
                const auto& f = *static_cast<const Stencil*>(callable);
                for (std::int64_t i = i_begin; i < i_end; ++i) out[i - i_begin] = f(i, j, k);
            },
            &stencil};
}

class SpatialOperator {
public:
    // L on the whole grid. Throws InputError (key 'problem') naming the first node whose
    // coefficients are not finite (the problem's over h^2 overflow a double).
    SpatialOperator(const Grid& grid, const StencilFunction& stencil,
                    const BoundaryConditions& boundary);
    // The rows of the nodes of `box` (row box.index(i, j, k); every vector below is indexed
    // so, the diagonals' offsets the box's strides): a node's couplings to nodes outside `box`
    // are not held, so the rows on a face of `box` that is not the grid's are complete only in
    // the box made from its neighbouring nodes (complete_box()).
    SpatialOperator(const Grid& grid, const StencilFunction& stencil,
                    const BoundaryConditions& boundary, const Box& box);
    // The same for any callable stencil(i, j, k) -> StencilCoefficients (called inline at each
    // node, from several threads at once). With `system`, the rows are assembled as the system
    // matrix (see SystemForm): matrix() is then empty, release_system_matrix with the same
    // shift and scale hands it over (and throws its InputError, if any), and L's other terms
    // (Dirichlet couplings, ghost terms, row scale) are as for L.
    template <typename Stencil>
    requires std::is_invocable_r_v<StencilCoefficients, const Stencil&, std::int64_t, std::int64_t,
                                   std::int64_t>
    SpatialOperator(const Grid& grid, const Stencil& stencil, const BoundaryConditions& boundary,
                    const Box& box, std::optional<SystemForm> system = {})
        : SpatialOperator(grid, line_stencils(stencil), boundary, box, system) {}

    const Grid& grid() const { return grid_; }
    const Box& box() const { return box_; }
    // The nodes whose rows hold every coupling L has (all of them for the whole grid): the box
    // less one node on each face that is not the grid's.
    Box complete_box() const;

    // L; empty (n = 0) once released, or where assembled as the system matrix.
    const solvers::DiaData<double>& matrix() const { return l_; }
    // Gives L up (for an integrator that needs it no more: the matrix is the largest thing held).
    solvers::DiaData<double> release_matrix();
    // 1 where u = g is imposed.
    const std::vector<std::uint8_t>& dirichlet() const { return dirichlet_; }
    // The symmetrising scale of each row: 1 / 2^(number of folded directions).
    const std::vector<double>& row_scale() const { return row_scale_; }
    // Adds sum over folded directions of 2 h c g(x, t) at each node to `forcing`.
    void add_boundary_forcing(double t, std::span<double> forcing) const;
    bool boundary_forcing_depends_on_time() const;
    // lg = L G: each free row's coupling to the values g at the Dirichlet nodes (g is read there
    // only), zero in the other rows; as L g, bit for bit, from the couplings kept at assembly
    // (so it works after L is released).
    void dirichlet_coupling(std::span<const double> g, std::span<double> lg) const;

    // The largest explicit Euler step dt for which the step G = I + dt L on the free nodes is
    // proved power-bounded, for symmetric and nonsymmetric L alike: the numerical radius of G
    // (in the norm of the row scale, in which diffusion is symmetric) is at most 1, so
    // ||G^k|| <= 2 for every k (the power inequality). The numerical radius is bounded by
    // Gershgorin's theorem on the Hermitian part of e^{i phi} G for each angle phi (see the
    // source). Infinite when no free node is coupled. For symmetric L this is 2 / max_i sum_j
    // |l_ij|, the real-spectrum bound; for central convection it is the von Neumann limit (in 1D,
    // c^2 <= 2 r), which a bound on the row sums alone overestimates once the eigenvalues are
    // complex. The bound is a minimum over rows, taken here over the complete rows: the minimum of
    // the values of a grid's blocks of planes is the whole grid's, bit for bit.
    double largest_stable_explicit_step() const;

    // The terms add_boundary_forcing and dirichlet_coupling sum (rows and columns indexed as
    // the vectors above), for a back-end that forms them itself.
    struct GhostTerm {  // forcing[node] += weight g_side(x_node, t)
        std::int64_t node;
        int side;
        double weight;  // 2 h c
    };
    struct Coupling {  // l_ij, i free and j a Dirichlet node
        std::int64_t row;
        std::int64_t column;
        double value;
    };
    const std::vector<GhostTerm>& ghost_terms() const { return ghost_terms_; }
    const std::vector<Coupling>& couplings() const { return couplings_; }  // by row

private:
    SpatialOperator(const Grid& grid, LineStencils stencils, const BoundaryConditions& boundary,
                    const Box& box, std::optional<SystemForm> system);
    friend solvers::DiaData<double> release_system_matrix(SpatialOperator& op, double shift,
                                                          double scale);

    const Grid& grid_;
    const BoundaryConditions& boundary_;
    Box box_;
    solvers::DiaData<double> l_;
    std::optional<SystemForm> system_;      // where assembled as the system matrix:
    solvers::DiaData<double> system_rows_;  // it (L not held)
    std::int64_t system_not_finite_ = -1;   // its first row not finite, or -1
    std::vector<std::uint8_t> dirichlet_;
    std::vector<double> row_scale_;
    std::vector<GhostTerm> ghost_terms_;
    std::vector<Coupling> couplings_;  // by row, each row's in diagonal order
};

// The matrix of a linear system shift I - scale L on the free rows, scaled by row_scale, with
// couplings to Dirichlet nodes dropped (the caller moves them to the right-hand side) and
// identity rows at Dirichlet nodes. Symmetric when L is on the free nodes. Throws InputError
// (key 'time.dt') naming the first node where an entry overflows (scale L does, for a huge dt).
// Throws std::logic_error where `op` holds no L.
solvers::DiaData<double> system_matrix(const SpatialOperator& op, double shift, double scale);
// The same, made in the storage of L, which `op` releases (op.matrix() is empty afterwards); or
// the one `op` was assembled as (SystemForm), handed over where shift and scale are its own.
// Throws std::logic_error where `op` holds neither, or was assembled as another system matrix.
solvers::DiaData<double> release_system_matrix(SpatialOperator& op, double shift, double scale);

}  // namespace simrun::framework
