#pragma once
// The cases of `simrun bench` (bench_command.hpp): the matrices, what is run on each, and the
// memory-traffic floor of each run. The harness that times them is bench_command.cpp.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench_command.hpp"
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/base/precision.hpp"
#include "simrun/solvers/matrices/csr_data.hpp"
#include "simrun/solvers/matrices/format.hpp"
#include "simrun/solvers/multigrid/multigrid_hierarchy.hpp"
#include "simrun/solvers/selection/solver_selection.hpp"

namespace simrun::app::bench {

// ---- generated matrices (host CSR, columns sorted; written here because tests/support is
// not part of the library) ----

// The 5-point (dimensions = 2) or 7-point (3) Laplacian on m^d interior nodes with Dirichlet
// boundaries, scaled by h^2: 2d on the diagonal, -1 for each neighbour inside the grid.
solvers::CsrData<double> poisson_matrix(std::int32_t m, int dimensions);
// -lap(u) + v . grad(u) on m x m interior nodes, central differences scaled by h^2, cell
// Peclet number |v| h / 2 = 0.5 along x and y: nonsymmetric, weakly diagonally dominant.
solvers::CsrData<double> convection_diffusion_matrix(std::int32_t m);
// The right-hand side of every case: n values drawn uniformly from [0.5, 1.5) with a fixed
// seed (never zeros, which would time unlike real data).
std::vector<double> right_hand_side(std::int32_t n);

// ---- the memory-traffic floor ----

// Bytes one iteration must move at least: the matrix read once per SpMV plus the vector
// passes of a fully fused implementation, each value read or written once.
struct TrafficFloor {
    double bytes_per_iteration = 0.0;
    std::string formula;  // e.g. "D n s + 10 n s (D = 5, s = 8)"
};
// GMRES's restart length in the benchmark (MethodParameters' default).
inline constexpr int gmres_bench_restart = 30;

// rows, nnz and diagonals describe the matrix (diagonals: the distinct offsets DIA stores);
// value_size is sizeof(T). Throws std::invalid_argument for a method or format without one.
TrafficFloor traffic_floor(solvers::Method method, solvers::Format format, std::size_t value_size,
                           std::int64_t rows, std::int64_t nnz, int diagonals);
// The per-row formulas of every (method, format) pair, for the JSON and the report.
std::vector<std::pair<std::string, std::string>> floor_formulas();

// ---- the set-up's floors (a run's set-up phases, timed in bench_command.cpp) ----

// Bytes a phase must move at least, and how they were counted (with the numbers).
struct PhaseFloor {
    double bytes = 0.0;
    std::string formula;
};
// "dia" (general), "stencil" or "classes".
const char* storage_name(solvers::DiaStorage storage);
// The bytes a DIA matrix of n rows and D diagonals holds on the back-end in `storage`: D n s
// (general), n + D s (stencil: a mask byte per row, a value per diagonal), n (row classes: a
// class byte per row; the classes' table, a few rows, left out).
double stored_bytes(solvers::DiaStorage storage, std::int64_t rows, int diagonals,
                    std::size_t value_size);
// Assembly: the system matrix's DIA values written once, D n s.
PhaseFloor assembly_floor(std::int64_t rows, int diagonals, std::size_t value_size);
// Analysis: the DIA values read once, D n s.
PhaseFloor analysis_floor(std::int64_t rows, int diagonals, std::size_t value_size);
// Upload: the bytes the back-end's copy of the operator holds (stored_bytes).
PhaseFloor upload_floor(solvers::DiaStorage storage, std::int64_t rows, int diagonals,
                        std::size_t value_size);
// The multigrid hierarchy's set-up, from its levels (finest first, the coarsest last): each
// level's rows read once (the finest in the solver's operator, `finest_value_size`), each
// transfer's weights and the next level's rows written once, the coarsest level's dense
// inverse written once (n_c^2 values), and the finest level's own copy where the cycle
// computes in another precision (`cycle_value_size`) than the solve. Rows count as
// stored_bytes in their level's storage; a transfer's weights as one class byte per coarse
// point where the fine level's rows take few kinds (stencil or classes), else 3^a - 1 values
// per coarse point (a = the axes coarsened: the slots of the coarse point's neighbours).
PhaseFloor hierarchy_floor(const std::vector<solvers::MultigridLevelSummary>& levels,
                           std::size_t finest_value_size, std::size_t cycle_value_size);
// The preconditioned solve: per iteration CG's floor in the operator's format (`cg`) and one
// cycle's (MultigridHierarchy::bytes_per_cycle).
PhaseFloor solve_floor(std::int64_t iterations, const TrafficFloor& cg, double cycle_bytes);
// The formulas above, by phase, for the JSON and the report.
std::vector<std::pair<std::string, std::string>> setup_floor_formulas();
// The rows of a time step of size `dt` from a steady system's: dt A + I on the rows that couple
// (I - dt L, L = -A), the identity rows (Dirichlet nodes) as they are: what a run whose step
// changes size gives its solver (LinearSystemSolver::update_values).
solvers::DiaData<double> time_step_rows(solvers::DiaData<double> steady, double dt);
// The input of the run whose set-up is timed on a generated grid's box: Poisson with k = 1 and
// b = 1, u = 0 on every side (Dirichlet), one node per row of `grid`, CG with multigrid in the
// stencil format to rtol 1e-8 (the automatic choice from 128^2 on, named as the cases name
// theirs, so that small grids get it too).
std::string setup_input(const solvers::GridBox& grid);

// ---- the plan ----

using solvers::Precision;

struct CaseSpec {
    solvers::Method method = solvers::Method::cg;
    solvers::Format format = solvers::Format::csr;
    Precision precision = Precision::double_precision;
    // rtol = 0: exactly max_iterations iterations (simrun and the baseline do the same work).
    // rtol > 0: until ||r|| <= rtol ||b||, at most max_iterations ("time to tolerance").
    double rtol = 0.0;
    std::int64_t max_iterations = 100;
    // none, or multigrid on the group's grid (time to tolerance, set-up timed apart).
    solvers::PreconditionerKind preconditioner = solvers::PreconditionerKind::none;
};

// One matrix, built once, and the cases run on it.
struct MatrixGroup {
    std::string name;                                 // "poisson2d-1024", "nos3"
    std::function<solvers::CsrData<double>()> build;  // may throw (e.g. a bad .mtx file)
    // Real matrices: the method is chosen from the analysis (CG when symmetric with a positive
    // diagonal, BiCGStab otherwise) and overrides the cases' method.
    bool choose_method = false;
    std::vector<CaseSpec> cases;
    // The box the rows come from (the generated grids), which multigrid cases need.
    std::optional<solvers::GridBox> grid = std::nullopt;
    // Time a run's set-up on `grid` phase by phase against its floors (setup_input's run).
    bool time_setup = false;
};

struct BenchPlan {
    std::vector<MatrixGroup> groups;
    int repeats = 5;                  // timed runs per case, after one warm-up
    std::size_t bandwidth_bytes = 0;  // size of the copied buffer
    std::vector<std::string> notes;   // e.g. "no matrices directory: ..."
};

// The cases for these options on this kind of back-end. Throws InputError for sizes that are
// too small or too large for 32-bit CSR indices.
BenchPlan make_plan(const BenchOptions& options, solvers::BackendKind kind);

// "cg/poisson2d-1024/dia/double", with "/to-1e-08" for a time-to-tolerance case and
// "cg+multigrid/..." for a preconditioned one.
std::string case_name(const std::string& matrix, solvers::Method method, const CaseSpec& spec);

}  // namespace simrun::app::bench
