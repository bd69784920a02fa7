#include "bench_command.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "baseline_cg.hpp"
#include "baseline_module.hpp"
#include "benchmark_cases.hpp"
#include "device_timer.hpp"
#include "simrun/framework/config/config.hpp"
#include "simrun/framework/config/input_error.hpp"
#include "simrun/framework/discretisation/spatial_operator.hpp"
#include "simrun/framework/problem/run_spec.hpp"
#include "simrun/framework/run/simulation.hpp"
#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/base/vector_ops.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/matrices/dia_matrix.hpp"
#include "simrun/solvers/multigrid/multigrid_hierarchy.hpp"
#include "simrun/solvers/multigrid/multigrid_preconditioner.hpp"
#include "simrun/solvers/selection/linear_system_solver.hpp"
#include "simrun/solvers/selection/matrix_properties.hpp"

namespace simrun::app {
namespace {

using nlohmann::json;
using namespace simrun::framework;

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t half = values.size() / 2;
    return values.size() % 2 == 1 ? values[half] : 0.5 * (values[half - 1] + values[half]);
}

std::string utc_now() {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &utc);
    return text;
}

// The CPU back-end's copy is one memcpy on one thread, while its kernels run on every OpenMP
// thread: the ceiling those kernels are held to is a copy split over the threads in the same
// static order (so each thread copies the pages it first touched when the arrays were filled).
// Traffic: bytes read + bytes written.
void parallel_host_copy(void* destination, const void* source, std::size_t bytes) {
    constexpr std::size_t chunk = std::size_t{1} << 20;
    const auto chunks = static_cast<std::int64_t>((bytes + chunk - 1) / chunk);
    auto* to = static_cast<unsigned char*>(destination);
    const auto* from = static_cast<const unsigned char*>(source);
#pragma omp parallel for schedule(static)
    for (std::int64_t c = 0; c < chunks; ++c) {
        const std::size_t begin = static_cast<std::size_t>(c) * chunk;
        std::memcpy(to + begin, from + begin, std::min(chunk, bytes - begin));
    }
}

// Copy bandwidth of the back-end in GB/s, counting bytes read plus bytes written: the median
// of `repeats` copies of a `bytes` buffer after one warm-up copy that also touches every page.
// CUDA: Backend::copy (cudaMemcpyAsync device to device on the back-end's stream). CPU: the
// copy above, every OpenMP thread taking its share.
double copy_bandwidth_gbps(const std::shared_ptr<const solvers::Backend>& backend,
                           std::size_t bytes, int repeats) {
    const std::size_t n = bytes / sizeof(double);
    solvers::Array<double> source(backend, n), destination(backend, n);
    solvers::fill(source, 1.25);  // not zeros: time the copy of real data
    solvers::fill(destination, 0.5);
    solvers::DeviceTimer timer(*backend);
    std::vector<double> seconds;
    for (int run = 0; run <= repeats; ++run) {
        timer.start();
        if (backend->kind() == solvers::BackendKind::cpu) {
            parallel_host_copy(destination.data(), source.data(), n * sizeof(double));
        } else {
            backend->copy(destination.data(), source.data(), n * sizeof(double));
        }
        const double t = timer.stop_seconds();
        if (run > 0) seconds.push_back(t);
    }
    return 2.0 * static_cast<double>(n * sizeof(double)) / median(seconds) / 1e9;
}

// Bytes per second, in GB/s, that Backend::copy_from_host delivers (each byte counted once)
// from host memory to the back-end's: pageable (a std::vector, as a DiaMatrix's construction
// copies from) or pinned (Backend::allocate_host). The median of `repeats` copies of `bytes`
// after one warm-up, on the host clock after synchronising. CUDA: host to device over the bus;
// CPU: one memcpy.
double upload_bandwidth_gbps(const std::shared_ptr<const solvers::Backend>& backend,
                             std::size_t bytes, int repeats, bool pinned) {
    const std::size_t n = bytes / sizeof(double);
    std::vector<double> pageable;
    double* host = nullptr;
    if (pinned) {
        host = static_cast<double*>(backend->allocate_host(n * sizeof(double)));
    } else {
        pageable.resize(n);
        host = pageable.data();
    }
    std::fill(host, host + n, 1.25);  // not zeros, every page touched
    std::vector<double> seconds;
    {
        solvers::Array<double> destination(backend, n);
        for (int run = 0; run <= repeats; ++run) {
            const auto start = std::chrono::steady_clock::now();
            backend->copy_from_host(destination.data(), host, n * sizeof(double));
            backend->synchronize();
            const double t =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            if (run > 0) seconds.push_back(t);
        }
    }
    if (pinned) backend->release_host(host);
    return static_cast<double>(n * sizeof(double)) / median(seconds) / 1e9;
}

constexpr int bandwidth_repeats = 5;

struct Context {
    std::shared_ptr<const solvers::Backend> backend;
    int repeats = 5;
    double bandwidth_gbps = 0.0;
    double upload_gbps = 0.0;  // pageable host memory to the back-end (the upload's floor)
    bool baseline = false;     // time the cuSPARSE/cuBLAS baseline beside CG (on CUDA)
};

// Whether this run times the baseline (BenchOptions::baseline), loading its module where it
// may; `notes` gains where it came from, or why a wanted baseline is left out. Throws
// BaselineUnavailable or InputError where "on" cannot be honoured.
bool use_baseline(const std::string& choice, solvers::BackendKind kind,
                  std::vector<std::string>& notes) {
    const bool cuda = kind == solvers::BackendKind::cuda;
    if (choice == "off" || (choice == "auto" && !cuda)) return false;
    try {
        const BaselineModule& module = baseline_module();
        if (!cuda) {
            throw InputError("--baseline on: the cuSPARSE/cuBLAS baseline (" + module.path +
                             ") runs on the CUDA back-end only, and this run's back-end is " +
                             std::string(solvers::to_string(kind)));
        }
        notes.push_back("baseline: " + std::string(module.table->description) + ", from " +
                        module.path);
        return true;
    } catch (const BaselineUnavailable& e) {
        if (choice == "on") throw;
        notes.push_back(std::string("no baseline columns: ") + e.what());
        return false;
    }
}

// One matrix of the plan, built and analysed once for all its cases.
struct MatrixUnderTest {
    std::string name;
    solvers::CsrData<double> a;
    solvers::MatrixProperties properties;
    std::vector<double> b;
    std::optional<solvers::GridBox> grid;
};

