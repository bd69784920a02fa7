// A whole run on the CUDA back-end against the same run on the CPU back-end: the final fields
// agree far below the discretisation error. Skips where no GPU exists.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "simrun/framework/config/config.hpp"
#include "simrun/framework/config/input_error.hpp"
#include "simrun/framework/discretisation/expression.hpp"
#include "simrun/framework/problem/run_spec.hpp"
#include "simrun/framework/run/simulation.hpp"
#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/base/cuda_interop.hpp"
#include "simrun/solvers/base/errors.hpp"
#include "support/expression_cases.hpp"

namespace simrun {
namespace {

bool no_gpu() { return solvers::cuda_device_count() == 0; }
constexpr const char* no_gpu_message = "no CUDA GPU here (or a CPU-only build): nothing to compare";

struct RunOutcome {
    std::vector<double> field;
    std::string data_details;
    std::string error;  // the InputError's message, where the run stopped on one
};

RunOutcome run_input(const std::string& input, solvers::BackendChoice choice) {
    framework::RunOptions options;
    options.backend = choice;
    options.quiet = true;
    options.write_output = false;
    framework::Simulation simulation(
        framework::parse_run_spec(framework::Config::from_string(input, "data-test")), options);
    RunOutcome outcome;
    outcome.data_details = simulation.integrator().data_details();
    try {
        simulation.run();
    } catch (const framework::InputError& e) {  // data not finite where the first step uses it
        outcome.error = e.what();
    } catch (const framework::DataNotFinite& e) {  // ... where a later step does
        outcome.error = e.what();
    }
    outcome.field = simulation.field();
    return outcome;
}

double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
    double largest = 0, difference = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        largest = std::max(largest, std::abs(a[i]));
        difference = std::max(difference, std::abs(a[i] - b[i]));
    }
    return difference / largest;
}

// An input of `problem` (its [problem] keys but the source) whose data exercise every part of
// the data term in 2D and 3D: a source, a Dirichlet side and its coupling, a Neumann and a Robin
// side, each a function of x, y, z and `t` (an expression put for t).
std::string data_term_input(const std::string& problem, const std::string& t) {
    std::string text = "[problem]\n" + problem + R"toml(source = "exp(-T)*sin(3*x)*cos(2*y) + 4*z*T"
[boundary]
left = "sin(5*T)*y + z"
right = { type = "neumann", value = "cos(3*T)*y" }
bottom = { type = "robin", coefficient = 2.0, value = "T*x + 1" }
all = "0.1*T*x"
[solver]
rtol = 1e-12
)toml";
    for (std::size_t at = 0; (at = text.find('T', at)) != std::string::npos; at += t.size()) {
        text.replace(at, 1, t);
    }
    return text;
}

// Runs `input` on the CUDA and on the CPU back-end: the data are formed on the device there and
// on the host here, and the final fields agree within `tolerance` relative to max |u| (printed,
// headed by `label`).
void expect_device_data_matches_host(const std::string& input, const std::string& label,
                                     double tolerance) {
    const RunOutcome gpu = run_input(input, solvers::BackendChoice::cuda);
    const RunOutcome cpu = run_input(input, solvers::BackendChoice::cpu);
    EXPECT_EQ(gpu.data_details.rfind("on the device", 0), 0u) << gpu.data_details;
    EXPECT_EQ(cpu.data_details.rfind("on the host", 0), 0u) << cpu.data_details;
    ASSERT_TRUE(gpu.error.empty() && cpu.error.empty()) << gpu.error << cpu.error;
    const double difference = relative_difference(cpu.field, gpu.field);
    std::cout << label << ": max |u_gpu - u_cpu| / max |u| = " << difference << "\n";
    EXPECT_LE(difference, tolerance);
}

