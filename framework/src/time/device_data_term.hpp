#pragma once
// The right-hand side of a theta step formed on a back-end that compiles kernels at run time
// (CUDA, by NVRTC): the source and boundary expressions become device functions, and
//   rhs = S (u^n + (1 - theta) dt L u^n) + S dt (theta (F + B + L G)^{n+1} + (1 - theta) (F + B)^n)
// at free nodes (F the source, B the Neumann and Robin ghost terms, L G the coupling to the
// Dirichlet values; S the row scale, or 1 where not `scaled`), rhs = G^{n+1} at Dirichlet nodes,
// is formed on the device each step (theta = 0 unscaled: explicit Euler's u^{n+1} itself; theta
// = 1, dt = 1 without u: the steady solve's S (F + B + L G)): one
// pass over the nodes and two over the boundary's, so nothing of size n crosses the bus. A value
// that is not finite is recorded on the device (the lowest node of each kind) and fetched with
// the solve's own wait; check() then raises it as StepData::evaluate would.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "grid_integrator.hpp"
#include "simrun/solvers/base/array.hpp"

namespace simrun::framework {

class DeviceDataTerm {
public:
    // The term for this grid and operator, or nullptr with the reason in `note` where the
    // back-end cannot compile kernels (the CPU, no NVRTC), the problem's source is not one
    // expression, an expression is not compiled, or the device's values of an expression differ
    // from muParser's by more than 4 units in the last place at Expression::agreement_points.
    // On success `note` says how it was compiled and how long that took. The compilation's
    // seconds (zero where nothing was compiled) go to setup.compilation.
    static std::unique_ptr<DeviceDataTerm> make(const Grid& grid, const Problem& problem,
                                                const BoundaryConditions& boundary,
                                                const SpatialOperator& op,
                                                std::shared_ptr<const solvers::Backend> backend,
                                                double theta, double dt, bool scaled,
                                                std::string& note, SetupTimes& setup);

    // Issues the formation of rhs for the step from t_now to t_next (asynchronous); lu = L u^n,
    // or nullptr when theta = 1; u = u^n, or nullptr for no state term (the steady solve's
    // right-hand side). The finiteness records of the step are fetched on the way.
    void form(double t_now, double t_next, const solvers::Array<double>* u,
              const solvers::Array<double>* lu, solvers::Array<double>& rhs);
    // Once the back-end has synchronised after form(): throws StepDataError naming the key, the
    // node's coordinates and the time of the first value form() met that is not finite (in
    // StepData::evaluate's order of stages).
    void check(double t_now, double t_next) const;
    // form() (without L u^n, into `scratch`), the back-end's wait and check(): what the step
    // from t_now to t_next will throw for its data, thrown before it is taken (a run checks the
    // data of its first step before writing the step it starts from).
    void check_step(double t_now, double t_next, const solvers::Array<double>* u,
                    solvers::Array<double>& scratch);

    ~DeviceDataTerm();
    DeviceDataTerm(const DeviceDataTerm&) = delete;
    DeviceDataTerm& operator=(const DeviceDataTerm&) = delete;

private:
    struct Kernels;
    DeviceDataTerm(const Grid& grid, const Problem& problem, const BoundaryConditions& boundary,
                   const SpatialOperator& op, std::shared_ptr<const solvers::Backend> backend,
                   double theta, double dt, bool scaled);

    const Grid& grid_;
    const Problem& problem_;
    const BoundaryConditions& boundary_;
    const SpatialOperator& op_;
    std::shared_ptr<const solvers::Backend> backend_;
    double theta_;
    double dt_;
    std::unique_ptr<Kernels> kernels_;
    solvers::Array<double> scale_;
    solvers::Array<std::uint8_t> fixed_;
    // The Dirichlet nodes and the side giving each one's value; g^{n+1} there.
    solvers::Array<std::int64_t> dirichlet_nodes_, dirichlet_sides_;
    solvers::Array<double> dirichlet_values_;
    // The rows with boundary terms, each row's terms (CSR): a coupling to the Dirichlet value
    // at position k (index k >= 0) or a ghost term of side s (index -1 - s), and its weight.
    solvers::Array<std::int64_t> boundary_rows_, row_terms_, term_index_;
    solvers::Array<double> term_weight_;
    // The lowest node at which a source, ghost or Dirichlet value was not finite (max if none).
    solvers::Array<std::uint64_t> first_bad_;
    std::uint64_t* first_bad_host_ = nullptr;  // pinned, fetched each step
};

}  // namespace simrun::framework