// The cycle of the multigrid hierarchy of `a` on `grid`, in C (the precision the solve's
// cycle computes in): its minimum traffic (MultigridHierarchy::bytes_per_cycle) per fine-grid
// unknown, its time per cycle as the solve runs it (the recorded cycle, `cycles` of them after
// one untimed, by DeviceTimer), that time against the traffic's floor at the run's bandwidth,
// and the seconds per cycle of each level's own work timed between synchronisations
// (MultigridHierarchy::time_levels), finest first.
template <typename C, typename T>
json multigrid_cycle(const std::shared_ptr<const solvers::Backend>& backend,
                     const solvers::CsrData<T>& a, const solvers::GridBox& grid,
                     const std::vector<T>& b, int cycles, double bandwidth_gbps) {
    const solvers::MultigridHierarchy<C> hierarchy(backend, solvers::to_dia(a), grid, {});
    const auto b_device = solvers::Array<C>::from_host(backend, std::vector<C>(b.begin(), b.end()));
    solvers::Array<C> x(backend, b.size());
    solvers::fill(x, C(0));
    hierarchy.cycle(b_device, x);
    solvers::DeviceTimer timer(*backend);
    timer.start();
    for (int c = 0; c < std::max(cycles, 1); ++c) hierarchy.cycle(b_device, x);
    const double seconds = timer.stop_seconds() / std::max(cycles, 1);
    const double bytes = hierarchy.bytes_per_cycle();
    const double floor_seconds = bytes / (bandwidth_gbps * 1e9);
    const std::vector<double> level_seconds = hierarchy.time_levels(b_device, x, cycles);
    json levels = json::array();
    for (std::size_t l = 0; l < level_seconds.size(); ++l) {
        levels.push_back({{"box", hierarchy.levels()[l].box.describe()},
                          {"diagonals", hierarchy.levels()[l].num_diagonals},
                          {"storage", bench::storage_name(hierarchy.levels()[l].storage)},
                          {"seconds_per_cycle", level_seconds[l]}});
    }
    return {{"precision", std::is_same_v<C, double> ? "double" : "float"},
            {"bytes_per_cycle", bytes},
            {"bytes_per_unknown", bytes / static_cast<double>(a.rows)},
            {"seconds", seconds},
            {"floor_seconds", floor_seconds},
            {"floor_ratio", seconds / floor_seconds},
            {"levels", levels}};
}

// Times one case: simrun's solver (LinearSystemSolver with the method, preconditioner and
// format named explicitly; its set-up timed apart), then on CUDA for CG the cuSPARSE baseline
// with the same matrix, right-hand side, tolerance and iteration count (for a preconditioned
// case: plain CG to the same tolerance, once). Each is run once to warm up, then
// `repeats` times from x = 0, timed by DeviceTimer; the median is reported.
template <typename T>
json run_case(const Context& context, const MatrixUnderTest& matrix, solvers::Method method,
              const bench::CaseSpec& spec) {
    const auto& backend = context.backend;
    const solvers::CsrData<T> a = solvers::convert_values<T>(matrix.a);
    const std::vector<T> b(matrix.b.begin(), matrix.b.end());

    solvers::SolverRequest request;
    request.method = method;
    request.preconditioner = spec.preconditioner;
    request.format = spec.format;
    request.grid = matrix.grid;
    const solvers::SolverPlan plan = solvers::plan_solver(matrix.properties, request);
    const bool preconditioned = spec.preconditioner != solvers::PreconditionerKind::none;
    solvers::MethodParameters parameters;
    parameters.criteria.relative_tolerance = spec.rtol;  // 0: never met, exactly max_iterations
    parameters.criteria.absolute_tolerance = 0.0;
    parameters.criteria.max_iterations = spec.max_iterations;
    parameters.restart = bench::gmres_bench_restart;

    std::vector<double> seconds;
    solvers::SolveReport report;
    // Device memory of the solve: the matrix in its format, b, x and the method's workspace,
    // measured (where the back-end has memory of its own) after the warm-up solve; from 4M rows
    // on, where the rounding of each array (the pool's, the driver's pages) is under 0.5 bytes
    // per row.
    const std::optional<std::size_t> memory_before =
        a.rows >= (std::int32_t{1} << 22) ? backend->device_bytes_in_use() : std::nullopt;
    std::optional<double> device_bytes_per_unknown;
    double setup_seconds = 0;
    {
        // A grid's matrix reaches the solver in DIA, as a run's does (converted untimed).
        std::optional<solvers::DiaData<T>> dia;
        if (matrix.grid) dia = solvers::to_dia(a);
        const auto setup_start = std::chrono::steady_clock::now();
        const auto made = [&] {
            if (dia) {
                return std::make_unique<solvers::LinearSystemSolver<T>>(backend, std::move(*dia),
                                                                        plan, parameters);
            }
            return std::make_unique<solvers::LinearSystemSolver<T>>(backend, a, plan, parameters);
        }();
        const solvers::LinearSystemSolver<T>& solver = *made;
        backend->synchronize();
        setup_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - setup_start).count();
        const auto b_device = solvers::Array<T>::from_host(backend, b);
        solvers::Array<T> x(backend, b.size());
        solvers::DeviceTimer timer(*backend);
        for (int run = 0; run <= context.repeats; ++run) {
            solvers::fill(x, T(0));
            timer.start();
            report = solver.solve(b_device, x);
            const double t = timer.stop_seconds();
            if (run > 0) seconds.push_back(t);
            if (run == 0 && memory_before) {
                device_bytes_per_unknown =
                    static_cast<double>(*backend->device_bytes_in_use() - *memory_before) /
                    static_cast<double>(a.rows);
            }
        }
    }
    const std::int64_t iterations = report.total_iterations();
    const double solve_seconds = median(seconds);
    const double per_iteration =
        iterations > 0 ? solve_seconds / static_cast<double>(iterations) : 0.0;
    const bench::TrafficFloor floor = bench::traffic_floor(
        method, spec.format, sizeof(T), a.rows, a.nnz(), matrix.properties.num_diagonals);
    const double floor_seconds = floor.bytes_per_iteration / (context.bandwidth_gbps * 1e9);

    json j;
    j["case"] = bench::case_name(matrix.name, method, spec);
    j["matrix"] = matrix.name;
    j["method"] = solvers::to_string(method);
    j["preconditioner"] = solvers::to_string(spec.preconditioner);
    j["setup_seconds"] = setup_seconds;
    j["backend"] = std::string(solvers::to_string(backend->kind()));
    j["format"] = std::string(solvers::to_string(spec.format));
    j["precision"] = solvers::name_of(spec.precision);
    j["n"] = a.rows;
    j["nnz"] = a.nnz();
    j["mode"] = spec.rtol > 0 ? "to_tolerance" : "fixed_iterations";
    j["rtol"] = spec.rtol;
    j["max_iterations"] = spec.max_iterations;
    j["iterations"] = iterations;
    j["status"] = std::string(solvers::to_string(report.result().status));
    j["relative_residual"] = report.result().relative_residual();
    j["repeats"] = context.repeats;
    j["seconds"] = solve_seconds;
    j["seconds_min"] = *std::min_element(seconds.begin(), seconds.end());
    j["seconds_max"] = *std::max_element(seconds.begin(), seconds.end());
    j["seconds_per_iteration"] = per_iteration;
    j["bytes_per_iteration"] = floor.bytes_per_iteration;
    j["floor_formula"] = floor.formula;
    j["achieved_gbps"] = per_iteration > 0 ? floor.bytes_per_iteration / per_iteration / 1e9 : 0.0;
    j["bandwidth_gbps"] = context.bandwidth_gbps;
    j["floor_ratio"] = per_iteration / floor_seconds;
    if (device_bytes_per_unknown) j["device_bytes_per_unknown"] = *device_bytes_per_unknown;

    if (preconditioned) {
        // A preconditioned iteration has no plain-CG floor: its time is the figure, and the
        // cycle's own floor is reported with the cycle.
        j["bytes_per_iteration"] = 0.0;
        j["achieved_gbps"] = 0.0;
        j["floor_ratio"] = 0.0;
        const solvers::Precision cycle = solvers::cycle_precision(
            plan.multigrid, backend->kind(),
            std::is_same_v<T, double> ? solvers::Precision::double_precision
                                      : solvers::Precision::single_precision);
        j["cycle"] = cycle == solvers::Precision::single_precision
                         ? multigrid_cycle<float>(backend, a, *matrix.grid, b, context.repeats,
                                                  context.bandwidth_gbps)
                         : multigrid_cycle<double>(backend, a, *matrix.grid, b, context.repeats,
                                                   context.bandwidth_gbps);
    }
    const bool cuda_cg = context.baseline && backend->kind() == solvers::BackendKind::cuda &&
                         method == solvers::Method::cg && iterations > 0;
    // Past 4M rows plain CG to 1e-8 takes too long for a benchmark run: no baseline there.
    if (cuda_cg && preconditioned && a.rows <= (std::int32_t{1} << 22)) {
        // The baseline's plain CG to the same tolerance, once (thousands of iterations).
        const solvers::CusparseCg<T> baseline(backend, a, b);
        const solvers::BaselineResult outcome = baseline.solve(std::int64_t{1} << 20, spec.rtol);
        j["baseline_iterations"] = outcome.iterations;
        j["baseline_relative_residual"] = outcome.relative_residual;
        j["baseline_seconds"] = outcome.seconds;
        j["baseline_seconds_per_iteration"] =
            outcome.iterations > 0 ? outcome.seconds / static_cast<double>(outcome.iterations)
                                   : 0.0;
        j["speedup_vs_baseline"] = outcome.seconds / solve_seconds;  // time to solution
    } else if (cuda_cg && !preconditioned) {
        const solvers::CusparseCg<T> baseline(backend, a, b);
        std::vector<double> baseline_seconds;
        solvers::BaselineResult outcome = baseline.solve(iterations, spec.rtol);  // warm-up
        for (int run = 0; run < context.repeats; ++run) {
            outcome = baseline.solve(iterations, spec.rtol);
            baseline_seconds.push_back(outcome.seconds);
        }
        const double baseline_solve = median(baseline_seconds);
        const double baseline_per_iteration =
            outcome.iterations > 0 ? baseline_solve / static_cast<double>(outcome.iterations) : 0.0;
        j["baseline_iterations"] = outcome.iterations;
        j["baseline_relative_residual"] = outcome.relative_residual;
        j["baseline_seconds"] = baseline_solve;
        j["baseline_seconds_per_iteration"] = baseline_per_iteration;
        j["speedup_vs_baseline"] = baseline_per_iteration / per_iteration;
    }
    return j;
}

