#include "expression_cuda_bound.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include "expression_functions.hpp"

namespace simrun::framework::expression {
namespace {

using Op = Program::Op;
using Instruction = Program::Instruction;

constexpr double unit_roundoff = 0x1p-53;  // half an ulp of 1

// An ulp of v, taken as 2^-52 |v| (at least the spacing of the doubles at v), or the smallest
// subnormal.
double ulp_of(double v) {
    return std::max(2 * unit_roundoff * std::abs(v), std::numeric_limits<double>::denorm_min());
}

// Where inputs differ, the operation's own rounding may differ too: half an ulp more.
double rounded(double bound, double value) { return bound > 0 ? bound + 0.5 * ulp_of(value) : 0.0; }

// A step (a comparison, a truth value, sign, rint) may flip where its input is within its
// bound of the step.
bool may_flip(double distance, double bound) { return bound > 0 && std::abs(distance) <= bound; }

// A binary operation's host value of a and b, and the bound on its device value's distance
// from it where a and b are within ea and eb of theirs.
std::pair<double, double> binary_bound(Op op, double a, double b, double ea, double eb) {
    double value = 0, bound = 0;
    switch (op) {
        case Op::add:
        case Op::subtract:
            value = op == Op::add ? a + b : a - b;
            bound = rounded(ea + eb, value);
            break;
        case Op::multiply:
            value = a * b;
            bound = rounded(std::abs(b) * ea + std::abs(a) * eb + ea * eb, value);
            break;
        case Op::divide:
            value = a / b;
            bound = eb >= std::abs(b)
                        ? std::numeric_limits<double>::infinity()
                        : rounded((ea + std::abs(value) * eb) / (std::abs(b) - eb), value);
            break;
        case Op::power:
            value = std::pow(a, b);
            // a^2 is rendered as a * a, the correctly rounded square, which glibc's pow (within
            // 0.52 ulps) misses by an ulp at some 0.1% of points.
            if (b == 2.0 && eb == 0) {
                bound = rounded(2 * std::abs(a) * ea + ea * ea, value) + ulp_of(value);
            } else {
                bound = std::abs(b * std::pow(a, b - 1)) * ea +
                        std::abs(std::log(std::abs(a)) * value) * eb + (2 + 1) * ulp_of(value);
            }
            break;
        case Op::atan2:
            value = std::atan2(a, b);
            bound =
                (std::abs(b) * ea + std::abs(a) * eb) / (a * a + b * b) + (2 + 1) * ulp_of(value);
            break;
        case Op::logical_and:
        case Op::logical_or:
            value = op == Op::logical_and ? double(a != 0 && b != 0) : double(a != 0 || b != 0);
            bound = may_flip(a, ea) || may_flip(b, eb) ? 1 : 0;
            break;
        default: {  // comparisons
            const bool result = op == Op::less            ? a < b
                                : op == Op::greater       ? a > b
                                : op == Op::less_equal    ? a <= b
                                : op == Op::greater_equal ? a >= b
                                : op == Op::equal         ? a == b
                                                          : a != b;
            value = result;
            bound = may_flip(a - b, ea + eb) ? 1 : 0;
            break;
        }
    }
    if (std::isnan(bound)) bound = std::numeric_limits<double>::infinity();
    return {value, bound};
}

// The program run at one point, each slot holding the host's value and a bound on how far the
// device's may be from it.
class BoundMachine {
public:
    BoundMachine(const double (&in)[4], int slots)
        : in_(in), v_(static_cast<std::size_t>(slots)), e_(v_.size()) {}

    double bound() const { return e_[0]; }

    // The operations, as visit() calls them.
    void constant(const Instruction& instruction) { push(instruction.value); }

    void variable(const Instruction& instruction) {
        const double a = in_[instruction.index];
        const int factors = instruction.op == Op::variable ? 1 : instruction.count;
        double value = a;
        for (int f = 1; f < factors; ++f) value *= a;
        push(value);
    }

    void negate() { v_[at(top_)] = -v_[at(top_)]; }

    void function(const Instruction& instruction) {
        const NamedFunction& f = unary_functions[static_cast<std::size_t>(instruction.index)];
        const double a = v_[at(top_)], ea = e_[at(top_)];
        const double value = f.f(a);
        double bound = 0;
        if (f.derivative != nullptr) {
            bound = std::abs(f.derivative(a)) * ea + f.difference_ulps * ulp_of(value);
            if (!std::isfinite(bound)) bound = std::numeric_limits<double>::infinity();
        } else if (f.f == sign_of) {  // a step at 0
            bound = may_flip(a, ea) ? 1 : 0;
        } else {  // rint: a step at each half-integer
            bound = may_flip(a + 0.5 - std::round(a + 0.5), ea) ? 1 : 0;
        }
        v_[at(top_)] = value;
        e_[at(top_)] = bound;
    }

    void select() {
        top_ -= 2;
        const double c = v_[at(top_)], a = v_[at(top_ + 1)], b = v_[at(top_ + 2)];
        const double ec = e_[at(top_)], ea = e_[at(top_ + 1)], eb = e_[at(top_ + 2)];
        v_[at(top_)] = c != 0 ? a : b;
        e_[at(top_)] = may_flip(c, ec) ? std::abs(a - b) + std::max(ea, eb) : c != 0 ? ea : eb;
    }

    void variadic(const Instruction& instruction) {
        const int first = top_ - instruction.count + 1;
        const bool adds = instruction.op == Op::sum || instruction.op == Op::average;
        double value = adds ? 0.0 : v_[at(first)], bound = 0;
        for (int a = 0; a < instruction.count; ++a) {
            const double w = v_[at(first + a)];
            if (adds) {
                value += w;
                bound = rounded(bound + e_[at(first + a)], value);
            } else {
                if (a > 0) {
                    value = instruction.op == Op::minimum ? std::min(value, w) : std::max(value, w);
                }
                bound = std::max(bound, e_[at(first + a)]);
            }
        }
        if (instruction.op == Op::average) {
            value /= static_cast<double>(instruction.count);
            bound = rounded(bound / static_cast<double>(instruction.count), value);
        }
        top_ = first;
        v_[at(top_)] = value;
        e_[at(top_)] = bound;
    }

    void binary(Op op) {
        --top_;
        const auto [value, bound] =
            binary_bound(op, v_[at(top_)], v_[at(top_ + 1)], e_[at(top_)], e_[at(top_ + 1)]);
        v_[at(top_)] = value;
        e_[at(top_)] = bound;
    }

private:
    static std::size_t at(int s) { return static_cast<std::size_t>(s); }
    // A value the device computes exactly as the host does.
    void push(double value) {
        ++top_;
        v_[at(top_)] = value;
        e_[at(top_)] = 0;
    }

    const double (&in_)[4];
    std::vector<double> v_, e_;
    int top_ = -1;
};

}  // namespace

double cuda_difference_bound(const Program& program, double x, double y, double z, double t) {
    const double in[4] = {x, y, z, t};
    BoundMachine machine(in, std::max(program.depth, 1));
    for (const Instruction& instruction : program.code) visit(instruction, machine);
    return machine.bound();
}

}  // namespace simrun::framework::expression
