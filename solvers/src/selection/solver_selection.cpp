#include "simrun/solvers/selection/solver_selection.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/methods/gmres.hpp"

namespace simrun::solvers {

std::string to_string(Method method) { return std::string(name_of(method)); }

std::string to_string(PreconditionerKind kind) { return std::string(name_of(kind)); }

Method parse_method(const std::string& text) {
    return parse_enum<Method>(text, "solver method", "auto");
}

PreconditionerKind parse_preconditioner(const std::string& text) {
    return parse_enum<PreconditionerKind>(text, "preconditioner", "auto");
}

std::vector<std::string> method_words() {
    std::vector<std::string> words = enum_name_strings<Method>("auto");
    words.insert(std::find(words.begin(), words.end(), "cg") + 1, "pcg");
    return words;
}

SolverRequest SolverRequest::parse(std::string_view method, std::string_view preconditioner,
                                   std::string_view format) {
    const bool pcg = method == "pcg";
    if (pcg && preconditioner == "none") {
        throw std::invalid_argument("solver method pcg needs a preconditioner; cg is CG with none");
    }
    SolverRequest request;
    if (pcg) {
        request.method = Method::cg;
    } else if (method != "auto") {
        const auto known = method_words();
        if (std::find(known.begin(), known.end(), method) == known.end()) {
            throw std::invalid_argument("unknown solver method '" + std::string(method) +
                                        "' (expected " + word_list(known) + ")");
        }
        request.method = parse_method(std::string(method));
    }
    if (preconditioner != "auto") {
        request.preconditioner = parse_preconditioner(std::string(preconditioner));
    } else if (request.method == Method::cg && !pcg) {
        request.preconditioner = PreconditionerKind::none;  // cg: none unless one is named
    }
    if (format != "auto") request.format = parse_enum<Format>(format, "format", "auto");
    return request;
}

std::string SolverStep::name() const {
    if (method == Method::jacobi || method == Method::sor) return to_string(method);
    return to_string(method) + " + " + to_string(preconditioner);
}

namespace {

bool stationary(Method m) { return m == Method::jacobi || m == Method::sor; }

// Whether the matrix fits the 32-bit indexed forms (CSR, ELL, COO, and the CSR copy that the
// SOR and SSOR sweeps use); DIA and stencil have 64-bit value indices.
bool fits_csr(const MatrixProperties& p) { return p.nnz <= max_csr_index; }

std::string csr_limit(const MatrixProperties& p) {
    return std::to_string(p.nnz) + " nonzeros exceed the 32-bit index limit of " +
           std::to_string(max_csr_index) + " of the CSR, ELL and COO forms";
}

// CG + Jacobi's predicted iterations to 1e-8: (1/2) sqrt(kappa) ln(2 / 1e-8), with kappa
// bounded by (q + 1) / (q - 1) for dominance ratio q > 1, and for q <= 1 taken as the
// Laplacian's on the box, (2 (N + 1) / pi)^2 for its longest edge N.
double predicted_jacobi_iterations(const MatrixProperties& p, const GridBox& box) {
    const double q = p.worst_dominance_ratio;
    double kappa;
    if (q > 1.0) {
        kappa = std::isinf(q) ? 1.0 : (q + 1.0) / (q - 1.0);
    } else {
        const double edge =
            static_cast<double>(std::max({box.points[0], box.points[1], box.points[2]}));
        kappa = std::pow(2.0 * (edge + 1.0) / 3.141592653589793, 2.0);
    }
    return 0.5 * std::sqrt(kappa) * std::log(2e8);
}

// What a multigrid-preconditioned iteration costs in Jacobi-preconditioned ones, measured: on
// the H100 at 1024^2, 0.48 ms against 0.035 ms for the fused CG + Jacobi iteration (14x); on
// 2 CPU cores about 9x. With about 10 multigrid iterations at any size, multigrid pays past
// about 120 predicted Jacobi iterations.
constexpr double multigrid_iterations = 10.0;
constexpr double multigrid_iteration_cost = 12.0;

// Whether multigrid pays for this matrix (see the rules in the header), and why.
std::optional<std::string> multigrid_pays(Method method, const MatrixProperties& p,
                                          const std::optional<GridBox>& grid) {
    if (!grid || p.zero_diagonal_rows > 0 || !p.positive_diagonal) return std::nullopt;
    if (method == Method::bicgstab && !p.weakly_dominant) return std::nullopt;
    if (method != Method::cg && method != Method::bicgstab) return std::nullopt;
    const double jacobi = predicted_jacobi_iterations(p, *grid);
    if (jacobi <= multigrid_iterations * multigrid_iteration_cost) return std::nullopt;
    char text[320];
    std::snprintf(text, sizeof text,
                  "multigrid: the rows are the %s box and %s + jacobi would need ~%.0f "
                  "iterations to 1e-8, multigrid about %.0f at any size (each costing ~%.0f "
                  "jacobi ones)",
                  grid->describe().c_str(), to_string(method).c_str(), jacobi, multigrid_iterations,
                  multigrid_iteration_cost);
    return std::string(text);
}

// The preconditioner for a Krylov method when the user left it to us.
SolverStep choose_preconditioner(Method method, const MatrixProperties& p,
                                 const std::optional<GridBox>& grid) {
    SolverStep step;
    step.method = method;
    const auto pays = multigrid_pays(method, p, grid);
    if (stationary(method)) {
        step.preconditioner = PreconditionerKind::none;
    } else if (const auto& reason = pays) {
        step.preconditioner = PreconditionerKind::multigrid;
        step.reason = *reason;
    } else if (p.zero_diagonal_rows > 0) {
        step.preconditioner = PreconditionerKind::none;
        step.reason = "no preconditioner: " + std::to_string(p.zero_diagonal_rows) +
                      " rows have a zero diagonal entry";
    } else if (method == Method::cg && !p.weakly_dominant && fits_csr(p)) {
        step.preconditioner = PreconditionerKind::ssor;
        step.reason = "ssor: far from diagonal dominance, Gauss-Seidel coupling helps most";
    } else if (p.constant_coefficients && p.positive_diagonal) {
        // With identity rows (diagonal 1 beside the constant c > 0) Jacobi is not quite a
        // scaling, but those rows are decoupled: they add at most the one eigenvalue 1.
        step.preconditioner = PreconditionerKind::none;
        step.reason =
            "no preconditioner: constant coefficients put one positive value on the diagonal "
            "(identity rows aside), so jacobi would only scale the residual";
    } else {
        step.preconditioner = PreconditionerKind::jacobi;
        step.reason = p.weakly_dominant ? "jacobi: diagonally dominant, diagonal scaling suffices"
                      : method == Method::cg
                          ? "jacobi: ssor would sweep a CSR copy beyond its 32-bit indices"
                          : "jacobi: nonzero diagonal";
    }
    return step;
}

void check_combination(const SolverStep& step, const MatrixProperties& p,
                       const std::optional<GridBox>& grid) {
    if (stationary(step.method) && step.preconditioner != PreconditionerKind::none) {
        throw std::invalid_argument(to_string(step.method) +
                                    " is a stationary method and takes no preconditioner");
    }
    if (step.preconditioner == PreconditionerKind::multigrid) {
        if (!grid) {
            throw std::invalid_argument(
                "multigrid needs the box the rows come from (a grid problem, or solve --grid "
                "NXxNY[xNZ])");
        }
        if (grid->size() != p.rows) {
            throw std::invalid_argument("the box " + grid->describe() + " has " +
                                        std::to_string(grid->size()) + " points but the matrix " +
                                        std::to_string(p.rows) + " rows");
        }
        if (step.method == Method::bicg) {
            throw std::invalid_argument(
                "bicg needs a preconditioner equal to its transpose: none or jacobi, not "
                "multigrid");
        }
    }
    if (step.method == Method::bicg && (step.preconditioner == PreconditionerKind::ssor ||
                                        step.preconditioner == PreconditionerKind::ilu0)) {
        throw std::invalid_argument(
            "bicg needs a preconditioner equal to its transpose: none or jacobi, not " +
            to_string(step.preconditioner));
    }
    if ((step.method == Method::sor || step.preconditioner == PreconditionerKind::ssor ||
         step.preconditioner == PreconditionerKind::ilu0) &&
        !fits_csr(p)) {
        throw std::invalid_argument(step.name() + " sweeps a CSR copy of the matrix, but " +
                                    csr_limit(p) + "; use jacobi");
    }
    // ILU(0) divides by its own pivots, which elimination may fill where A's diagonal is zero
    // (those it cannot are shifted: incomplete_lu.hpp).
    const bool needs_diagonal =
        stationary(step.method) || (step.preconditioner != PreconditionerKind::none &&
                                    step.preconditioner != PreconditionerKind::ilu0);
    if (needs_diagonal && p.zero_diagonal_rows > 0) {
        throw std::invalid_argument(step.name() + " divides by the diagonal, but " +
                                    std::to_string(p.zero_diagonal_rows) +
                                    " rows have a zero diagonal entry");
    }
}

Format choose_format(const MatrixProperties& p, std::string* reason) {
    char text[256];
    const double fill =
        p.num_diagonals > 0 && p.rows > 0
            ? static_cast<double>(p.nnz) / (static_cast<double>(p.num_diagonals) * p.rows)
            : 0.0;
    if (p.num_diagonals <= 32 && fill >= 0.6 && p.constant_coefficients) {
        std::snprintf(text, sizeof text,
                      "stencil: constant coefficients on %d diagonals, kept as one value per "
                      "diagonal and a byte per row (dia would read %d values per row)",
                      p.num_diagonals, p.num_diagonals);
        *reason = text;
        return Format::stencil;
    }
    if (p.num_diagonals <= 32 && fill >= 0.6) {
        std::snprintf(text, sizeof text, "dia: banded, %d diagonals hold %.0f%% of their slots",
                      p.num_diagonals, 100.0 * fill);
        *reason = text;
        return Format::dia;
    }
    if (p.max_row_length <= 1.5 * p.mean_row_length + 2.0) {
        std::snprintf(text, sizeof text,
                      "ell: rows of %d..%d entries (mean %.1f), little padding; %d diagonals "
                      "too many or too sparse for DIA",
                      p.min_row_length, p.max_row_length, p.mean_row_length, p.num_diagonals);
        *reason = text;
        return Format::ell;
    }
    std::snprintf(text, sizeof text,
                  "csr: rows of %d..%d entries (mean %.1f) too uneven for ELLPACK-R padding, "
                  "%d diagonals too many for DIA",
                  p.min_row_length, p.max_row_length, p.mean_row_length, p.num_diagonals);
    *reason = text;
    return Format::csr;
}

}  // namespace

int gmres_last_resort_restart(std::int64_t n) {
    const std::int64_t vectors =
        gmres_last_resort_bytes / (std::max<std::int64_t>(n, 1) * std::int64_t{sizeof(double)});
    return static_cast<int>(std::clamp<std::int64_t>(vectors - 1, 30, max_gmres_restart));
}

SolverPlan plan_solver(const MatrixProperties& p, const SolverRequest& request) {
    SolverPlan plan;
    const std::string described = p.describe();
    const bool spd_like = p.symmetric && p.positive_diagonal;
    const bool auto_method = !request.method;
    Method method;
    std::string method_reason;
    if (!auto_method) {
        method = *request.method;
        method_reason = "named by the user";
    } else if (spd_like) {
        method = Method::cg;
        method_reason = p.weakly_dominant
                            ? "symmetric, positive diagonal, diagonally dominant => SPD"
                            : "symmetric with positive diagonal => likely SPD (CG "
                              "checks p'Ap > 0)";
    } else {
        method = Method::bicgstab;
        method_reason = p.symmetric ? "symmetric but the diagonal is not positive => possibly "
                                      "indefinite"
                                    : "nonsymmetric";
    }
    SolverStep first = choose_preconditioner(method, p, request.grid);
    std::string preconditioner_reason = first.reason;
    if (request.preconditioner) {
        first.preconditioner = *request.preconditioner;
        preconditioner_reason = "named by the user";
    }
    check_combination(first, p, request.grid);
    first.reason = first.name() + ": " + method_reason +
                   (stationary(method) ? "" : "; " + preconditioner_reason);
    if (request.ranks > 1 && first.method == Method::sor) {
        first.reason += " (over " + std::to_string(request.ranks) +
                        " ranks hybrid: Gauss-Seidel within each rank's block, Jacobi between "
                        "the blocks)";
    }
    if (request.ranks > 1 && (first.preconditioner == PreconditionerKind::ssor ||
                              first.preconditioner == PreconditionerKind::ilu0)) {
        first.reason += " (over " + std::to_string(request.ranks) +
                        " ranks block Jacobi: each rank's " +
                        std::string(to_string(first.preconditioner)) + " of its own block)";
    }
    plan.first = first;
    plan.preconditioner_named = request.preconditioner.has_value();

    if (auto_method) {
        // Fallbacks keep a preconditioner every method of the chain accepts (BiCGStab takes
        // multigrid; BiCG takes neither multigrid nor SSOR).
        const PreconditionerKind safe = first.preconditioner == PreconditionerKind::ssor
                                            ? PreconditionerKind::jacobi
                                            : first.preconditioner;
        if (method == Method::cg) {
            plan.fallbacks.push_back({Method::bicgstab, safe,
                                      "CG failed (not SPD after all): BiCGStab needs no symmetry"});
        }
        plan.fallbacks.push_back(
            {Method::bicg,
             safe == PreconditionerKind::multigrid ? PreconditionerKind::jacobi : safe,
             "BiCGStab failed: BiCG breaks down differently"});
        // Then GMRES, with each preconditioner that may suit: multigrid where it was the first
        // choice; ILU(0), which captures more of A than a diagonal does and needs no nonzero
        // diagonal; the first choice's; and none at the end, since a preconditioner can hurt
        // (Jacobi where large off-diagonal entries dominate: dw2048 stalls at 0.2 with it, and
        // ILU(0) at 0.24, but reaches 1e-8 without either: in 3577 iterations with the last
        // step's basis of 128 vectors, 14338 with 30).
        const bool ilu_possible = fits_csr(p) && p.empty_rows == 0;
        std::vector<PreconditionerKind> gmres_with;
        const auto add = [&](PreconditionerKind kind) {
            if (std::find(gmres_with.begin(), gmres_with.end(), kind) == gmres_with.end()) {
                gmres_with.push_back(kind);
            }
        };
        if (first.preconditioner == PreconditionerKind::multigrid) add(first.preconditioner);
        if (ilu_possible) add(PreconditionerKind::ilu0);
        add(first.preconditioner);
        add(PreconditionerKind::none);
        for (std::size_t k = 0; k < gmres_with.size(); ++k) {
            const PreconditionerKind kind = gmres_with[k];
            std::string reason;
            if (k == 0) {
                reason =
                    "BiCG failed: GMRES minimises the residual over its Krylov space, so it "
                    "cannot diverge or break down before the solution";
                if (kind == PreconditionerKind::ilu0) {
                    reason += "; with ILU(0), which captures more of A than its diagonal";
                }
            } else {
                reason = "GMRES with " + to_string(gmres_with[k - 1]) + " failed: " +
                         (kind == PreconditionerKind::none ? "the preconditioner may be what hurts"
                          : kind == PreconditionerKind::ilu0
                              ? "ILU(0) makes no assumption about the grid"
                              : to_string(kind) + " may suit this matrix better");
            }
            SolverStep step{Method::gmres, kind, reason};
            if (k + 1 == gmres_with.size()) {
                step.restart = gmres_last_resort_restart(p.rows);
                step.reason += "; GMRES(" + std::to_string(step.restart) +
                               "): the last GMRES step keeps the longest basis that fits " +
                               std::to_string(gmres_last_resort_bytes >> 20) +
                               " MiB, since a short one can stall where a long one converges";
            }
            plan.fallbacks.push_back(step);
        }
        if (p.chained_dominant) {
            const char* dominance = p.strictly_dominant
                                        ? "a strictly diagonally dominant matrix"
                                        : "a weakly chained diagonally dominant matrix (every "
                                          "row reaches a strictly dominant one)";
            plan.fallbacks.push_back(
                fits_csr(p) ? SolverStep{Method::sor, PreconditionerKind::none,
                                         std::string("Krylov methods failed: Gauss-Seidel "
                                                     "converges on ") +
                                             dominance}
                            : SolverStep{Method::jacobi, PreconditionerKind::none,
                                         std::string("Krylov methods failed: Jacobi converges "
                                                     "on ") +
                                             dominance});
        }
    }

    if (!request.format) {
        plan.format = choose_format(p, &plan.format_reason);
    } else {
        plan.format = *request.format;
        plan.format_reason = std::string(to_string(plan.format)) + ": named by the user";
        if (plan.format == Format::stencil && !p.constant_coefficients) {
            throw std::invalid_argument(
                "format stencil needs constant coefficients (at most 8 diagonals, each with one "
                "value wherever it is nonzero, the main diagonal nonzero in every row); use dia");
        }
    }
    if (plan.format == Format::dense && std::int64_t{p.rows} * p.rows > dense_max_entries) {
        throw std::invalid_argument("format dense: " + std::to_string(p.rows) + " x " +
                                    std::to_string(p.rows) + " entries exceed the " +
                                    std::to_string(dense_max_entries) +
                                    " the dense format holds; use dia, ell or csr");
    }
    if (plan.format != Format::dia && plan.format != Format::stencil && !fits_csr(p)) {
        throw std::invalid_argument("format " + std::string(to_string(plan.format)) + ": " +
                                    csr_limit(p) + "; the matrix needs dia or stencil");
    }
    first.reason += " (" + described + ")";
    plan.first.reason = first.reason;
    plan.grid = request.grid;
    plan.multigrid = request.multigrid;
    plan.remove_constant = request.remove_constant_null_space && p.zero_row_sums && p.symmetric;
    plan.singular = p.singularity();
    if (plan.remove_constant) {
        plan.first.reason +=
            "; singular with the constants as null space (A 1 = 0): solved for b without its "
            "mean, the solution of zero mean returned";
    }
    return plan;
}

}  // namespace simrun::solvers