// ---- a run's set-up, phase by phase, against its floors ----

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Times `repeats` calls of `make` after one warm-up call, each on the host clock until the
// back-end has finished (a set-up phase mixes host and device work); the last call's result
// is kept in `kept` (the one before destroyed outside the timing).
template <typename R, typename Make>
std::vector<double> time_phase(const solvers::Backend& backend, int repeats, std::optional<R>& kept,
                               Make make) {
    std::vector<double> seconds;
    for (int run = 0; run <= repeats; ++run) {
        const auto start = std::chrono::steady_clock::now();
        R made = make();
        backend.synchronize();
        const double t = seconds_since(start);
        if (run > 0) seconds.push_back(t);
        kept.reset();
        kept.emplace(std::move(made));
    }
    return seconds;
}

// One phase's row: its median time against its floor's bytes at `gbps`.
json phase_row(const char* phase, const std::vector<double>& seconds,
               const bench::PhaseFloor& floor, double gbps, const char* bandwidth) {
    const double time = median(seconds);
    const double floor_seconds = floor.bytes / (gbps * 1e9);
    return {{"phase", phase},
            {"seconds", time},
            {"seconds_min", *std::min_element(seconds.begin(), seconds.end())},
            {"seconds_max", *std::max_element(seconds.begin(), seconds.end())},
            {"floor_bytes", floor.bytes},
            {"floor_formula", floor.formula},
            {"bandwidth", bandwidth},
            {"bandwidth_gbps", gbps},
            {"floor_seconds", floor_seconds},
            {"floor_ratio", time / floor_seconds}};
}

// The levels of the hierarchy that make_multigrid_preconditioner builds for `a` (in the
// cycle's precision C) and the bytes of its cycle: the hierarchy built once more, untimed.
struct HierarchyShape {
    std::vector<solvers::MultigridLevelSummary> levels;
    double bytes_per_cycle = 0.0;
    std::size_t value_size = 0;
};
template <typename C>
HierarchyShape hierarchy_shape(const std::shared_ptr<const solvers::Backend>& backend,
                               const solvers::DiaData<double>& a, const solvers::GridBox& grid,
                               const solvers::MultigridParameters& parameters,
                               const solvers::DiaMatrix<double>& fine) {
    const solvers::MultigridHierarchy<C> hierarchy(backend, a, grid, parameters, &fine);
    return {hierarchy.levels(), hierarchy.bytes_per_cycle(), sizeof(C)};
}

// What a run's set-up made and how long each phase took (time_setup).
struct MeasuredSetup {
    json phases = json::array();  // a phase_row each
    solvers::DiaData<double> matrix;
    solvers::MatrixProperties properties;
    solvers::SolverPlan plan;
    solvers::Precision cycle = solvers::Precision::double_precision;
    HierarchyShape shape;
};

// The back-end's phases of `setup.matrix` under `setup.plan`: upload (the plan's DiaMatrix)
// and hierarchy (make_multigrid_preconditioner, the solver's own, on that operator).
void measure_backend_phases(const Context& context, const solvers::GridBox& box,
                            MeasuredSetup& setup) {
    const auto& backend = context.backend;
    const solvers::SolverPlan& plan = setup.plan;
    const bool dia = plan.format == solvers::Format::stencil || plan.format == solvers::Format::dia;
    if (plan.first.preconditioner != solvers::PreconditionerKind::multigrid || !dia) {
        throw std::runtime_error("the run's solver is " + solvers::to_string(plan.first.method) +
                                 "+" + solvers::to_string(plan.first.preconditioner) + " in " +
                                 std::string(solvers::to_string(plan.format)) +
                                 ", not multigrid on a DIA operator: no hierarchy to time");
    }
    const auto storage = plan.format == solvers::Format::stencil ? solvers::DiaStorage::stencil
                                                                 : solvers::DiaStorage::general;
    const solvers::DiaData<double>& a = setup.matrix;
    std::optional<std::unique_ptr<solvers::DiaMatrix<double>>> fine;
    const auto upload = time_phase(*backend, context.repeats, fine, [&] {
        return std::make_unique<solvers::DiaMatrix<double>>(backend, a, storage);
    });
    solvers::MultigridParameters multigrid = plan.multigrid;
    multigrid.symmetric = plan.first.method == solvers::Method::cg;
    std::optional<std::unique_ptr<solvers::MultigridPreconditioner<double>>> preconditioner;
    const auto hierarchy = time_phase(*backend, context.repeats, preconditioner, [&] {
        return solvers::make_multigrid_preconditioner<double>(backend, a, box, multigrid,
                                                              fine->get());
    });
    preconditioner.reset();
    setup.cycle =
        solvers::cycle_precision(multigrid, backend->kind(), solvers::Precision::double_precision);
    setup.shape = setup.cycle == solvers::Precision::single_precision
                      ? hierarchy_shape<float>(backend, a, box, multigrid, **fine)
                      : hierarchy_shape<double>(backend, a, box, multigrid, **fine);
    const int diagonals = a.num_diagonals();
    setup.phases.push_back(phase_row("upload", upload,
                                     bench::upload_floor(storage, a.n, diagonals, sizeof(double)),
                                     context.upload_gbps, "upload"));
    setup.phases.push_back(phase_row(
        "hierarchy", hierarchy,
        bench::hierarchy_floor(setup.shape.levels, sizeof(double), setup.shape.value_size),
        context.bandwidth_gbps, "copy"));
}

