#pragma once
// Chooses method, preconditioner and format from measured matrix properties, each with its
// reason, and a fallback chain for when the chosen method breaks down. The user may name any
// part instead ("auto" lets the selector decide).
//
// Rules (auto):
// - symmetric with positive diagonal => CG. Preconditioner: multigrid where the rows come from
//   a box and CG + Jacobi is predicted to need more than 120 iterations to 1e-8 (about
//   (1/2) sqrt(kappa) ln(2e8), kappa estimated from the diagonal dominance, or for merely
//   weak dominance from the box's longest edge as for the Laplacian): a multigrid iteration
//   costs about 12 fused Jacobi ones (measured) and about 10 of them suffice at any size, so a
//   heat step of dt = 10 h^2 / alpha (~86 predicted, fewer warm-started) stays with Jacobi and
//   steady problems get multigrid. Otherwise Jacobi
//   when the matrix is diagonally dominant (it scales well and costs one pass), multicolour
//   SSOR otherwise (rows far from dominance gain most from Gauss-Seidel coupling).
// - otherwise => BiCGStab with multigrid on the same terms when the matrix is diagonally
//   dominant (diffusion dominates), else Jacobi (none when a diagonal entry is zero).
// - none in place of Jacobi where the coefficients are constant (a grid stencil, identity rows
//   aside): one value on the diagonal makes Jacobi a scaling that changes no iterate.
// - fallbacks: CG => BiCGStab (CG met p'Ap <= 0: not SPD after all); BiCGStab => BiCG (with
//   Jacobi in place of multigrid, which has no transpose here); BiCG => GMRES(m) with the first
//   step's preconditioner (GMRES's residual cannot grow: it converges where any Krylov method
//   of its restart length does), and without one where the first step had one (a preconditioner
//   can hurt), that last GMRES step with the longest basis gmres_last_resort_restart allows;
//   then, on a weakly chained diagonally dominant matrix
//   (MatrixProperties::chained_dominant: strictly dominant, irreducibly dominant and more),
//   Gauss-Seidel (multicolour SOR with omega 1; Jacobi where the matrix exceeds the CSR
//   copy's indices), which converges there. Every step but the last is stopped early when it
//   stalls: no_progress once its smallest residual has not fallen by 1% over a window of
//   max(200, max_iterations / 10) iterations (StoppingCriteria::progress_window). A method
//   named by the user gets no fallbacks.
// - format: stencil when the matrix is banded with constant coefficients (a grid stencil);
//   DIA when it is banded (at most 32 diagonals, holding at least 60% of their slots);
//   ELLPACK-R when rows are of similar length (longest <= 1.5 mean + 2);
//   CSR otherwise.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "simrun/solvers/base/enum_names.hpp"
#include "simrun/solvers/matrices/format.hpp"
#include "simrun/solvers/boxes/box.hpp"
#include "simrun/solvers/multigrid/multigrid_parameters.hpp"
#include "simrun/solvers/selection/matrix_properties.hpp"

namespace simrun::solvers {

enum class Method { jacobi, sor, cg, bicg, bicgstab, gmres };
template <>
inline constexpr std::array enum_names<Method> = {EnumName<Method>{Method::jacobi, "jacobi"},
                                                  EnumName<Method>{Method::sor, "sor"},
                                                  EnumName<Method>{Method::cg, "cg"},
                                                  EnumName<Method>{Method::bicg, "bicg"},
                                                  EnumName<Method>{Method::bicgstab, "bicgstab"},
                                                  EnumName<Method>{Method::gmres, "gmres"}};

enum class PreconditionerKind { none, jacobi, ssor, multigrid, ilu0 };
template <>
inline constexpr std::array enum_names<PreconditionerKind> = {
    EnumName<PreconditionerKind>{PreconditionerKind::none, "none"},
    EnumName<PreconditionerKind>{PreconditionerKind::jacobi, "jacobi"},
    EnumName<PreconditionerKind>{PreconditionerKind::ssor, "ssor"},
    EnumName<PreconditionerKind>{PreconditionerKind::multigrid, "multigrid"},
    EnumName<PreconditionerKind>{PreconditionerKind::ilu0, "ilu0"}};

std::string to_string(Method method);
std::string to_string(PreconditionerKind kind);
// Throw std::invalid_argument listing the accepted names.
Method parse_method(const std::string& text);
PreconditionerKind parse_preconditioner(const std::string& text);

// What the user named; an empty part lets the selector decide ("auto").
struct SolverRequest {
    std::optional<Method> method;
    std::optional<PreconditionerKind> preconditioner;
    std::optional<Format> format;
    // The box the rows come from, where they do (a grid problem, or solve --grid): what
    // multigrid needs.
    std::optional<GridBox> grid;
    MultigridParameters multigrid;
    // The caller means b only up to the range of A when A is symmetric with the constants as
    // null space (a pure Neumann problem, whose data may not balance): the solve then removes
    // b's constant part (SolverPlan::remove_constant). Off, such a system with a b outside the
    // range is reported as not converging, as any system without a solution.
    bool remove_constant_null_space = false;
    // The ranks the rows are split over (a distributed solve: DistributedMatrix). Every method
    // and preconditioner runs so (multigrid split over the ranks; SSOR and ILU(0) as block
    // Jacobi, each rank's of its own block; Gauss-Seidel hybrid, Jacobi between the blocks; the
    // others as one process), and the plan's reasons say where the ranks change a method.
    int ranks = 1;