// Each expression's CUDA function, compiled by NVRTC, gives muParser's values on 10^5 random
// points to within 4 units in the last place, or where the expression magnifies its functions'
// errors, within the difference the two math libraries' documented errors carry through it
// (Expression::agrees_at): the test the device's data term makes at 64 points of each
// expression before using it. The count beyond 4 ulps is printed.
TEST(DeviceExpressions, CompiledByNvrtcMatchMuParserToFourUlps) {
    if (no_gpu()) GTEST_SKIP() << no_gpu_message;
    const auto backend = solvers::make_backend(solvers::BackendChoice::cuda);
    constexpr std::size_t n = 100000;
    std::mt19937_64 random(20261125);
    std::uniform_real_distribution<double> uniform(-1.5, 1.5);
    std::vector<double> xs(n), ys(n), zs(n), ts(n);
    for (std::size_t k = 0; k < n; ++k) {
        xs[k] = uniform(random);
        ys[k] = uniform(random);
        zs[k] = uniform(random);
        ts[k] = std::abs(uniform(random));
    }
    using Array = solvers::Array<double>;
    const Array x = Array::from_host(backend, xs), y = Array::from_host(backend, ys),
                z = Array::from_host(backend, zs), t = Array::from_host(backend, ts);
    Array out(backend, n);
    struct Points {
        const double *x, *y, *z, *t;
        double* out;
        long long n;
    } points{x.data(), y.data(), z.data(), t.data(), out.data(), static_cast<long long>(n)};
    for (const char* text : test::expression_cases) {
        SCOPED_TRACE(text);
        const framework::Expression f(text, "k");
        const std::string source =
            std::string(framework::Expression::cuda_support()) + f.cuda_function("f") +
            "struct Points { const double *x, *y, *z, *t; double* out; long long n; };\n"
            "extern \"C\" __global__ void evaluate(Points p) {\n"
            "    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
            "    if (i < p.n) p.out[i] = f(p.x[i], p.y[i], p.z[i], p.t[i]);\n}\n";
        const solvers::RuntimeCompilation compiled = backend->compile_kernels(source, {"evaluate"});
        ASSERT_TRUE(compiled.compiled()) << compiled.note;
        compiled.kernels[0]->launch(n, &points);
        const std::vector<double> values = out.to_host();
        std::uint64_t largest = 0;
        int beyond_ulps = 0, beyond_bound = 0;
        for (std::size_t k = 0; k < n; ++k) {
            const double px = xs[k], py = ys[k], pz = zs[k], pt = ts[k];
            const std::uint64_t apart = framework::ulps_apart(f(px, py, pz, pt), values[k]);
            largest = std::max(largest, apart);
            if (apart > framework::Expression::agreement_ulps) ++beyond_ulps;
            if (!f.agrees_at(px, py, pz, pt, values[k], true) && ++beyond_bound <= 3) {
                ADD_FAILURE() << "at (" << px << ", " << py << ", " << pz << ", " << pt
                              << "): muParser " << f(px, py, pz, pt) << ", device " << values[k]
                              << ", bound " << f.cuda_difference_bound(px, py, pz, pt);
            }
        }
        std::cout << text << ": at most " << largest << " ulps from muParser; " << beyond_ulps
                  << " of " << n << " points beyond " << framework::Expression::agreement_ulps
                  << " ulps, " << beyond_bound << " beyond the libraries' bound\n";
        EXPECT_EQ(beyond_bound, 0);
    }
}

// Source NVRTC refuses, and a kernel the source lacks, give no kernel and the reason, never an
// exception: the caller runs its host code.
TEST(DeviceExpressions, SourceThatDoesNotCompileGivesTheReason) {
    if (no_gpu()) GTEST_SKIP() << no_gpu_message;
    const auto backend = solvers::make_backend(solvers::BackendChoice::cuda);
    const solvers::RuntimeCompilation refused =
        backend->compile_kernels("extern \"C\" __global__ void k(int p) { undeclared(p); }", {"k"});
    EXPECT_FALSE(refused.compiled());
    EXPECT_NE(refused.note.find("NVRTC"), std::string::npos) << refused.note;
    EXPECT_NE(refused.note.find("undeclared"), std::string::npos) << refused.note;
    const solvers::RuntimeCompilation missing =
        backend->compile_kernels("extern \"C\" __global__ void k(int) {}", {"k", "not_there"});
    EXPECT_FALSE(missing.compiled());
    EXPECT_NE(missing.note.find("not_there"), std::string::npos) << missing.note;
}