// A run's set-up for `spec` (a steady problem on `box`'s nodes), as `simrun` makes it on this
// back-end, phase by phase, each timed `repeats` times after a warm-up against its floor
// (benchmark_cases.hpp): assembly (the SpatialOperator and the system matrix), analysis
// (solvers::analyze and the plan, as plan_grid_solver asks for it), then the back-end's phases.
MeasuredSetup measure_setup(const Context& context, const RunSpec& spec,
                            const solvers::GridBox& box) {
    const auto& backend = *context.backend;
    const Grid& grid = *spec.grid;
    const Problem& problem = *spec.problem;
    std::optional<solvers::DiaData<double>> a;
    const auto assembly = time_phase(backend, context.repeats, a, [&] {
        // As a steady run assembles it: the system matrix in one pass (shift 0, scale 1), the
        // problem's stencil called inline.
        const auto stencil = [&](std::int64_t i, std::int64_t j, std::int64_t k) {
            return problem.stencil(grid, i, j, k);
        };
        SpatialOperator op(grid, stencil, *spec.boundary, grid.box(), SystemForm{0.0, 1.0});
        return release_system_matrix(op, 0.0, 1.0);
    });
    MeasuredSetup setup;
    using Analysis = std::pair<solvers::MatrixProperties, solvers::SolverPlan>;
    std::optional<Analysis> analysed;
    const auto analysis = time_phase(backend, context.repeats, analysed, [&] {
        solvers::SolverRequest request = spec.solver.request;
        request.remove_constant_null_space = true;
        request.ranks = 1;
        request.grid = box;
        solvers::MatrixProperties properties = solvers::analyze(*a);
        solvers::SolverPlan plan = solvers::plan_solver(properties, request);
        return Analysis{std::move(properties), std::move(plan)};
    });
    setup.properties = std::move(analysed->first);
    setup.plan = std::move(analysed->second);
    setup.matrix = std::move(*a);
    const std::int64_t n = setup.matrix.n;
    const int diagonals = setup.matrix.num_diagonals();
    setup.phases.push_back(phase_row("assembly", assembly,
                                     bench::assembly_floor(n, diagonals, sizeof(double)),
                                     context.bandwidth_gbps, "copy"));
    setup.phases.push_back(phase_row("analysis", analysis,
                                     bench::analysis_floor(n, diagonals, sizeof(double)),
                                     context.bandwidth_gbps, "copy"));
    measure_backend_phases(context, box, setup);
    return setup;
}

// A time step of another size on the solver's rows (time_step_rows of the steady system, dt
// alternating between 1e-3 and 2e-3): LinearSystemSolver::update_values timed `repeats` times
// after a warm-up, the operator's upload and the steps' refresh apart, each followed by a solve
// from zero (its cycle recorded again) timed on the host clock; against the upload's and the
// hierarchy's floors.
json measure_new_dt(const Context& context, solvers::LinearSystemSolver<double>& solver,
                    const solvers::DiaData<double>& steady, const MeasuredSetup& setup,
                    const solvers::Array<double>& b, solvers::Array<double>& x) {
    const auto& backend = context.backend;
    const std::array<solvers::DiaData<double>, 2> steps = {bench::time_step_rows(steady, 1e-3),
                                                           bench::time_step_rows(steady, 2e-3)};
    std::vector<double> total, upload, refresh, solve;
    std::int64_t iterations = 0;
    for (int run = 0; run <= context.repeats; ++run) {
        solvers::DiaData<double> rows = steps[static_cast<std::size_t>(run % 2)];
        const auto start = std::chrono::steady_clock::now();
        const auto parts = solver.update_values(std::move(rows));
        const double t = seconds_since(start);
        solvers::fill(x, 0.0);
        backend->synchronize();
        const auto solve_start = std::chrono::steady_clock::now();
        const solvers::SolveReport report = solver.solve(b, x);
        backend->synchronize();
        const double s = seconds_since(solve_start);
        iterations = report.total_iterations();
        if (run == 0) continue;
        total.push_back(t);
        upload.push_back(parts.operator_seconds);
        refresh.push_back(parts.steps_seconds);
        solve.push_back(s);
    }
    const auto storage = setup.plan.format == solvers::Format::stencil
                             ? solvers::DiaStorage::stencil
                             : solvers::DiaStorage::general;
    const bench::PhaseFloor upload_floor =
        bench::upload_floor(storage, steady.n, steady.num_diagonals(), sizeof(double));
    const bench::PhaseFloor hierarchy_floor =
        bench::hierarchy_floor(setup.shape.levels, sizeof(double), setup.shape.value_size);
    const double floor = upload_floor.bytes / (context.upload_gbps * 1e9) +
                         hierarchy_floor.bytes / (context.bandwidth_gbps * 1e9);
    return {{"what", "update_values with the rows of dt = 1e-3 and 2e-3 in turn"},
            {"seconds", median(total)},
            {"operator_seconds", median(upload)},
            {"hierarchy_seconds", median(refresh)},
            {"solve_after_seconds", median(solve)},
            {"iterations_after", iterations},
            {"floor_seconds", floor},
            {"floor_ratio", median(total) / floor}};
}

// The solve after the set-up: the run's LinearSystemSolver made once from the matrix (taken;
// its own set-up, upload and hierarchy together, timed once), then timed as run_case times a
// case; then a time step of another size (measure_new_dt). Returns the solve's phase_row with
// its iterations, status, that set-up's seconds and the new step's ("new_dt").
json measure_solve(const Context& context, MeasuredSetup& setup,
                   const solvers::MethodParameters& parameters) {
    const auto& backend = context.backend;
    const std::int64_t n = setup.matrix.n;
    const solvers::DiaData<double> steady = setup.matrix;  // (the solver takes the matrix)
    const auto made = std::chrono::steady_clock::now();
    solvers::LinearSystemSolver<double> solver(backend, std::move(setup.matrix), setup.plan,
                                               parameters);
    backend->synchronize();
    const double solver_setup = seconds_since(made);
    const auto b = solvers::Array<double>::from_host(
        backend, bench::right_hand_side(static_cast<std::int32_t>(n)));
    solvers::Array<double> x(backend, static_cast<std::size_t>(n));
    solvers::DeviceTimer timer(*backend);
    std::vector<double> seconds;
    solvers::SolveReport report;
    for (int run = 0; run <= context.repeats; ++run) {
        solvers::fill(x, 0.0);
        timer.start();
        report = solver.solve(b, x);
        const double t = timer.stop_seconds();
        if (run > 0) seconds.push_back(t);
    }
    const std::int64_t iterations = report.total_iterations();
    const bench::TrafficFloor cg =
        bench::traffic_floor(setup.plan.first.method, setup.plan.format, sizeof(double), n,
                             setup.properties.nnz, setup.properties.num_diagonals);
    json row =
        phase_row("solve", seconds, bench::solve_floor(iterations, cg, setup.shape.bytes_per_cycle),
                  context.bandwidth_gbps, "copy");
    row["iterations"] = iterations;
    row["status"] = std::string(solvers::to_string(report.result().status));
    row["solver_setup_seconds"] = solver_setup;
    row["new_dt"] = measure_new_dt(context, solver, steady, setup, b, x);
    return row;
}