    // From the words of every entry point (the input file, the command line, Python): "auto"
    // or a name of the enum's list (enum_names), and for the method "pcg". "cg" is conjugate
    // gradients with no preconditioner unless `preconditioner` names one (as SciPy's cg);
    // "pcg" is CG with the preconditioner named or, for "auto", chosen. Throws
    // std::invalid_argument naming the accepted words, and for pcg with the preconditioner none.
    static SolverRequest parse(std::string_view method, std::string_view preconditioner,
                               std::string_view format);
};

// The method's words parse() accepts: auto, the enum's words, and pcg after cg.
std::vector<std::string> method_words();

struct SolverStep {
    Method method = Method::cg;
    PreconditionerKind preconditioner = PreconditionerKind::none;
    std::string reason;  // e.g. "cg + jacobi: symmetric, positive diagonal ... => SPD"
    int restart = 0;     // GMRES's restart length where the step sets one (else the parameters')
    // "cg + jacobi"
    std::string name() const;
};

// The restart length of the chain's last GMRES step (no preconditioner) on n rows: the longest
// GMRES takes (max_gmres_restart) whose basis of restart + 1 vectors of doubles fits in
// gmres_last_resort_bytes, at least the usual 30. A short basis can stall where a long one
// converges: dw2048 to 1e-8 takes GMRES(30) 14338 iterations, GMRES(80) 5328, GMRES(128) 3577.
inline constexpr std::int64_t gmres_last_resort_bytes = std::int64_t{512} << 20;
int gmres_last_resort_restart(std::int64_t n);

struct SolverPlan {
    SolverStep first;
    std::vector<SolverStep> fallbacks;  // tried in order when the previous step fails
    Format format = Format::csr;
    std::string format_reason;  // e.g. "dia: 5 diagonals hold 99% of their slots"
    // For the steps with multigrid: the box and the cycle (symmetric for CG).
    std::optional<GridBox> grid;
    MultigridParameters multigrid;
    // The user named the preconditioner. Where the selector chose multigrid itself and its
    // hierarchy cannot be built for this operator (MultigridSetupError), the solver takes
    // Jacobi in its place and says why; a multigrid the user named fails instead.
    bool preconditioner_named = false;
    // A symmetric matrix whose rows sum to zero (a pure Neumann operator): singular, the
    // constants its null space. The solve removes b's constant part (the data's incompatible
    // share), solves on the rest, and returns the solution of zero mean.
    bool remove_constant = false;
    // Where the matrix is structurally singular, what makes it so
    // (MatrixProperties::singularity()): a solve that meets the tolerance then ends as
    // SolveStatus::singular, never converged in silence.
    std::string singular;
};

// Throws std::invalid_argument for an unknown name or a combination that cannot work (a
// preconditioner with a stationary method, SSOR with BiCG, Jacobi with a zero diagonal, a
// format the matrix does not fit), saying why.
SolverPlan plan_solver(const MatrixProperties& properties, const SolverRequest& request);

}  // namespace simrun::solvers
