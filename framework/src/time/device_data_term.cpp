#include "device_data_term.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <string_view>
#include <unordered_map>

namespace simrun::framework {

// The kernels around the generated functions: device_data_term_kernels.cuh, embedded at build
// time (framework/CMakeLists.txt).
extern const char* const device_data_term_kernels;

namespace {

// The kernels' one parameter, laid out alike here and in device_data_term_kernels.cuh: 8-byte
// members only, so neither side pads.
struct Parameters {
    const double* u;   // u^n, or null (the steady solve: no state term)
    const double* lu;  // L u^n, or null (theta = 1)
    double* rhs;
    const double* scale;
    const std::uint8_t* fixed;
    double lower[3];
    double spacing[3];
    std::int64_t points[3];
    std::int64_t n;
    double t_now;
    double t_next;
    double theta;
    double dt;
    double lu_weight;  // (1 - theta) dt
    const std::int64_t* dirichlet_nodes;
    const std::int64_t* dirichlet_sides;
    std::int64_t dirichlet_count;
    double* dirichlet_values;
    const std::int64_t* boundary_rows;
    const std::int64_t* row_terms;
    const std::int64_t* term_index;
    const double* term_weight;
    std::int64_t boundary_row_count;
    std::uint64_t* first_bad;
    const double* agreement_points;  // (x, y, z, t) per point
    double* agreement_values;        // per function, per point
    std::int64_t agreement_count;
    std::int64_t function_count;
};
static_assert(sizeof(Parameters) == 34 * 8);

// The lowest node of each kind whose value was not finite, in StepData::evaluate's order of
// stages at t_n then at t_{n+1}.
enum Record { source_now, ghost_now, source_next, ghost_next, dirichlet_next, records };

const std::vector<std::string> kernel_names = {"dirichlet_values", "free_nodes", "boundary_rows",
                                               "agreement"};

// The generated functions: the source, each side's value and the dispatch over sides.
std::string expression_functions(const Expression& source, const BoundaryConditions& boundary) {
    std::string text = Expression::cuda_support();
    text += source.cuda_function("source_value");
    std::string dispatch =
        "__device__ double side_value(long long side, double x, double y, double z, double t) "
        "{\n    switch (side) {\n";
    for (int s = 0; s < boundary.num_sides(); ++s) {
        const std::string name = "side_" + std::to_string(s);
        text += boundary.side(static_cast<Side>(s)).value.cuda_function(name);
        dispatch += "        case " + std::to_string(s) + ": return " + name + "(x, y, z, t);\n";
    }
    return text + dispatch + "    }\n    return 0.0;\n}\n";
}

// The first expression that has no CUDA function (neither compiled nor constant), or nullptr.
const Expression* uncompiled(const Expression& source, const BoundaryConditions& boundary) {
    const auto rendered = [](const Expression& e) { return e.compiled() || e.is_constant(); };
    if (!rendered(source)) return &source;
    for (int s = 0; s < boundary.num_sides(); ++s) {
        const Expression& value = boundary.side(static_cast<Side>(s)).value;
        if (!rendered(value)) return &value;
    }
    return nullptr;
}

std::string upper_case(std::string_view word) {
    std::string upper(word);
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return upper;
}

template <typename T>
solvers::Array<T> upload(const std::shared_ptr<const solvers::Backend>& backend,
                         const std::vector<T>& values) {
    // An empty list still gets one element, so that every pointer the kernels take is valid.
    if (values.empty()) return solvers::Array<T>(backend, 1);
    return solvers::Array<T>::from_host(backend, values);
}

}  // namespace

struct DeviceDataTerm::Kernels {
    std::shared_ptr<const solvers::RuntimeKernel> dirichlet_values, free_nodes, boundary_rows,
        agreement;
    Parameters parameters{};
};

std::unique_ptr<DeviceDataTerm> DeviceDataTerm::make(
    const Grid& grid, const Problem& problem, const BoundaryConditions& boundary,
    const SpatialOperator& op, std::shared_ptr<const solvers::Backend> backend, double theta,
    double dt, bool scaled, std::string& note, SetupTimes& setup) {
    if (backend->kernel_dialect() != solvers::KernelDialect::cuda_cpp) {
        note = "on the host (the " + upper_case(solvers::to_string(backend->kind())) + " back-end)";
        return nullptr;
    }
    const Expression* source = problem.source_expression();
    if (source == nullptr) {
        note = "on the host: the problem's source is not one expression";
        return nullptr;
    }
    if (const Expression* left = uncompiled(*source, boundary)) {
        note = "on the host: '" + left->text() + "' is evaluated by muParser";
        return nullptr;
    }
    const std::string text = expression_functions(*source, boundary) + device_data_term_kernels;
    const auto start = std::chrono::steady_clock::now();
    const solvers::RuntimeCompilation compilation = backend->compile_kernels(text, kernel_names);
    setup.compilation = compilation.seconds;
    setup.compilation_cached = compilation.cached;
    if (!compilation.compiled()) {
        note = "on the host: " + compilation.note;
        return nullptr;
    }
    std::unique_ptr<DeviceDataTerm> term(
        new DeviceDataTerm(grid, problem, boundary, op, backend, theta, dt, scaled));
    Kernels& kernels = *term->kernels_;
    kernels.dirichlet_values = compilation.kernels[0];
    kernels.free_nodes = compilation.kernels[1];
    kernels.boundary_rows = compilation.kernels[2];
    kernels.agreement = compilation.kernels[3];
    // Each expression's device values against muParser's before any is used.
    const auto points = Expression::agreement_points();
    const auto count = static_cast<std::int64_t>(points.size());
    const std::int64_t functions = 1 + boundary.num_sides();
    std::vector<double> flat(4 * points.size());
    for (std::size_t k = 0; k < points.size(); ++k) {
        std::copy(points[k].begin(), points[k].end(), flat.begin() + 4 * static_cast<long>(k));
    }
    const auto device_points = solvers::Array<double>::from_host(backend, flat);
    solvers::Array<double> device_values(backend, static_cast<std::size_t>(functions * count));
    Parameters parameters = kernels.parameters;
    parameters.agreement_points = device_points.data();
    parameters.agreement_values = device_values.data();
    parameters.agreement_count = count;
    parameters.function_count = functions;
    kernels.agreement->launch(static_cast<std::size_t>(functions * count), &parameters);
    const std::vector<double> values = device_values.to_host();
    for (std::int64_t f = 0; f < functions; ++f) {
        const Expression& expression =
            f == 0 ? *source : boundary.side(static_cast<Side>(f - 1)).value;
        const std::span<const double> at(values.data() + f * count,
                                         static_cast<std::size_t>(count));
        if (!expression.agrees_at_points(at, true)) {
            note = "on the host: the device's values of '" + expression.text() +
                   "' differ from muParser's by more than the math libraries' errors allow";
            return nullptr;
        }
    }
    char text_note[200];
    std::snprintf(
        text_note, sizeof text_note, "on the device each step (%s in %.2f s)",
        compilation.note.c_str(),
        compilation.seconds > 0
            ? std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
            : 0.0);
    note = text_note;
    if (compilation.seconds == 0) note += ", compiled earlier in this run";
    return term;
}

DeviceDataTerm::DeviceDataTerm(const Grid& grid, const Problem& problem,
                               const BoundaryConditions& boundary, const SpatialOperator& op,
                               std::shared_ptr<const solvers::Backend> backend, double theta,
                               double dt, bool scaled)
    : grid_(grid),
      problem_(problem),
      boundary_(boundary),
      op_(op),
      backend_(std::move(backend)),
      theta_(theta),
      dt_(dt),
      kernels_(std::make_unique<Kernels>()) {
    const std::vector<std::uint8_t>& fixed = op.dirichlet();
    const auto n = static_cast<std::int64_t>(fixed.size());
    scale_ = upload(backend_, scaled ? op.row_scale() : std::vector<double>(fixed.size(), 1.0));
    fixed_ = upload(backend_, fixed);
    // The Dirichlet nodes in node order (found on the grid's sides), each with its side, and
    // their positions for the couplings.
    std::vector<std::vector<std::int64_t>> found(static_cast<std::size_t>(omp_get_max_threads()));
    const int blocks = for_each_side_node(
        grid, op.box(), [&](std::int64_t i, std::int64_t j, std::int64_t k, int block) {
            const std::int64_t node = op.box().index(i, j, k);
            if (fixed[static_cast<std::size_t>(node)]) {
                found[static_cast<std::size_t>(block)].push_back(node);
            }
        });
    std::vector<std::int64_t> nodes, sides;
    std::unordered_map<std::int64_t, std::int64_t> position;
    const std::int64_t nx = grid.points(0), ny = grid.points(1);
    for (int block = 0; block < blocks; ++block) {
        for (const std::int64_t node : found[static_cast<std::size_t>(block)]) {
            position.emplace(node, static_cast<std::int64_t>(nodes.size()));
            nodes.push_back(node);
            sides.push_back(
                boundary.dirichlet_side(grid, node % nx, (node / nx) % ny, node / (nx * ny)));
        }
    }
    // Each boundary row's terms: couplings (position k) and ghost terms (-1 - side).
    struct Term {
        std::int64_t row, index;
        double weight;
    };
    std::vector<Term> terms;
    for (const auto& c : op.couplings()) terms.push_back({c.row, position.at(c.column), c.value});
    for (const auto& g : op.ghost_terms()) {
        // A Dirichlet node takes g whatever its row would have held (as StepData does).
        if (!fixed[static_cast<std::size_t>(g.node)]) {
            terms.push_back({g.node, -1 - g.side, g.weight});
        }
    }
    std::stable_sort(terms.begin(), terms.end(),
                     [](const Term& a, const Term& b) { return a.row < b.row; });
    std::vector<std::int64_t> rows, row_terms{0}, index;
    std::vector<double> weight;
    for (std::size_t t = 0; t < terms.size(); ++t) {
        if (t == 0 || terms[t].row != terms[t - 1].row) {
            if (t > 0) row_terms.push_back(static_cast<std::int64_t>(t));
            rows.push_back(terms[t].row);
        }
        index.push_back(terms[t].index);
        weight.push_back(terms[t].weight);
    }
    if (!terms.empty()) row_terms.push_back(static_cast<std::int64_t>(terms.size()));
    dirichlet_nodes_ = upload(backend_, nodes);
    dirichlet_sides_ = upload(backend_, sides);
    dirichlet_values_ = solvers::Array<double>(backend_, std::max<std::size_t>(nodes.size(), 1));
    boundary_rows_ = upload(backend_, rows);
    row_terms_ = upload(backend_, row_terms);
    term_index_ = upload(backend_, index);
    term_weight_ = upload(backend_, weight);
    first_bad_ = upload(backend_, std::vector<std::uint64_t>(records, ~std::uint64_t{0}));
    first_bad_host_ =
        static_cast<std::uint64_t*>(backend_->allocate_host(records * sizeof(std::uint64_t)));
    std::fill(first_bad_host_, first_bad_host_ + records, ~std::uint64_t{0});

    Parameters& p = kernels_->parameters;
    p.scale = scale_.data();
    p.fixed = fixed_.data();
    for (int a = 0; a < 3; ++a) {
        p.lower[a] = grid.origin()[static_cast<std::size_t>(a)];
        p.spacing[a] = grid.spacing()[static_cast<std::size_t>(a)];
        p.points[a] = grid.points(a);
    }
    p.n = n;
    p.theta = theta_;
    p.dt = dt_;
    p.lu_weight = (1.0 - theta_) * dt_;
    p.dirichlet_nodes = dirichlet_nodes_.data();
    p.dirichlet_sides = dirichlet_sides_.data();
    p.dirichlet_count = static_cast<std::int64_t>(nodes.size());
    p.dirichlet_values = dirichlet_values_.data();
    p.boundary_rows = boundary_rows_.data();
    p.row_terms = row_terms_.data();
    p.term_index = term_index_.data();
    p.term_weight = term_weight_.data();
    p.boundary_row_count = static_cast<std::int64_t>(rows.size());
    p.first_bad = first_bad_.data();
}

DeviceDataTerm::~DeviceDataTerm() { backend_->release_host(first_bad_host_); }

void DeviceDataTerm::form(double t_now, double t_next, const solvers::Array<double>* u,
                          const solvers::Array<double>* lu, solvers::Array<double>& rhs) {
    Parameters& p = kernels_->parameters;
    p.u = u != nullptr ? u->data() : nullptr;
    p.lu = lu != nullptr ? lu->data() : nullptr;
    p.rhs = rhs.data();
    p.t_now = t_now;
    p.t_next = t_next;
    kernels_->dirichlet_values->launch(static_cast<std::size_t>(p.dirichlet_count), &p);
    kernels_->free_nodes->launch(static_cast<std::size_t>(p.n), &p);
    kernels_->boundary_rows->launch(static_cast<std::size_t>(p.boundary_row_count), &p);
    backend_->copy_to_host_async(first_bad_host_, first_bad_.data(),
                                 records * sizeof(std::uint64_t));
}

void DeviceDataTerm::check_step(double t_now, double t_next, const solvers::Array<double>* u,
                                solvers::Array<double>& scratch) {
    form(t_now, t_next, u, nullptr, scratch);
    backend_->synchronize();
    check(t_now, t_next);
}

void DeviceDataTerm::check(double t_now, double t_next) const {
    const Box box = grid_.box();
    const std::int64_t nx = grid_.points(0), ny = grid_.points(1);
    const auto at = [&](std::uint64_t node, auto&& value) {
        const auto i = static_cast<std::int64_t>(node);
        return value(grid_.coordinate(0, i % nx), grid_.coordinate(1, (i / nx) % ny),
                     grid_.coordinate(2, i / (nx * ny)));
    };
    for (int r = 0; r < records; ++r) {
        const std::uint64_t node = first_bad_host_[r];
        if (node == ~std::uint64_t{0}) continue;
        const double t = r == source_now || r == ghost_now ? t_now : t_next;
        // The value muParser gives there, for the message.
        double value = 0.0;
        if (r == source_now || r == source_next) {
            value = at(node, [&](double x, double y, double z) {
                return (*problem_.source_expression())(x, y, z, t);
            });
            throw_not_finite(grid_, box, static_cast<std::int64_t>(node), value, t,
                             StepDataError::source, "problem.source", "the source");
        }
        if (r == dirichlet_next) {
            value = at(node, [&](double x, double y, double z) {
                const auto i = static_cast<std::int64_t>(node);
                const int side =
                    boundary_.dirichlet_side(grid_, i % nx, (i / nx) % ny, i / (nx * ny));
                return boundary_.side(static_cast<Side>(side)).value(x, y, z, t);
            });
            throw_not_finite(grid_, box, static_cast<std::int64_t>(node), value, t,
                             StepDataError::dirichlet_value, "boundary",
                             "a Dirichlet boundary value");
        }
        for (const auto& term : op_.ghost_terms()) {
            if (term.node != static_cast<std::int64_t>(node)) continue;
            value += term.weight * at(node, [&](double x, double y, double z) {
                         return boundary_.side(static_cast<Side>(term.side)).value(x, y, z, t);
                     });
        }
        throw_not_finite(grid_, box, static_cast<std::int64_t>(node), value, t,
                         StepDataError::ghost_value, "boundary",
                         "a Neumann or Robin boundary value");
    }
}

}  // namespace simrun::framework