// The set-up of bench::setup_input's run on the group's grid against its floors, and its solve.
json time_setup(const Context& context, const bench::MatrixGroup& group) {
    const RunSpec spec =
        parse_run_spec(Config::from_string(bench::setup_input(*group.grid), "bench-setup"));
    MeasuredSetup setup = measure_setup(context, spec, *group.grid);
    const std::int64_t n = setup.matrix.n;
    const int diagonals = setup.matrix.num_diagonals();
    json solve = measure_solve(context, setup, spec.solver.method);
    double setup_seconds = 0, setup_floor = 0;
    for (const json& phase : setup.phases) {
        setup_seconds += phase["seconds"].get<double>();
        setup_floor += phase["floor_seconds"].get<double>();
    }
    json levels = json::array();
    for (const solvers::MultigridLevelSummary& level : setup.shape.levels) {
        levels.push_back({{"box", level.box.describe()},
                          {"points", level.box.size()},
                          {"diagonals", level.num_diagonals},
                          {"storage", bench::storage_name(level.storage)}});
    }
    json j = {{"case", "setup/" + group.name},
              {"matrix", group.name},
              {"grid", group.grid->describe()},
              {"n", n},
              {"diagonals", diagonals},
              {"input",
               "poisson, k = 1, source 1, u = 0 on every side (Dirichlet), cg + multigrid, "
               "stencil, rtol 1e-8"},
              {"solver", solvers::to_string(setup.plan.first.method) + "+" +
                             solvers::to_string(setup.plan.first.preconditioner)},
              {"format", std::string(solvers::to_string(setup.plan.format))},
              {"cycle_precision", std::string(solvers::name_of(setup.cycle))},
              {"levels", levels},
              {"repeats", context.repeats},
              {"iterations", solve["iterations"]},
              {"status", solve["status"]},
              {"setup_seconds", setup_seconds},
              {"setup_floor_seconds", setup_floor},
              {"setup_over_solve", setup_seconds / solve["seconds"].get<double>()},
              {"solver_setup_seconds", solve["solver_setup_seconds"]}};
    j["new_dt"] = solve["new_dt"];
    for (const char* key : {"iterations", "status", "solver_setup_seconds", "new_dt"}) {
        solve.erase(key);
    }
    setup.phases.push_back(std::move(solve));
    j["phases"] = std::move(setup.phases);
    return j;
}

// A time step of another size (measure_new_dt) in a line.
std::string new_dt_line(const json& new_dt) {
    char text[320];
    std::snprintf(text, sizeof text,
                  "    new dt (update_values): %.3e s (operator %.3e, hierarchy %.3e), floor "
                  "%.3e s, ratio %.1f; the solve after it %.3e s (%lld iterations)",
                  new_dt["seconds"].get<double>(), new_dt["operator_seconds"].get<double>(),
                  new_dt["hierarchy_seconds"].get<double>(), new_dt["floor_seconds"].get<double>(),
                  new_dt["floor_ratio"].get<double>(), new_dt["solve_after_seconds"].get<double>(),
                  new_dt["iterations_after"].get<long long>());
    return text;
}

// The set-up's table in the text output.
void print_setup(const json& setup) {
    std::printf(
        "set-up of %s as a run makes it (%s; %zu levels, cycle in %s): %.3e s, %.1f "
        "solves\n",
        setup["matrix"].get<std::string>().c_str(), setup["input"].get<std::string>().c_str(),
        setup["levels"].size(), setup["cycle_precision"].get<std::string>().c_str(),
        setup["setup_seconds"].get<double>(), setup["setup_over_solve"].get<double>());
    std::printf("    %-10s %10s %10s %8s %12s  %s\n", "phase", "seconds", "floor s", "ratio",
                "floor bytes", "bandwidth");
    for (const json& phase : setup["phases"]) {
        std::printf("    %-10s %10.3e %10.3e %8.2f %12.4g  %s %.1f GB/s\n",
                    phase["phase"].get<std::string>().c_str(), phase["seconds"].get<double>(),
                    phase["floor_seconds"].get<double>(), phase["floor_ratio"].get<double>(),
                    phase["floor_bytes"].get<double>(),
                    phase["bandwidth"].get<std::string>().c_str(),
                    phase["bandwidth_gbps"].get<double>());
    }
    std::printf(
        "    (solve: %lld iterations, %s; LinearSystemSolver's own set-up, upload and "
        "hierarchy together, once: %.3e s)\n",
        setup["iterations"].get<long long>(), setup["status"].get<std::string>().c_str(),
        setup["solver_setup_seconds"].get<double>());
    std::printf("%s\n", new_dt_line(setup["new_dt"]).c_str());
}

std::string table_header() {
    char text[256];
    std::snprintf(text, sizeof text, "%-44s %9s %6s %10s %8s %6s %10s %7s  %s", "case", "n",
                  "iters", "s/iter", "GB/s", "floor", "base s/it", "speedup", "status");
    return text;
}

std::string table_row(const json& c) {
    char baseline[32] = "-", speedup[32] = "-";
    if (c.contains("baseline_seconds_per_iteration")) {
        std::snprintf(baseline, sizeof baseline, "%.3e",
                      c["baseline_seconds_per_iteration"].get<double>());
        std::snprintf(speedup, sizeof speedup, "%.2f", c["speedup_vs_baseline"].get<double>());
    }
    char text[320];
    std::snprintf(text, sizeof text, "%-44s %9lld %6lld %10.3e %8.1f %6.2f %10s %7s  %s",
                  c["case"].get<std::string>().c_str(), c["n"].get<long long>(),
                  c["iterations"].get<long long>(), c["seconds_per_iteration"].get<double>(),
                  c["achieved_gbps"].get<double>(), c["floor_ratio"].get<double>(), baseline,
                  speedup, c["status"].get<std::string>().c_str());
    return text;
}

// The bytes of the regular files under `directory`.
std::uintmax_t bytes_in(const std::filesystem::path& directory) {
    std::uintmax_t bytes = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(directory)) {
        if (entry.is_regular_file()) bytes += entry.file_size();
    }
    return bytes;
}

// Bytes per second of a plain sequential write of about `bytes` (at least 256 MiB, at most
// 4 GiB) into a new file in `directory`, in 16 MiB writes of non-zero data, fsync included:
// what the disk under the outputs takes, measured in the same run.
double disk_write_bandwidth(const std::filesystem::path& directory, double bytes) {
    constexpr std::size_t chunk = std::size_t{16} << 20;
    const auto total =
        static_cast<std::size_t>(std::clamp(bytes, 256.0 * (1 << 20), 4096.0 * (1 << 20)));
    std::vector<char> data(chunk);
    for (std::size_t k = 0; k < chunk; ++k) data[k] = static_cast<char>(k * 2654435761u >> 13);
    std::filesystem::create_directories(directory);
    const std::string path = (directory / "disk-probe").string();
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) throw std::runtime_error("cannot create " + path + ": " + std::strerror(errno));
    const auto start = std::chrono::steady_clock::now();
    std::size_t written = 0;
    bool failed = false;
    while (written < total && !failed) {
        const ssize_t n = ::write(fd, data.data(), std::min(chunk, total - written));
        failed = n <= 0;
        if (!failed) written += static_cast<std::size_t>(n);
    }
    failed = failed || ::fsync(fd) != 0;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ::close(fd);
    std::filesystem::remove(path);
    if (failed) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
    return static_cast<double>(written) / seconds;
}

