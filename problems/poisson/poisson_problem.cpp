// poisson: -div(k grad u) = f, steady; k a constant or an expression of x, y, z (a variable k
// gives a DIA matrix with varying entries). Registered as problem type "poisson".
//
// [problem] keys: type = "poisson", k (number or expression, default 1), source (expression,
// default "0"), exact (optional).
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <sstream>
#include <vector>

#include "problems/problem_support.hpp"
#include "simrun/framework/config/input_error.hpp"
#include "simrun/framework/discretisation/grid_loops.hpp"
#include "simrun/framework/discretisation/grid_sampling.hpp"
#include "simrun/framework/problem/problem_registry.hpp"

namespace simrun::problems {
namespace {

using framework::ConfigSection;
using framework::Expression;
using framework::Grid;

// The k this thread evaluated last at the plus-x face of a node and at the plus-y face of each
// i, by the faces' coordinates to the bit: assembly asks a line's stencils in order and the
// lines of a block in order, so a node's minus-x face is often the node before it's plus-x face
// and its minus-y face the line before it's plus-y face at the same i. Found here (the same
// point, so the same value) they are not evaluated again. Tagged with the problem's serial
// number: another problem's values are never taken.
class FaceMemo {
public:
    static FaceMemo& of_this_thread(std::uint64_t owner) {
        thread_local FaceMemo memo;
        if (memo.owner_ != owner) memo = FaceMemo(owner);
        return memo;
    }

    std::optional<double> find(int axis, std::int64_t i, const double (&face)[3]) const {
        const Face* kept = axis == 0 ? &x_face_
                           : axis == 1 && i < static_cast<std::int64_t>(y_faces_.size())
                               ? &y_faces_[static_cast<std::size_t>(i)]
                               : nullptr;
        if (kept == nullptr || std::memcmp(kept->at, face, sizeof face) != 0) return std::nullopt;
        return kept->k;
    }
    void keep(int axis, std::int64_t i, const double (&face)[3], double k) {
        if (axis > 1) return;
        if (axis == 1 && i >= static_cast<std::int64_t>(y_faces_.size())) {
            y_faces_.resize(static_cast<std::size_t>(i) + 1);
        }
        Face& kept = axis == 0 ? x_face_ : y_faces_[static_cast<std::size_t>(i)];
        std::memcpy(kept.at, face, sizeof face);
        kept.k = k;
    }

private:
    struct Face {  // no point's coordinates until kept (NaN matches none to the bit)
        double at[3] = {std::numeric_limits<double>::quiet_NaN(),
                        std::numeric_limits<double>::quiet_NaN(),
                        std::numeric_limits<double>::quiet_NaN()};
        double k = 0.0;
    };
    explicit FaceMemo(std::uint64_t owner = 0) : owner_(owner) {}

    std::uint64_t owner_;
    Face x_face_;
    std::vector<Face> y_faces_;
};

class PoissonProblem final : public framework::Problem {
public:
    explicit PoissonProblem(const ConfigSection& section)
        : section_(section),
          k_(read_coefficient(section, "k", 1.0)),
          source_(read_expression(section, "source", "0")),
          exact_(read_exact(section)) {
        if (k_.depends_on_time()) section.fail("k", "the coefficient k may not depend on t");
    }

    // k must be positive at every face the stencil uses (ghost faces included); the first node
    // of `box` in its order that breaks it is reported. Cost: the stencil of every node of the
    // box, in parallel (k at about d + 1 faces each in 2D, 2 d - 1 in 3D: FaceMemo); of one node
    // where k is a constant.
    void check_stencil(const Grid& grid, const framework::Box& box) const override {
        // A constant k makes every node's stencil the same: the box's first node stands for all.
        if (k_.is_constant() && !box.empty()) {
            check_node(grid, box.lower[0], box.lower[1], box.lower[2]);
            return;
        }
        // The nodes in line order: a face the node or line before shares is not evaluated again
        // (FaceMemo).
        std::vector<std::int64_t> first_bad(static_cast<std::size_t>(omp_get_max_threads()), -1);
        const int blocks = framework::for_each_node_in_blocks(
            box, [&](std::int64_t i, std::int64_t j, std::int64_t k, int block) {
                std::int64_t& bad = first_bad[static_cast<std::size_t>(block)];
                if (bad < 0 && !valid(grid, stencil(grid, i, j, k))) bad = grid.index(i, j, k);
            });
        for (int block = 0; block < blocks; ++block) {
            const std::int64_t bad = first_bad[static_cast<std::size_t>(block)];
            if (bad < 0) continue;
            const std::int64_t i = bad % grid.points(0);
            const std::int64_t j = bad / grid.points(0) % grid.points(1);
            const std::int64_t k = bad / grid.points(0) / grid.points(1);
            fail_near(grid, i, j, k);
        }
    }