// Each back-end states the language its compile_kernels takes: CUDA C++ on CUDA, none on the
// CPU, which compiles nothing and says so (its callers run host code).
TEST(RuntimeKernels, EachBackEndStatesItsDialect) {
    const auto cpu = solvers::make_cpu_backend();
    EXPECT_EQ(cpu->kernel_dialect(), solvers::KernelDialect::none);
    const solvers::RuntimeCompilation none =
        cpu->compile_kernels("extern \"C\" __global__ void k(int) {}", {"k"});
    EXPECT_FALSE(none.compiled());
    EXPECT_EQ(none.note, "the cpu back-end runs host code");
    if (no_gpu()) GTEST_SKIP() << no_gpu_message;
    EXPECT_EQ(solvers::make_backend(solvers::BackendChoice::cuda)->kernel_dialect(),
              solvers::KernelDialect::cuda_cpp);
}

// The interop for a program's own CUDA work (the benchmark's cuSPARSE baseline): the CUDA
// back-end's stream, device and array pointers; another back-end is refused
// (std::invalid_argument, or NotCompiled in a build without CUDA).
TEST(CudaInterop, GivesTheCudaBackEndsStreamDeviceAndPointers) {
    const auto cpu = solvers::make_cpu_backend();
    if (solvers::cuda_compiled()) {
        EXPECT_THROW(solvers::cuda_stream(*cpu), std::invalid_argument);
        EXPECT_THROW(solvers::cuda_device(*cpu), std::invalid_argument);
    } else {
        EXPECT_THROW(solvers::cuda_stream(*cpu), solvers::NotCompiled);
    }
    solvers::Array<double> on_cpu(cpu, 4);
    EXPECT_ANY_THROW(solvers::cuda_pointer(on_cpu));
    if (no_gpu()) GTEST_SKIP() << no_gpu_message;
    const auto gpu = solvers::make_backend(solvers::BackendChoice::cuda);
    EXPECT_NE(solvers::cuda_stream(*gpu), nullptr);
    EXPECT_EQ(solvers::cuda_device(*gpu), 0);
    solvers::Array<double> on_gpu(gpu, 4);
    EXPECT_EQ(solvers::cuda_pointer(on_gpu), on_gpu.data());
}

// An expression the compiled program does not take (nested past its 200 levels) leaves the
// data term to the host, which the run says; the field is the host's.
TEST(DeviceDataTerm, ExpressionNotCompiledLeavesTheTermToTheHost) {
    if (no_gpu()) GTEST_SKIP() << no_gpu_message;
    std::string source = "x";
    for (int k = 0; k < 250; ++k) source = "(" + source + ")";
    const std::string input =
        "[problem]\ntype = \"heat\"\nalpha = 0.1\ninitial = \"0\"\n"
        "source = \"t*" +
        source +
        "\"\n[grid]\nnx = 17\nny = 17\n"
        "[boundary]\nall = \"0\"\n[time]\ndt = 0.01\nend = 0.05\n"
        "[solver]\nrtol = 1e-12\n";
    const RunOutcome gpu = run_input(input, solvers::BackendChoice::cuda);
    const RunOutcome cpu = run_input(input, solvers::BackendChoice::cpu);
    EXPECT_EQ(gpu.data_details.rfind("on the host: '", 0), 0u) << gpu.data_details;
    EXPECT_NE(gpu.data_details.find("muParser"), std::string::npos) << gpu.data_details;
    EXPECT_LE(relative_difference(cpu.field, gpu.field), 1e-9);
}

