#include "benchmark_cases.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <stdexcept>

#include "simrun/framework/config/input_error.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/matrices/matrix_market.hpp"

namespace simrun::app::bench {
namespace {

using framework::InputError;

// Rows appended one at a time, columns given in ascending order.
class CsrBuilder {
public:
    CsrBuilder(std::int32_t n, std::int64_t nnz_estimate) {
        csr_.rows = csr_.cols = n;
        csr_.row_ptr.reserve(static_cast<std::size_t>(n) + 1);
        csr_.col.reserve(static_cast<std::size_t>(nnz_estimate));
        csr_.values.reserve(static_cast<std::size_t>(nnz_estimate));
    }
    void add(std::int32_t column, double value) {
        csr_.col.push_back(column);
        csr_.values.push_back(value);
    }
    void end_row() { csr_.row_ptr.push_back(static_cast<std::int32_t>(csr_.col.size())); }
    solvers::CsrData<double> take() { return std::move(csr_); }

private:
    solvers::CsrData<double> csr_;
};

void check_grid(std::int64_t m, int dimensions) {
    std::int64_t rows = 1;
    for (int d = 0; d < dimensions; ++d) rows *= m;
    // 2d + 1 entries per row must fit 32-bit CSR indices.
    if (m < 3 || rows * (2 * dimensions + 1) >= (std::int64_t{1} << 31)) {
        throw InputError("bench: a " + std::to_string(dimensions) + "D grid of edge " +
                         std::to_string(m) +
                         " is out of range (edge >= 3, and at most 2^31 - 1 nonzeros)");
    }
}

constexpr double rtol_to_solution = 1e-8;

// Fixed-count runs: 100 iterations on CUDA; on the CPU, as many as 100 take at 256^2 rows
// (within [10, 100]), so large grids do not take minutes per case.
std::int64_t fixed_iterations(solvers::BackendKind kind, std::int64_t rows) {
    if (kind == solvers::BackendKind::cuda) return 100;
    return std::clamp<std::int64_t>(100 * 65536 / std::max<std::int64_t>(rows, 1), 10, 100);
}

// The formats of the seeds' experiment; the generated grids (constant coefficients) also run
// in the stencil format.
const std::vector<solvers::Format> seed_formats = {solvers::Format::dia, solvers::Format::ell,
                                                   solvers::Format::csr};
const std::vector<solvers::Format> grid_formats = {solvers::Format::stencil, solvers::Format::dia,
                                                   solvers::Format::ell, solvers::Format::csr};

std::vector<CaseSpec> every_format(solvers::Method method, std::vector<Precision> precisions,
                                   double rtol, std::int64_t max_iterations,
                                   const std::vector<solvers::Format>& formats = grid_formats) {
    std::vector<CaseSpec> cases;
    for (solvers::Format format : formats) {
        for (Precision precision : precisions) {
            cases.push_back({method, format, precision, rtol, max_iterations});
        }
    }
    return cases;
}

const std::vector<Precision> both_precisions = {Precision::double_precision,
                                                Precision::single_precision};
const std::vector<Precision> double_only = {Precision::double_precision};

}  // namespace

solvers::CsrData<double> poisson_matrix(std::int32_t m, int dimensions) {
    check_grid(m, dimensions);
    const std::int32_t plane = m * m;
    const std::int32_t n = dimensions == 2 ? plane : plane * m;
    CsrBuilder builder(n, static_cast<std::int64_t>(n) * (2 * dimensions + 1));
    for (std::int32_t i = 0; i < n; ++i) {
        const std::int32_t x = i % m, y = (i / m) % m, z = i / plane;
        if (dimensions == 3 && z > 0) builder.add(i - plane, -1.0);
        if (y > 0) builder.add(i - m, -1.0);
        if (x > 0) builder.add(i - 1, -1.0);
        builder.add(i, 2.0 * dimensions);
        if (x < m - 1) builder.add(i + 1, -1.0);
        if (y < m - 1) builder.add(i + m, -1.0);
        if (dimensions == 3 && z < m - 1) builder.add(i + plane, -1.0);
        builder.end_row();
    }
    return builder.take();
}

solvers::CsrData<double> convection_diffusion_matrix(std::int32_t m) {
    check_grid(m, 2);
    // c = v h / 2 with cell Peclet number 0.5: upwind neighbours -1 - c, downwind -1 + c.
    constexpr double c = 0.5;
    const std::int32_t n = m * m;
    CsrBuilder builder(n, 5 * static_cast<std::int64_t>(n));
    for (std::int32_t i = 0; i < n; ++i) {
        const std::int32_t x = i % m, y = i / m;
        if (y > 0) builder.add(i - m, -1.0 - c);
        if (x > 0) builder.add(i - 1, -1.0 - c);
        builder.add(i, 4.0);
        if (x < m - 1) builder.add(i + 1, -1.0 + c);
        if (y < m - 1) builder.add(i + m, -1.0 + c);
        builder.end_row();
    }
    return builder.take();
}

std::vector<double> right_hand_side(std::int32_t n) {
    std::mt19937_64 generator(20240611);
    std::uniform_real_distribution<double> value(0.5, 1.5);
    std::vector<double> b(static_cast<std::size_t>(n));
    for (double& v : b) v = value(generator);
    return b;
}

// Floors. Per SpMV the matrix is read once:
//   stencil:   n + D s              (a mask byte per row, a value per diagonal)
//   DIA:       D n s                (D stored diagonals, out-of-matrix slots included)
//   ELLPACK-R: nnz (s + 4) + 4 n    (each row's own entries and column indices, its length)
//   CSR:       nnz (s + 4) + 4 (n + 1)
// plus the vector passes V n s of a fully fused method (the counts the issue fixes):
//   CG: 1 SpMV + 10 n s; BiCGStab: 2 SpMVs + 15 n s; Jacobi: 1 SpMV + 3 n s (x and b read,
//   x written). 5-point, double, d = nnz / n = 5: CG DIA 120, CG ELL/CSR 144, BiCGStab DIA 200,
//   Jacobi DIA 64 bytes per row.
TrafficFloor traffic_floor(solvers::Method method, solvers::Format format, std::size_t value_size,
                           std::int64_t rows, std::int64_t nnz, int diagonals) {
    int spmvs = 0, vector_passes = 0;
    switch (method) {
        case solvers::Method::cg:
            spmvs = 1, vector_passes = 10;
            break;
        case solvers::Method::bicgstab:
            spmvs = 2, vector_passes = 15;
            break;
        case solvers::Method::jacobi:
            spmvs = 1, vector_passes = 3;
            break;
        case solvers::Method::gmres:
            // Step j of a cycle: the products with j + 2 vectors (basis and w) and the combination
            // of as many, written once: 2 (j + 2) + 1 passes; over a cycle of m = 30 steps
            // (j = 0 .. 29) on average m + 4 = 34.
            spmvs = 1, vector_passes = gmres_bench_restart + 4;
            break;
        default:
            throw std::invalid_argument("bench: no traffic floor for " +
                                        solvers::to_string(method));
    }
    const auto s = static_cast<double>(value_size);
    const auto n = static_cast<double>(rows);
    const auto z = static_cast<double>(nnz);
    double matrix_bytes = 0;
    char text[256];
    const std::string spmv_factor = spmvs == 1 ? "" : std::to_string(spmvs) + " ";
    switch (format) {
        case solvers::Format::stencil:
            matrix_bytes = n + diagonals * s;
            std::snprintf(text, sizeof text, "%s(n + D s) + %d n s (D = %d, n = %lld, s = %d)",
                          spmv_factor.c_str(), vector_passes, diagonals,
                          static_cast<long long>(rows), static_cast<int>(value_size));
            break;
        case solvers::Format::dia:
            matrix_bytes = diagonals * n * s;
            std::snprintf(text, sizeof text, "%sD n s + %d n s (D = %d, n = %lld, s = %d)",
                          spmv_factor.c_str(), vector_passes, diagonals,
                          static_cast<long long>(rows), static_cast<int>(value_size));
            break;
        case solvers::Format::ell:
            matrix_bytes = z * (s + 4) + 4 * n;
            std::snprintf(text, sizeof text,
                          "%s(nnz (s + 4) + 4 n) + %d n s (nnz = %lld, n = %lld, s = %d)",
                          spmv_factor.c_str(), vector_passes, static_cast<long long>(nnz),
                          static_cast<long long>(rows), static_cast<int>(value_size));
            break;
        case solvers::Format::csr:
            matrix_bytes = z * (s + 4) + 4 * (n + 1);
            std::snprintf(text, sizeof text,
                          "%s(nnz (s + 4) + 4 (n + 1)) + %d n s (nnz = %lld, n = %lld, s = %d)",
                          spmv_factor.c_str(), vector_passes, static_cast<long long>(nnz),
                          static_cast<long long>(rows), static_cast<int>(value_size));
            break;
        default:
            throw std::invalid_argument("bench: no traffic floor for format " +
                                        std::string(solvers::to_string(format)));
    }
    return {spmvs * matrix_bytes + vector_passes * n * s, text};
}

std::vector<std::pair<std::string, std::string>> floor_formulas() {
    return {
        {"cg/stencil", "1 + 10 s bytes per row (5-point double: 1 + 80 = 81)"},
        {"cg/dia", "D s + 10 s bytes per row (5-point double: 40 + 80 = 120)"},
        {"cg/ell", "d (s + 4) + 4 + 10 s, d = nnz / n (5-point double: 60 + 4 + 80 = 144)"},
        {"cg/csr", "d (s + 4) + 4 + 10 s, d = nnz / n (5-point double: 144)"},
        {"bicgstab/stencil", "2 + 15 s (5-point double: 122)"},
        {"bicgstab/dia", "2 D s + 15 s (5-point double: 80 + 120 = 200)"},
        {"bicgstab/ell", "2 (d (s + 4) + 4) + 15 s (5-point double: 248)"},
        {"bicgstab/csr", "2 (d (s + 4) + 4) + 15 s (5-point double: 248)"},
        {"gmres/dia",
         "D s + (m + 4) s, the mean over a cycle of m = 30 (5-point double: 40 + 272 = "
         "312)"},
        {"jacobi/stencil", "1 + 3 s (5-point double: 25)"},
        {"jacobi/dia", "D s + 3 s (5-point double: 40 + 24 = 64)"},
        {"jacobi/ell", "d (s + 4) + 4 + 3 s (5-point double: 88)"},
        {"jacobi/csr", "d (s + 4) + 4 + 3 s (5-point double: 88)"},
    };
}

const char* storage_name(solvers::DiaStorage storage) {
    switch (storage) {
        case solvers::DiaStorage::stencil:
            return "stencil";
        case solvers::DiaStorage::classes:
            return "classes";
        default:
            return "dia";
    }
}

double stored_bytes(solvers::DiaStorage storage, std::int64_t rows, int diagonals,
                    std::size_t value_size) {
    const auto n = static_cast<double>(rows);
    const double s = static_cast<double>(value_size);
    switch (storage) {
        case solvers::DiaStorage::stencil:
            return n + diagonals * s;
        case solvers::DiaStorage::classes:
            return n;
        default:
            return diagonals * n * s;
    }
}

namespace {

// "D n s (D = 5, n = 65536, s = 8)", the values of a DIA matrix once.
PhaseFloor dia_values_once(std::int64_t rows, int diagonals, std::size_t value_size) {
    char text[128];
    std::snprintf(text, sizeof text, "D n s (D = %d, n = %lld, s = %d)", diagonals,
                  static_cast<long long>(rows), static_cast<int>(value_size));
    return {stored_bytes(solvers::DiaStorage::general, rows, diagonals, value_size), text};
}

// The axes along which `coarse` is coarser than `fine`.
int axes_coarsened(const solvers::GridBox& fine, const solvers::GridBox& coarse) {
    int axes = 0;
    for (int a = 0; a < fine.dimension; ++a) {
        if (coarse.points[static_cast<std::size_t>(a)] !=
            fine.points[static_cast<std::size_t>(a)]) {
            ++axes;
        }
    }
    return axes;
}

}  // namespace

PhaseFloor assembly_floor(std::int64_t rows, int diagonals, std::size_t value_size) {
    return dia_values_once(rows, diagonals, value_size);
}

PhaseFloor analysis_floor(std::int64_t rows, int diagonals, std::size_t value_size) {
    return dia_values_once(rows, diagonals, value_size);
}

PhaseFloor upload_floor(solvers::DiaStorage storage, std::int64_t rows, int diagonals,
                        std::size_t value_size) {
    char text[160];
    const char* form = storage == solvers::DiaStorage::stencil   ? "n + D s"
                       : storage == solvers::DiaStorage::classes ? "n"
                                                                 : "D n s";
    std::snprintf(text, sizeof text, "%s, %s storage (D = %d, n = %lld, s = %d)", form,
                  storage_name(storage), diagonals, static_cast<long long>(rows),
                  static_cast<int>(value_size));
    return {stored_bytes(storage, rows, diagonals, value_size), text};
}

PhaseFloor hierarchy_floor(const std::vector<solvers::MultigridLevelSummary>& levels,
                           std::size_t finest_value_size, std::size_t cycle_value_size) {
    if (levels.empty()) return {0.0, "no levels"};
    const auto rows = [&](std::size_t l, std::size_t value_size) {
        return stored_bytes(levels[l].storage, levels[l].box.size(), levels[l].num_diagonals,
                            value_size);
    };
    double read = rows(0, finest_value_size), written = 0.0, weights = 0.0;
    if (finest_value_size != cycle_value_size) written += rows(0, cycle_value_size);
    const std::size_t last = levels.size() - 1;
    for (std::size_t l = 0; l < last; ++l) {
        if (l > 0) read += rows(l, cycle_value_size);
        const auto coarse_points = static_cast<double>(levels[l + 1].box.size());
        const int axes = axes_coarsened(levels[l].box, levels[l + 1].box);
        const bool classed = levels[l].storage != solvers::DiaStorage::general;
        weights += classed ? coarse_points
                           : (std::pow(3.0, axes) - 1.0) * coarse_points *
                                 static_cast<double>(cycle_value_size);
        if (l + 1 < last) written += rows(l + 1, cycle_value_size);
    }
    const auto coarsest = static_cast<double>(levels[last].box.size());
    const double inverse = coarsest * coarsest * static_cast<double>(cycle_value_size);
    char text[256];
    std::snprintf(text, sizeof text,
                  "rows read %.4g + weights %.4g + rows written %.4g + coarsest inverse %.4g "
                  "bytes (%zu levels, s = %d, %d in the cycle)",
                  read, weights, written, inverse, levels.size(),
                  static_cast<int>(finest_value_size), static_cast<int>(cycle_value_size));
    return {read + weights + written + inverse, text};
}

PhaseFloor solve_floor(std::int64_t iterations, const TrafficFloor& cg, double cycle_bytes) {
    char text[320];
    std::snprintf(text, sizeof text, "iterations (CG + one cycle) = %lld (%.4g + %.4g)",
                  static_cast<long long>(iterations), cg.bytes_per_iteration, cycle_bytes);
    return {static_cast<double>(iterations) * (cg.bytes_per_iteration + cycle_bytes), text};
}

std::vector<std::pair<std::string, std::string>> setup_floor_formulas() {
    return {
        {"assembly", "D n s: the system matrix's DIA values written once, at the copy bandwidth"},
        {"analysis", "D n s: the DIA values read once, at the copy bandwidth"},
        {"upload",
         "the operator as the back-end keeps it (D n s, stencil n + D s, classes n), at the "
         "upload bandwidth"},
        {"hierarchy",
         "sum over levels of the rows read once (the finest in the solver's operator) + each "
         "transfer's weights (n_c class bytes where the fine rows are stencil or classes, "
         "else (3^a - 1) n_c s, a = axes coarsened) + the next level's rows written once + the "
         "coarsest inverse n_c^2 s (+ the finest level's copy where the cycle's precision is "
         "not the solve's), at the copy bandwidth"},
        {"solve",
         "iterations (CG's floor in the operator's format + MultigridHierarchy::bytes_per_cycle), "
         "at the copy bandwidth"},
    };
}

solvers::DiaData<double> time_step_rows(solvers::DiaData<double> steady, double dt) {
    const int main = steady.find_diagonal(0);
    for (std::int64_t i = 0; i < steady.n; ++i) {
        bool couples = false;
        for (int d = 0; d < steady.num_diagonals(); ++d) {
            couples = couples || (d != main && steady.at(d, i) != 0.0);
        }
        if (!couples) continue;
        for (int d = 0; d < steady.num_diagonals(); ++d) steady.at(d, i) *= dt;
        steady.at(main, i) += 1.0;
    }
    return steady;
}

std::string setup_input(const solvers::GridBox& grid) {
    std::string text =
        "[problem]\ntype = \"poisson\"\nk = 1.0\nsource = \"1\"\n[boundary]\nall = \"0\"\n"
        "[solver]\nmethod = \"cg\"\npreconditioner = \"multigrid\"\nformat = \"stencil\"\nrtol = "
        "1e-8\n[grid]\n";
    const char* counts[3] = {"nx", "ny", "nz"};
    for (int a = 0; a < grid.dimension; ++a) {
        text += std::string(counts[a]) + " = " +
                std::to_string(grid.points[static_cast<std::size_t>(a)]) + "\n";
    }
    return text;
}

CaseSpec multigrid_case() {
    CaseSpec spec{solvers::Method::cg, solvers::Format::stencil, Precision::double_precision,
                  rtol_to_solution, 100};
    spec.preconditioner = solvers::PreconditionerKind::multigrid;
    return spec;
}

std::string case_name(const std::string& matrix, solvers::Method method, const CaseSpec& spec) {
    std::string name = solvers::to_string(method) +
                       (spec.preconditioner == solvers::PreconditionerKind::none
                            ? ""
                            : "+" + solvers::to_string(spec.preconditioner)) +
                       "/" + matrix + "/" + std::string(solvers::to_string(spec.format)) + "/" +
                       std::string(solvers::name_of(spec.precision));
    if (spec.rtol > 0) {
        char text[32];
        std::snprintf(text, sizeof text, "/to-%.0e", spec.rtol);
        name += text;
    }
    return name;
}

BenchPlan make_plan(const BenchOptions& options, solvers::BackendKind kind) {
    BenchPlan plan;
    const bool cuda = kind == solvers::BackendKind::cuda;
    plan.repeats = options.quick ? 3 : 5;
    plan.bandwidth_bytes = cuda ? std::size_t{1} << 30 : std::size_t{256} << 20;

    std::vector<long long> sizes = options.sizes;
    if (sizes.empty()) {
        sizes = options.quick ? std::vector<long long>{128, 256}
                              : std::vector<long long>{128, 256, 512, 1024, 2048, 4096};
    }
    for (long long m : sizes) {
        if (m < 8) {  // the matching cube needs an edge of at least 3
            throw InputError("bench: --sizes takes 2D grid edges >= 8, got " + std::to_string(m));
        }
        check_grid(m, 2);
    }
    // Time to tolerance (CG, no preconditioner, about 3 m iterations) on the smaller grids.
    const long long largest_to_solution = options.quick ? 128 : cuda ? 1024 : 256;

    for (long long m_long : sizes) {
        const auto m = static_cast<std::int32_t>(m_long);
        const std::int64_t rows = m_long * m_long;
        const std::int64_t k = fixed_iterations(kind, rows);
        const std::string edge = std::to_string(m);

        MatrixGroup poisson{"poisson2d-" + edge, [m] { return poisson_matrix(m, 2); }, false,
                            every_format(solvers::Method::cg, both_precisions, 0.0, k)};
        for (const CaseSpec& c : every_format(solvers::Method::jacobi, double_only, 0.0, k)) {
            poisson.cases.push_back(c);
        }
        if (m_long <= largest_to_solution) {
            for (const CaseSpec& c : every_format(solvers::Method::cg, double_only,
                                                  rtol_to_solution, 10 * m_long + 1000)) {
                poisson.cases.push_back(c);
            }
        }
        // Multigrid-preconditioned CG to 1e-8 at every size, in the stencil format.
        poisson.grid = solvers::GridBox{2, {m_long, m_long, 1}};
        poisson.cases.push_back(multigrid_case());
        poisson.time_setup = true;
        plan.groups.push_back(std::move(poisson));

        MatrixGroup convection{"convdiff2d-" + edge, [m] { return convection_diffusion_matrix(m); },
                               false, every_format(solvers::Method::bicgstab, double_only, 0.0, k)};
        // GMRES(30), the fallback chain's method for nonsymmetric systems, in DIA.
        convection.cases.push_back(
            {solvers::Method::gmres, solvers::Format::dia, Precision::double_precision, 0.0, k});
        plan.groups.push_back(std::move(convection));

        // The cube with about as many rows: 128^2 -> 25^3, 512^2 -> 64^3, 4096^2 -> 256^3.
        const auto m3 =
            static_cast<std::int32_t>(std::llround(std::cbrt(static_cast<double>(rows))));
        check_grid(m3, 3);
        const std::int64_t k3 = fixed_iterations(kind, static_cast<std::int64_t>(m3) * m3 * m3);
        MatrixGroup poisson3d{"poisson3d-" + std::to_string(m3),
                              [m3] { return poisson_matrix(m3, 3); }, false,
                              every_format(solvers::Method::cg, both_precisions, 0.0, k3)};
        poisson3d.grid = solvers::GridBox{3, {m3, m3, m3}};
        poisson3d.cases.push_back(multigrid_case());
        poisson3d.time_setup = true;
        plan.groups.push_back(std::move(poisson3d));
    }

    // One case larger than a CPU's last-level cache (126 MB per iteration), so the quick set
    // also holds a ratio measured against memory rather than cache.
    if (options.quick && options.sizes.empty()) {
        const std::int32_t m = 1024;
        plan.groups.push_back(
            {"poisson2d-1024",
             [m] { return poisson_matrix(m, 2); },
             false,
             {{solvers::Method::cg, solvers::Format::dia, Precision::double_precision, 0.0,
               fixed_iterations(kind, std::int64_t{m} * m)}}});
    }

    // Real matrices: to tolerance 1e-8, double, each format, at most 2000 iterations (several
    // are hard for unpreconditioned Krylov methods; their status says how far they got).
    namespace fs = std::filesystem;
    const fs::path directory(options.matrices);
    std::error_code error;
    if (options.matrices.empty() || !fs::is_directory(directory, error)) {
        plan.notes.push_back("real matrices skipped: no directory '" + options.matrices + "'");
        return plan;
    }
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(directory)) {
        if (entry.is_regular_file() && entry.path().extension() == ".mtx") {
            files.push_back(entry.path());
        }
    }
    std::sort(files.begin(), files.end());
    if (options.quick) {
        const std::vector<std::string> quick_set = {"nos3", "lap2D_5pt_n100", "pde900"};
        std::erase_if(files, [&](const fs::path& p) {
            return std::find(quick_set.begin(), quick_set.end(), p.stem().string()) ==
                   quick_set.end();
        });
    }
    for (const fs::path& file : files) {
        plan.groups.push_back(
            {file.stem().string(),
             [file] { return solvers::to_csr(solvers::read_matrix_market(file)); }, true,
             every_format(solvers::Method::cg, double_only, rtol_to_solution, 2000, seed_formats)});
    }
    return plan;
}

}  // namespace simrun::app::bench
