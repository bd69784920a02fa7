#include "expression_cuda.hpp"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "expression_functions.hpp"

namespace simrun::framework::expression {
namespace {

using Op = Program::Op;
using Instruction = Program::Instruction;

// A double as a CUDA C++ literal of the same value: hexadecimal (exact), or its bits where it
// is not finite.
std::string cuda_literal(double value) {
    char text[64];
    if (std::isfinite(value)) {
        std::snprintf(text, sizeof text, "%a", value);
    } else {
        std::uint64_t bits = 0;
        std::memcpy(&bits, &value, sizeof bits);
        std::snprintf(text, sizeof text, "__longlong_as_double(0x%016" PRIx64 "LL)", bits);
    }
    return text;
}

// A CUDA form (A and B, or V, standing for the operands) with the operands put in.
std::string substitute(std::string_view form, const std::string& a, const std::string& b) {
    std::string text;
    for (const char c : form) text += c == 'A' || c == 'V' ? a : c == 'B' ? b : std::string(1, c);
    return text;
}

// Each binary operation in CUDA C++, A and B standing for its operands.
constexpr std::array<std::pair<Op, std::string_view>, 14> binary_forms{{
    {Op::add, "A + B"},
    {Op::subtract, "A - B"},
    {Op::multiply, "A * B"},
    {Op::divide, "A / B"},
    {Op::power, "pow(A, B)"},
    {Op::atan2, "atan2(A, B)"},
    {Op::less, "double(A < B)"},
    {Op::greater, "double(A > B)"},
    {Op::less_equal, "double(A <= B)"},
    {Op::greater_equal, "double(A >= B)"},
    {Op::equal, "double(A == B)"},
    {Op::not_equal, "double(A != B)"},
    {Op::logical_and, "double(A != 0 && B != 0)"},
    {Op::logical_or, "double(A != 0 || B != 0)"},
}};

// The stack slot `slot` as a local variable of the function.
std::string s(int slot) { return "s" + std::to_string(slot); }

// The function's body, a line per instruction, the stack's slots its local variables.
class BodyWriter {
public:
    explicit BodyWriter(int slots) : constant_(static_cast<std::size_t>(slots)) {}

    void write(const Instruction& instruction) {
        visit(instruction, *this);
        if (instruction.op != Op::constant) constant_[static_cast<std::size_t>(top_)].reset();
    }
    const std::string& body() const { return body_; }

    // The operations, as visit() calls them.
    void constant(const Instruction& instruction) {
        ++top_;
        constant_[static_cast<std::size_t>(top_)] = instruction.value;
        line(s(top_) + " = " + cuda_literal(instruction.value));
    }

    void variable(const Instruction& instruction) {
        const std::string v(1, "xyzt"[instruction.index]);
        std::string power = v;
        const int factors = instruction.op == Op::variable ? 1 : instruction.count;
        for (int f = 1; f < factors; ++f) power += " * " + v;
        line(s(++top_) + " = " + power);
    }

    void negate() { line(s(top_) + " = -" + s(top_)); }

    void function(const Instruction& instruction) {
        line(s(top_) + " = " +
             substitute(unary_functions[static_cast<std::size_t>(instruction.index)].cuda, s(top_),
                        ""));
    }

    void select() {
        top_ -= 2;
        line(s(top_) + " = " + s(top_) + " != 0 ? " + s(top_ + 1) + " : " + s(top_ + 2));
    }

    // As Program::run: a running value from 0 (sums) or the first argument, in order.
    void variadic(const Instruction& instruction) {
        const int first = top_ - instruction.count + 1;
        const bool adds = instruction.op == Op::sum || instruction.op == Op::average;
        std::string value = adds ? "0.0" : s(first);
        for (int a = adds ? 0 : 1; a < instruction.count; ++a) {
            const std::string v = s(first + a);
            value = adds                            ? "(" + value + " + " + v + ")"
                    : instruction.op == Op::minimum ? "fmin_ordered(" + value + ", " + v + ")"
                                                    : "fmax_ordered(" + value + ", " + v + ")";
        }
        if (instruction.op == Op::average) {
            value += " / " + cuda_literal(static_cast<double>(instruction.count));
        }
        line(s(first) + " = " + value);
        top_ = first;
    }

    void binary(Op op) {
        --top_;
        const std::string a = s(top_), b = s(top_ + 1);
        std::string value;
        if (op == Op::power && constant_[static_cast<std::size_t>(top_ + 1)] == 2.0) {
            // a^2 as a * a: the correctly rounded square, within an ulp of glibc's pow (CUDA's
            // pow is within 2 ulps, which exp(-300 r^2) magnifies: inputs/heat.toml's heater
            // then differs at 4% of points by more than 4 ulps, with a * a at 0.03%).
            value = a + " * " + a;
        } else {
            for (const auto& [form_op, form] : binary_forms) {
                if (form_op == op) value = substitute(form, a, b);
            }
        }
        line(a + " = " + value);
    }

private:
    void line(const std::string& text) { body_ += "    " + text + ";\n"; }

    int top_ = -1;
    // The constant a slot holds, where it holds one pushed as such (a power's exponent).
    std::vector<std::optional<double>> constant_;
    std::string body_;
};

}  // namespace

// std::min and std::max as Program::run uses them: the first argument unless the second is
// strictly smaller (larger), so NaN and signed zeros come out as on the host.
const char* const cuda_support =
    "__device__ inline double fmin_ordered(double a, double b) { return b < a ? b : a; }\n"
    "__device__ inline double fmax_ordered(double a, double b) { return a < b ? b : a; }\n";

std::string cuda_function(const Program& program, const std::string& name) {
    const int slots = std::max(program.depth, 1);
    BodyWriter writer(slots);
    for (const Instruction& instruction : program.code) writer.write(instruction);
    std::string declared;
    for (int k = 0; k < slots; ++k) declared += (k > 0 ? ", " : "") + s(k);
    return "__device__ double " + name + "(double x, double y, double z, double t) {\n" +
           "    double " + declared + ";\n" + writer.body() + "    return s0;\n}\n";
}

}  // namespace simrun::framework::expression