// The data term formed on the device (source, Dirichlet values and their coupling, Neumann
// and Robin terms, all depending on time; both time levels for Crank-Nicolson; explicit Euler's
// whole step) against the host's, in 2D and 3D: the fields agree to the solves' accuracy.
TEST(DeviceDataTerm, RunsMatchTheHostsDataTerm) {
    if (no_gpu()) GTEST_SKIP() << no_gpu_message;
    // Explicit Euler's step within its stability limit on both grids.
    const std::pair<const char*, const char*> schemes[] = {
        {"backward_euler", "0.01"}, {"crank_nicolson", "0.01"}, {"explicit_euler", "0.0005"}};
    for (const auto& [scheme, dt] : schemes) {
        for (const char* grid : {"nx = 41\nny = 33\n", "nx = 17\nny = 13\nnz = 11\n"}) {
            const std::string input =
                data_term_input("type = \"heat\"\nalpha = 0.1\ninitial = \"x*(1-y)\"\n", "t") +
                "[time]\nend = 0.05\nscheme = \"" + scheme + "\"\ndt = " + dt + "\n[grid]\n" + grid;
            SCOPED_TRACE(std::string(scheme) + ", " + grid);
            // rtol 1e-12 times cond ~ 1e2 per solve, as in the test below.
            expect_device_data_matches_host(
                input,
                scheme +
                    std::string(std::string(grid).find("nz") != std::string::npos ? " 3D" : " 2D"),
                1e-9);
        }
    }
}

// The steady solve's right-hand side formed on the device (the theta term at theta = 1, dt = 1
// without the state: source, Dirichlet values and their coupling, Neumann and Robin terms)
// against the host's, in 2D and 3D, with constant and varying coefficients: the fields agree to
// the solves' accuracy.
TEST(DeviceDataTerm, SteadyRunsMatchTheHostsRightHandSide) {
    if (no_gpu()) GTEST_SKIP() << no_gpu_message;
    for (const char* k : {"1", "1 + 9*(x > 0.5)*(y > 0.3)"}) {
        for (const char* grid : {"nx = 41\nny = 33\n", "nx = 17\nny = 13\nnz = 11\n"}) {
            // The data at t = 0.7 (constants for t): the steady solve's at its one time.
            const std::string input =
                data_term_input("type = \"poisson\"\nk = \"" + std::string(k) + "\"\n", "0.7") +
                "[grid]\n" + grid;
            const std::string label =
                std::string("steady, k = ") + k +
                (std::string(grid).find("nz") != std::string::npos ? ", 3D" : ", 2D");
            SCOPED_TRACE(label);
            // rtol 1e-12 times cond ~ 1e3 at these sizes.
            expect_device_data_matches_host(input, label, 1e-9);
        }
    }
}

// A source, a Dirichlet or a Neumann value that becomes infinite at t > 0.05 at the nodes
// x = 0.5 (or y = 0.5) stops the run on the device with the host's message: the key, the
// node's coordinates and the time.
TEST(DeviceDataTerm, NonFiniteDataStopsWithTheHostsMessage) {
    if (no_gpu()) GTEST_SKIP() << no_gpu_message;
    const char* cases[][2] = {
        {"source = \"1/(t > 0.05 ? x - 0.5 : 1)\"\n", "all = \"0\"\n"},
        {"source = \"1\"\n", "left = \"1/(t > 0.05 ? y - 0.5 : 1)\"\nall = \"0\"\n"},
        {"source = \"1\"\n",
         "top = { type = \"neumann\", value = \"1/(t > 0.05 ? x - 0.5 : 1)\" }\nall = \"0\"\n"},
    };
    const std::pair<const char*, const char*> schemes[] = {
        {"backward_euler", "0.02"}, {"crank_nicolson", "0.02"}, {"explicit_euler", "0.005"}};
    for (const auto& [scheme, dt] : schemes) {
        for (const auto& [source, boundary] : cases) {
            const std::string input =
                std::string("[problem]\ntype = \"heat\"\nalpha = 0.1\ninitial = \"0\"\n") + source +
                "[grid]\nnx = 21\nny = 21\n[boundary]\n" + boundary + "[time]\ndt = " + dt +
                "\nend = 0.2\nscheme = \"" + scheme + "\"\n";
            SCOPED_TRACE(input);
            const RunOutcome gpu = run_input(input, solvers::BackendChoice::cuda);
            const RunOutcome cpu = run_input(input, solvers::BackendChoice::cpu);
            EXPECT_EQ(gpu.data_details.rfind("on the device", 0), 0u) << gpu.data_details;
            EXPECT_NE(cpu.error, "");
            EXPECT_EQ(gpu.error, cpu.error);
            for (double u : gpu.field) ASSERT_TRUE(std::isfinite(u));
        }
    }
}