    std::string description() const override {
        return "poisson: -div((" + k_.text() + ") grad u) = " + source_.text();
    }
    bool allows_transient() const override { return false; }

    // div(k grad u) with k at the faces x +- h/2: (k_+ (u_+ - u) - k_- (u - u_-)) / h^2.
    framework::StencilCoefficients stencil(const Grid& grid, std::int64_t i, std::int64_t j,
                                           std::int64_t k) const override {
        framework::StencilCoefficients s;
        if (k_.is_constant()) {  // k at every face: the same value, evaluated nowhere
            const double value = k_(0.0, 0.0, 0.0, 0.0);
            for (int a = 0; a < grid.dimension(); ++a) {
                const double h = grid.spacing(a);
                s.minus[a] = value / (h * h);
                s.plus[a] = value / (h * h);
                s.centre -= s.minus[a] + s.plus[a];
            }
            return s;
        }
        const double x[3] = {grid.coordinate(0, i), grid.coordinate(1, j), grid.coordinate(2, k)};
        FaceMemo& memo = FaceMemo::of_this_thread(serial_);
        for (int a = 0; a < grid.dimension(); ++a) {
            const double h = grid.spacing(a);
            double face[3] = {x[0], x[1], x[2]};
            face[a] = x[a] - 0.5 * h;
            const std::optional<double> kept = memo.find(a, i, face);
            s.minus[a] = (kept ? *kept : k_(face[0], face[1], face[2], 0.0)) / (h * h);
            face[a] = x[a] + 0.5 * h;
            const double k_plus = k_(face[0], face[1], face[2], 0.0);
            memo.keep(a, i, face, k_plus);
            s.plus[a] = k_plus / (h * h);
            s.centre -= s.minus[a] + s.plus[a];
        }
        return s;
    }

    void initial_condition(const Grid&, const framework::Box&, std::span<double> u) const override {
        std::fill(u.begin(), u.end(), 0.0);
    }
    void source(const Grid& grid, const framework::Box& box, double t,
                std::span<double> f) const override {
        framework::sample(grid, box, source_, t, f);
    }
    bool source_depends_on_time() const override { return false; }
    const Expression* source_expression() const override { return &source_; }
    const Expression* exact_solution() const override { return exact_ ? &*exact_ : nullptr; }

private:
    // Throws check_stencil's error where the stencil at (i, j, k) is not valid.
    void check_node(const Grid& grid, std::int64_t i, std::int64_t j, std::int64_t k) const {
        if (!valid(grid, stencil(grid, i, j, k))) fail_near(grid, i, j, k);
    }
    // k positive and finite at both faces along every axis.
    static bool valid(const Grid& grid, const framework::StencilCoefficients& s) {
        for (int a = 0; a < grid.dimension(); ++a) {
            if (!(s.minus[a] > 0.0) || !(s.plus[a] > 0.0) ||
                !std::isfinite(s.minus[a] + s.plus[a])) {
                return false;
            }
        }
        return true;
    }
    [[noreturn]] void fail_near(const Grid& grid, std::int64_t i, std::int64_t j,
                                std::int64_t k) const {
        section_.fail("k", "k must be positive and finite; it is not near (" +
                               std::to_string(grid.coordinate(0, i)) + ", " +
                               std::to_string(grid.coordinate(1, j)) + ", " +
                               std::to_string(grid.coordinate(2, k)) + ")");
    }

    static std::uint64_t next_serial() {
        static std::atomic<std::uint64_t> serial{0};
        return ++serial;
    }

    std::uint64_t serial_ = next_serial();  // this problem's, for FaceMemo
    ConfigSection section_;                 // where k was given, for check_stencil's message
    Expression k_;
    Expression source_;
    std::optional<Expression> exact_;
};

std::unique_ptr<framework::Problem> make_poisson(const ConfigSection& section, const Grid&) {
    return std::make_unique<PoissonProblem>(section);
}

SIMRUN_REGISTER_PROBLEM("poisson", make_poisson);

}  // namespace
}  // namespace simrun::problems