// Heat-equation steps per second: backward Euler on an m x m grid with dt = h^2 / alpha and
// rtol 1e-8 (issue 5's case), once without output and once writing every 10th step, so the
// cost of output (which overlaps computing) shows as a ratio; where `source` is given (a
// function of x, y and t), with that source and without output only, so that the cost of
// forming each step's data term shows beside the solver's. The runs after a warm-up run.
json heat_steps_per_second(solvers::BackendChoice backend, std::int64_t m, std::int64_t steps,
                           const std::string& source = {}) {
    const double h = 1.0 / static_cast<double>(m - 1);
    // The problem as an input states it; the sizes set as typed values.
    const auto input = [&] {
        Config config = Config::from_string(
            "[problem]\ntype = \"heat\"\nalpha = 1.0\n"
            "initial = \"sin(pi*x)*sin(pi*y) + exp(-50*((x-0.3)^2 + (y-0.6)^2))\"\n"
            "[boundary]\nall = \"0\"\n[time]\nscheme = \"backward_euler\"\n"
            "[solver]\nrtol = 1e-8\n[output]\nevery = 10\n",
            "bench-heat");
        if (!source.empty()) config.set("problem.source", source, "bench-heat");
        config.set("grid.nx", m, "bench-heat");
        config.set("grid.ny", m, "bench-heat");
        config.set("time.dt", h * h, "bench-heat");
        config.set("time.end", h * h * static_cast<double>(steps), "bench-heat");
        return parse_run_spec(config);
    };
    // A directory of this process alone (several benchmarks may run at once).
    const auto directory =
        std::filesystem::temp_directory_path() /
        ("simrun-bench-heat-" + std::to_string(::getpid()) + "-" + std::to_string(m));
    auto run = [&](bool output, const char* compression = "lz4") {
        RunOptions options;
        options.backend = backend;
        options.quiet = true;
        options.write_output = output;
        options.output_directory = directory;
        RunSpec spec = input();
        spec.output.compression = solvers::parse_enum<VtkCompression>(compression, "compression");
        Simulation simulation(std::move(spec), options);
        return simulation.run();
    };
    run(false);  // warm-up: module load, allocation, first-touch
    const RunSummary quiet = run(false);
    json j;
    j["case"] = "heat/backward_euler-" + std::to_string(m) + (source.empty() ? "" : "-source") +
                "/dia/double";
    j["n"] = m * m;
    j["steps"] = quiet.steps;
    j["dt"] = h * h;
    j["solver_iterations"] = quiet.total_iterations;
    j["steps_per_second"] = static_cast<double>(quiet.steps) / quiet.seconds;
    // Where a step's time goes: the linear solve and forming the data term (the rest: the
    // right-hand side's vector operations and the loop).
    j["seconds_per_step"] = quiet.seconds_per_step();
    j["solver_seconds_per_step"] = quiet.per_step(quiet.solver_seconds);
    j["data_seconds_per_step"] = quiet.per_step(quiet.data_seconds);
    if (!source.empty()) {
        j["source"] = source;
        return j;
    }
    const RunSummary written = run(true);
    const double bytes = static_cast<double>(bytes_in(directory));
    std::error_code ignored;
    std::filesystem::remove_all(directory, ignored);
    j["steps_per_second_output_every_10"] = static_cast<double>(written.steps) / written.seconds;
    j["output_overhead"] = written.seconds / quiet.seconds - 1.0;
    // Where the overhead goes: the loop's copies to the host, and the wait for the last step.
    j["output_handover_seconds"] = written.output_handover_seconds;
    j["output_wait_seconds"] = written.output_wait_seconds;
    // The writers against the disk: the bytes the run wrote over its time (the writers set the
    // pace where output costs more than a few per cent), against a plain write of as many
    // bytes with fsync in the same directory; and the run again without compression, which
    // tells compression's share from the disk's.
    j["output_bytes"] = bytes;
    j["output_gb_per_second"] = 1e-9 * bytes / written.seconds;
    j["disk_write_gb_per_second"] = 1e-9 * disk_write_bandwidth(directory, bytes);
    const RunSummary uncompressed = run(true, "none");
    const double uncompressed_bytes = static_cast<double>(bytes_in(directory));
    std::filesystem::remove_all(directory, ignored);
    j["output_uncompressed_gb_per_second"] = 1e-9 * uncompressed_bytes / uncompressed.seconds;
    j["output_uncompressed_overhead"] = uncompressed.seconds / quiet.seconds - 1.0;
    return j;
}

// "X ms per step: solver Y ms (P%), data term Z ms (Q%)" of a heat case.
std::string step_shares(const json& heat) {
    const double step = heat["seconds_per_step"].get<double>();
    const double solver = heat["solver_seconds_per_step"].get<double>();
    const double data = heat["data_seconds_per_step"].get<double>();
    char text[160];
    std::snprintf(text, sizeof text,
                  "%.3g ms per step: solver %.3g ms (%.0f%%), data term %.3g ms (%.0f%%)",
                  1e3 * step, 1e3 * solver, step > 0 ? 100 * solver / step : 0.0, 1e3 * data,
                  step > 0 ? 100 * data / step : 0.0);
    return text;
}

// "output X GB/s (lz4), Y GB/s without compression; disk Z GB/s: P and Q of it".
std::string output_pace(const json& heat) {
    const double disk = heat["disk_write_gb_per_second"].get<double>();
    const double lz4 = heat["output_gb_per_second"].get<double>();
    const double raw = heat["output_uncompressed_gb_per_second"].get<double>();
    char text[256];
    std::snprintf(text, sizeof text,
                  "output %.2f GB/s with lz4 (%.2f of the disk), %.2f GB/s uncompressed (%.2f, "
                  "%+.1f%% per step); disk %.2f GB/s (plain write + fsync)",
                  lz4, lz4 / disk, raw, raw / disk,
                  100.0 * heat["output_uncompressed_overhead"].get<double>(), disk);
    return text;
}

