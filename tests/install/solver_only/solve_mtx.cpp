// solve_mtx A.mtx: solves A x = A * ones with simrun's automatic choice on the CPU back-end and
// prints the plan, the status and max |x - 1|; exit 0 when converged with every |x - 1| < 1e-6.
#include <cmath>
#include <cstdio>
#include <simrun/solvers/base/array.hpp>
#include <simrun/solvers/base/backend.hpp>
#include <simrun/solvers/matrices/conversions.hpp>
#include <simrun/solvers/matrices/matrix_market.hpp>
#include <simrun/solvers/selection/linear_system_solver.hpp>
#include <simrun/solvers/selection/matrix_properties.hpp>
#include <simrun/version.hpp>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    namespace s = simrun::solvers;
    if (argc != 2) {
        std::fprintf(stderr, "usage: solve_mtx A.mtx\n");
        return 2;
    }
    const s::CsrData<double> a = s::to_csr(s::read_matrix_market(argv[1]));
    std::vector<double> b(static_cast<std::size_t>(a.rows), 0.0);
    for (std::int32_t i = 0; i < a.rows; ++i) {
        for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) b[i] += a.values[k];
    }
    const auto backend = s::make_backend(s::BackendChoice::cpu);
    const s::SolverPlan plan = s::plan_solver(s::analyze(a), s::SolverRequest{});
    s::MethodParameters parameters;
    parameters.criteria.relative_tolerance = 1e-10;
    parameters.criteria.max_iterations = 10000;
    const s::LinearSystemSolver<double> solver(backend, a, plan, parameters);
    const auto device_b = s::Array<double>::from_host(backend, b);
    auto x = s::Array<double>::from_host(backend, std::vector<double>(b.size(), 0.0));
    const s::SolveReport report = solver.solve(device_b, x);
    double error = 0;
    for (const double value : x.to_host()) error = std::fmax(error, std::fabs(value - 1.0));
    std::printf("simrun %s: %s; %s after %lld iterations; max |x - 1| = %.3e\n",
                SIMRUN_VERSION_STRING, plan.first.reason.c_str(),
                std::string(s::to_string(report.result().status)).c_str(),
                static_cast<long long>(report.total_iterations()), error);
    return report.converged() && error < 1e-6 ? 0 : 1;
}