// The steady solve's data (at t = 0 alone) infinite at the nodes x = 0.5 (or y = 0.5): the run
// formed on the device stops with the host's message, before anything is solved.
TEST(DeviceDataTerm, SteadyNonFiniteDataStopsWithTheHostsMessage) {
    if (no_gpu()) GTEST_SKIP() << no_gpu_message;
    const char* cases[][2] = {
        {"source = \"1/(x - 0.5)\"\n", "all = \"0\"\n"},
        {"source = \"1\"\n", "left = \"1/(y - 0.5)\"\nall = \"0\"\n"},
        {"source = \"1\"\n",
         "top = { type = \"neumann\", value = \"1/(x - 0.5)\" }\nall = \"0\"\n"},
    };
    const auto input = [](const char* source, const char* boundary) {
        return std::string("[problem]\ntype = \"poisson\"\n") + source +
               "[grid]\nnx = 21\nny = 21\n[boundary]\n" + boundary;
    };
    // The refusal comes while the run is set up (the first step's data are checked there).
    const auto setup_error = [](const std::string& text, solvers::BackendChoice choice) {
        try {
            run_input(text, choice);
        } catch (const framework::InputError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    for (const auto& [source, boundary] : cases) {
        SCOPED_TRACE(input(source, boundary));
        // The same expressions made finite (x + 0.5 for x - 0.5): formed on the device.
        std::string finite = input(source, boundary);
        for (std::size_t at; (at = finite.find("- 0.5")) != std::string::npos;) finite[at] = '+';
        const RunOutcome fine = run_input(finite, solvers::BackendChoice::cuda);
        EXPECT_EQ(fine.data_details.rfind("on the device", 0), 0u) << fine.data_details;
        const std::string cpu = setup_error(input(source, boundary), solvers::BackendChoice::cpu);
        EXPECT_NE(cpu, "");
        EXPECT_EQ(setup_error(input(source, boundary), solvers::BackendChoice::cuda), cpu);
    }
}

TEST(CudaHeatSimulation, FinalFieldMatchesCpu) {
    if (no_gpu()) GTEST_SKIP() << no_gpu_message;
    const char* input = R"toml(
[problem]
type = "heat"
alpha = 0.05
initial = "exp(-50*((x-0.4)^2 + (y-0.5)^2))"
source = "sin(2*pi*t)*x*y"
[grid]
nx = 129
ny = 97
y = [0.0, 0.75]
[boundary]
left = "0.3*sin(pi*y/0.75)"
all = "0"
[time]
scheme = "crank_nicolson"
dt = 0.005
end = 0.25
[solver]
rtol = 1e-12
)toml";
    const auto on_cpu = run_input(input, solvers::BackendChoice::cpu).field;
    const auto on_gpu = run_input(input, solvers::BackendChoice::cuda).field;
    const double difference = relative_difference(on_cpu, on_gpu);
    std::cout << "heat 129x97 CN, 50 steps: max |u_gpu - u_cpu| / max |u| = " << difference << "\n";
    // Each step's solve is accurate to rtol 1e-12 times cond(M) ~ 1e2: the fields agree far
    // below the discretisation error.
    EXPECT_LE(difference, 1e-9);
}

}  // namespace
}  // namespace simrun