// The set-up's tables of the report: one per grid, each phase against its floor.
void write_setup_report(std::ostream& out, const json& results) {
    if (results["setup"].empty()) return;
    char text[512];
    std::snprintf(text, sizeof text,
                  "\n## Set-up against its floor\n\nA run's set-up (%s) phase by phase, the "
                  "median of %d after a warm-up; floors at the copy bandwidth (%.1f GB/s), the "
                  "upload's at the upload bandwidth (%.1f GB/s from pageable memory, %.1f "
                  "pinned).\n",
                  results["setup"][0]["input"].get<std::string>().c_str(),
                  results["repeats"].get<int>(), results["bandwidth_gbps"].get<double>(),
                  results["upload_bandwidth_gbps"].get<double>(),
                  results["upload_bandwidth_pinned_gbps"].get<double>());
    out << text;
    for (const json& setup : results["setup"]) {
        std::snprintf(
            text, sizeof text,
            "\n%s (%lld rows, %s/%s, cycle in %s): set-up %.3e s = %.1f solves\n\n",
            setup["grid"].get<std::string>().c_str(), setup["n"].get<long long>(),
            setup["solver"].get<std::string>().c_str(), setup["format"].get<std::string>().c_str(),
            setup["cycle_precision"].get<std::string>().c_str(),
            setup["setup_seconds"].get<double>(), setup["setup_over_solve"].get<double>());
        out << text << "| phase | seconds | floor bytes | floor seconds | ratio |\n"
            << "|---|---:|---:|---:|---:|\n";
        for (const json& phase : setup["phases"]) {
            std::snprintf(text, sizeof text, "| %s | %.3e | %.4g | %.3e | %.1f |\n",
                          phase["phase"].get<std::string>().c_str(), phase["seconds"].get<double>(),
                          phase["floor_bytes"].get<double>(), phase["floor_seconds"].get<double>(),
                          phase["floor_ratio"].get<double>());
            out << text;
        }
        out << "\n" << new_dt_line(setup["new_dt"]).substr(4) << "\n";
    }
    out << "\nSet-up floors:\n\n";
    for (const auto& [key, formula] : results["setup_floors"].items()) {
        out << "- " << key << ": " << formula.get<std::string>() << "\n";
    }
}

void write_report(const std::string& path, const json& results) {
    std::ofstream out(path);
    if (!out) throw InputError(path + ": cannot write the report");
    out << "# simrun bench report\n\n";
    out << "- device: " << results["device"].get<std::string>() << " (back-end "
        << results["backend"].get<std::string>() << ")\n";
    out << "- date: " << results["date"].get<std::string>() << "\n";
    char text[512];
    std::snprintf(text, sizeof text,
                  "- copy bandwidth: %.1f GB/s (%s, bytes read + written, %zu MiB buffer, "
                  "median of %d)\n",
                  results["bandwidth_gbps"].get<double>(),
                  results["bandwidth_method"].get<std::string>().c_str(),
                  results["bandwidth_bytes"].get<std::size_t>() >> 20,
                  results["bandwidth_repeats"].get<int>());
    out << text;
    out << "- timing: one warm-up run, then the median of " << results["repeats"].get<int>()
        << " timed runs from x = 0 (device events on CUDA, the host clock after synchronising "
           "on the CPU); no preconditioner but in the cg+multigrid cases\n";
    out << "- floor_ratio = seconds per iteration / (bytes per iteration / copy bandwidth); "
           "achieved GB/s = floor bytes / measured time\n";
    out << "- device bytes/unknown: the device memory the solve holds (matrix, b, x, workspace) "
           "over the rows, from the driver's free memory before and after it (from 4M rows)\n\n";
    out << "| case | n | iterations | status | s/iteration | floor bytes/iter | achieved GB/s "
           "| floor ratio | baseline s/iteration | speedup | device bytes/unknown |\n";
    out << "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const json& c : results["cases"]) {
        std::string baseline = "-", speedup = "-", memory = "-";
        if (c.contains("device_bytes_per_unknown")) {
            std::snprintf(text, sizeof text, "%.1f", c["device_bytes_per_unknown"].get<double>());
            memory = text;
        }
        if (c.contains("baseline_seconds_per_iteration")) {
            std::snprintf(text, sizeof text, "%.3e",
                          c["baseline_seconds_per_iteration"].get<double>());
            baseline = text;
            std::snprintf(text, sizeof text, "%.2f", c["speedup_vs_baseline"].get<double>());
            speedup = text;
        }
        std::snprintf(text, sizeof text, "| %s | %lld | %lld | %s | %.3e | %.4g | %.1f | %.2f |",
                      c["case"].get<std::string>().c_str(), c["n"].get<long long>(),
                      c["iterations"].get<long long>(), c["status"].get<std::string>().c_str(),
                      c["seconds_per_iteration"].get<double>(),
                      c["bytes_per_iteration"].get<double>(), c["achieved_gbps"].get<double>(),
                      c["floor_ratio"].get<double>());
        out << text << " " << baseline << " | " << speedup << " | " << memory << " |\n";
    }
    write_setup_report(out, results);
    if (results.contains("heat")) {
        const json& heat = results["heat"];
        std::snprintf(text, sizeof text,
                      "\n## Heat equation\n\n%s: %lld steps, %lld solver iterations: %.1f steps "
                      "per second without output, %.1f with output every 10 steps (%+.1f%%; the "
                      "loop's hand-overs %.1f ms, the final wait for the writers %.1f ms)\n",
                      heat["case"].get<std::string>().c_str(), heat["steps"].get<long long>(),
                      heat["solver_iterations"].get<long long>(),
                      heat["steps_per_second"].get<double>(),
                      heat["steps_per_second_output_every_10"].get<double>(),
                      100.0 * heat["output_overhead"].get<double>(),
                      1e3 * heat["output_handover_seconds"].get<double>(),
                      1e3 * heat["output_wait_seconds"].get<double>());
        out << text << "\n" << step_shares(heat) << "\n" << output_pace(heat) << "\n";
    }
    if (results.contains("heat_source")) {
        const json& heat = results["heat_source"];
        out << "\n"
            << heat["case"].get<std::string>() << " (source " << heat["source"].get<std::string>()
            << ", output off): " << step_shares(heat) << "\n";
    }
    out << "\n## Floors (bytes per row per iteration; s = value size, D = stored diagonals, "
           "d = nnz / n)\n\n";
    for (const auto& [key, formula] : results["floors"].items()) {
        out << "- " << key << ": " << formula.get<std::string>() << "\n";
    }
    for (const char* list : {"skipped", "failed"}) {
        if (results[list].empty()) continue;
        out << "\n## " << list << "\n\n";
        for (const json& entry : results[list]) {
            out << "- " << entry["case"].get<std::string>() << ": "
                << entry["reason"].get<std::string>() << "\n";
        }
    }
    for (const json& note : results["notes"]) out << "\nNote: " << note.get<std::string>() << "\n";
    if (!out) throw InputError(path + ": error while writing the report");
}

}  // namespace

int run_bench(const BenchOptions& options) {
    const auto choice = options.backend;
    const auto backend = solvers::make_backend(choice);
    const bench::BenchPlan plan = bench::make_plan(options, backend->kind());
    std::vector<std::string> notes = plan.notes;

    Context context;
    context.backend = backend;
    context.baseline = use_baseline(options.baseline, backend->kind(), notes);
    context.repeats = plan.repeats;
    context.bandwidth_gbps = copy_bandwidth_gbps(backend, plan.bandwidth_bytes, bandwidth_repeats);
    context.upload_gbps =
        upload_bandwidth_gbps(backend, plan.bandwidth_bytes, bandwidth_repeats, false);
    const double pinned_upload_gbps =
        upload_bandwidth_gbps(backend, plan.bandwidth_bytes, bandwidth_repeats, true);

    json results;
    results["tool"] = "simrun bench";
    results["schema_version"] = 1;
    results["backend"] = std::string(solvers::to_string(backend->kind()));
    results["device"] = backend->description();
    results["date"] = utc_now();
    results["quick"] = options.quick;
    results["repeats"] = plan.repeats;
    results["bandwidth_gbps"] = context.bandwidth_gbps;
    results["bandwidth_bytes"] = plan.bandwidth_bytes;
    results["bandwidth_repeats"] = bandwidth_repeats;
    results["bandwidth_method"] = backend->kind() == solvers::BackendKind::cuda
                                      ? "cudaMemcpyAsync device to device"
                                      : "memcpy split over the OpenMP threads";
    results["floors"] = json::object();
    for (const auto& [key, formula] : bench::floor_formulas()) results["floors"][key] = formula;
    // The set-up's phases: the upload's floor at the pageable bandwidth (a DiaMatrix copies
    // from a std::vector); the pinned one beside it, for what pinned memory would reach.
    results["upload_bandwidth_gbps"] = context.upload_gbps;
    results["upload_bandwidth_pinned_gbps"] = pinned_upload_gbps;
    results["upload_bandwidth_method"] =
        backend->kind() == solvers::BackendKind::cuda
            ? "Backend::copy_from_host host to device, from pageable memory (pinned beside it)"
            : "Backend::copy_from_host (one memcpy), bytes delivered";
    results["setup_floors"] = json::object();
    for (const auto& [key, formula] : bench::setup_floor_formulas()) {
        results["setup_floors"][key] = formula;
    }
    results["setup"] = json::array();
    results["cases"] = json::array();
    results["skipped"] = json::array();
    results["failed"] = json::array();
    results["notes"] = notes;

    std::printf(
        "simrun bench: %s (%s), copy bandwidth %.1f GB/s (%zu MiB), upload %.1f GB/s pageable, "
        "%.1f pinned, %d timed runs per case after one warm-up\n",
        results["backend"].get<std::string>().c_str(), backend->description().c_str(),
        context.bandwidth_gbps, plan.bandwidth_bytes >> 20, context.upload_gbps, pinned_upload_gbps,
        plan.repeats);
    for (const std::string& note : notes) std::printf("note: %s\n", note.c_str());
    std::printf("%s\n", table_header().c_str());
    std::fflush(stdout);

    auto fail = [&](const std::string& name, const std::string& reason, const char* list) {
        results[list].push_back({{"case", name}, {"reason", reason}});
        std::printf("%-44s %s: %s\n", name.c_str(), list, reason.c_str());
        std::fflush(stdout);
    };

    for (const bench::MatrixGroup& group : plan.groups) {
        MatrixUnderTest matrix;
        matrix.name = group.name;
        matrix.grid = group.grid;
        try {
            matrix.a = group.build();
            if (matrix.a.rows != matrix.a.cols) {
                throw std::invalid_argument("the matrix is not square");
            }
            matrix.properties = solvers::analyze(matrix.a);
            matrix.b = bench::right_hand_side(matrix.a.rows);
        } catch (const std::exception& e) {
            fail(group.name, e.what(), "failed");
            continue;
        }
        for (const bench::CaseSpec& spec : group.cases) {
            const solvers::Method method =
                !group.choose_method ? spec.method
                : matrix.properties.symmetric && matrix.properties.positive_diagonal
                    ? solvers::Method::cg
                    : solvers::Method::bicgstab;
            const std::string name = bench::case_name(group.name, method, spec);
            try {
                json c = spec.precision == bench::Precision::double_precision
                             ? run_case<double>(context, matrix, method, spec)
                             : run_case<float>(context, matrix, method, spec);
                std::printf("%s\n", table_row(c).c_str());
                if (c.contains("cycle")) {
                    const json& cycle = c["cycle"];
                    std::printf(
                        "    cycle in %s: %.3e s, %.0f bytes per unknown, %.2fx its floor\n",
                        cycle["precision"].get<std::string>().c_str(),
                        cycle["seconds"].get<double>(), cycle["bytes_per_unknown"].get<double>(),
                        cycle["floor_ratio"].get<double>());
                    for (const json& level : cycle["levels"]) {
                        std::printf("    level %-12s %2d diagonals %-8s %.3e s per cycle\n",
                                    level["box"].get<std::string>().c_str(),
                                    level["diagonals"].get<int>(),
                                    level["storage"].get<std::string>().c_str(),
                                    level["seconds_per_cycle"].get<double>());
                    }
                }
                std::fflush(stdout);
                results["cases"].push_back(std::move(c));
            } catch (const std::invalid_argument& e) {
                // The matrix does not fit the format (e.g. too many diagonals for DIA).
                fail(name, e.what(), "skipped");
            } catch (const std::exception& e) {
                fail(name, e.what(), "failed");
            }
        }
        if (!group.time_setup) continue;
        try {
            json setup = time_setup(context, group);
            print_setup(setup);
            std::fflush(stdout);
            results["setup"].push_back(std::move(setup));
        } catch (const std::exception& e) {
            fail("setup/" + group.name, e.what(), "failed");
        }
    }

    try {
        // 1024^2 on the GPU (the case); smaller on the CPU and with --quick.
        const bool gpu = backend->kind() == solvers::BackendKind::cuda;
        const std::int64_t m = options.quick ? (gpu ? 256 : 129) : (gpu ? 1024 : 257);
        // 500 steps (50 outputs) on the GPU, so the output's one-time costs (the first
        // buffers, the wait for the last step) weigh as in a run, not as in a 30 ms sample.
        results["heat"] = heat_steps_per_second(choice, m, options.quick ? 10 : gpu ? 500 : 50);
        const json& heat = results["heat"];
        std::printf(
            "%-44s %.1f steps/s, %.1f with output every 10 steps (%+.1f%%: hand-overs %.1f ms, "
            "final wait %.1f ms)\n",
            heat["case"].get<std::string>().c_str(), heat["steps_per_second"].get<double>(),
            heat["steps_per_second_output_every_10"].get<double>(),
            100.0 * heat["output_overhead"].get<double>(),
            1e3 * heat["output_handover_seconds"].get<double>(),
            1e3 * heat["output_wait_seconds"].get<double>());
        std::printf("%-44s %s\n", "", step_shares(heat).c_str());
        std::printf("%-44s %s\n", "", output_pace(heat).c_str());
    } catch (const std::exception& e) {
        fail("heat", e.what(), "failed");
    }
    try {
        // The same case with inputs/heat.toml's time-dependent source (a heater switching on and
        // off): every step evaluates it at every node and forms the data term again.
        const bool gpu = backend->kind() == solvers::BackendKind::cuda;
        const std::int64_t m = options.quick ? (gpu ? 256 : 129) : (gpu ? 1024 : 257);
        results["heat_source"] =
            heat_steps_per_second(choice, m,
                                  options.quick ? 10
                                  : gpu         ? 100
                                                : 50,
                                  "4*exp(-300*((x-0.8)^2 + (y-0.8)^2)) * (sin(6*pi*t) > 0)");
        const json& heat = results["heat_source"];
        std::printf("%-44s %.1f steps/s, %s\n", heat["case"].get<std::string>().c_str(),
                    heat["steps_per_second"].get<double>(), step_shares(heat).c_str());
    } catch (const std::exception& e) {
        fail("heat_source", e.what(), "failed");
    }

    if (!options.json.empty()) {
        std::ofstream out(options.json);
        out << results.dump(2) << "\n";
        if (!out) throw InputError(options.json + ": cannot write the JSON results");
    }
    if (!options.report.empty()) write_report(options.report, results);
    return results["failed"].empty() ? 0 : 1;
}

}  // namespace simrun::app
