#include "expression_program.hpp"

#include <algorithm>
#include <cmath>

#include "expression_functions.hpp"

namespace simrun::framework::expression {
namespace {

using Op = Program::Op;
using Instruction = Program::Instruction;

// The stack machine over one block of points at a time: a slot per stack depth, each holding
// a value per point. A slot is uniform when its value is the same at every point of the block
// (it depends only on coordinates held fixed and constants): it is then computed once, in its
// first entry, by the same operations on the same values as at each point.
class BlockMachine {
public:
    BlockMachine(const std::array<const double*, 4>& in, const std::array<std::size_t, 4>& step,
                 std::size_t slots, std::size_t block)
        : in_(in), step_(step), block_(block), stack_(slots * block), uniform_(slots) {}

    // The program over the points [first, first + m), m <= block, into out[first ...].
    void run_block(const Program& program, std::size_t first, std::size_t m, double* out) {
        first_ = first;
        m_ = m;
        top_ = -1;
        for (const Instruction& instruction : program.code) visit(instruction, *this);
        widen(0);
        std::copy(slot(0), slot(0) + m_, out + first_);
    }

    // The operations, as visit() calls them.
    void constant(const Instruction& instruction) {
        slot(++top_)[0] = instruction.value;
        uniform_[static_cast<std::size_t>(top_)] = 1;
    }

    void variable(const Instruction& instruction) {
        const auto v = static_cast<std::size_t>(instruction.index);
        const double* source = in_[v] + first_ * step_[v];
        double* r = slot(++top_);
        const std::size_t count = step_[v] == 0 ? 1 : m_;
        uniform_[static_cast<std::size_t>(top_)] = step_[v] == 0;
        for (std::size_t k = 0; k < count; ++k) {
            const double a = source[k * step_[v]];
            r[k] = instruction.op == Op::variable ? a
                   : instruction.count == 2       ? a * a
                   : instruction.count == 3       ? a * a * a
                                                  : a * a * a * a;
        }
    }

    void negate() {
        double* r = slot(top_);
        const std::size_t count = points_of(top_, top_);
        for (std::size_t k = 0; k < count; ++k) r[k] = -r[k];
    }

    void function(const Instruction& instruction) {
        double* r = slot(top_);
        const std::size_t count = points_of(top_, top_);
        const Unary f = unary_functions[static_cast<std::size_t>(instruction.index)].f;
        for (std::size_t k = 0; k < count; ++k) r[k] = f(r[k]);
    }

    void select() {
        const std::size_t count = points_of(top_ - 2, top_);
        const double* c = slot(top_ - 2);
        const double* a = slot(top_ - 1);
        const double* b = slot(top_);
        double* r = slot(top_ - 2);
        for (std::size_t k = 0; k < count; ++k) r[k] = c[k] != 0 ? a[k] : b[k];
        top_ -= 2;
    }

    // sum, avg, min, max: a running value from 0 (sums) or the first argument, in order.
    void variadic(const Instruction& instruction) {
        const int first_argument = top_ - instruction.count + 1;
        const std::size_t count = points_of(first_argument, top_);
        double* r = slot(first_argument);
        const bool adds = instruction.op == Op::sum || instruction.op == Op::average;
        for (std::size_t k = 0; k < count; ++k) {
            double value = adds ? 0.0 : r[k];
            for (int a = 0; a < instruction.count; ++a) {
                const double v = slot(first_argument + a)[k];
                if (adds) {
                    value += v;
                } else if (a > 0) {
                    value = instruction.op == Op::minimum ? std::min(value, v) : std::max(value, v);
                }
            }
            r[k] = instruction.op == Op::average ? value / static_cast<double>(instruction.count)
                                                 : value;
        }
        top_ = first_argument;
    }

    void binary(Op op) {
        const std::size_t count = points_of(top_ - 1, top_);
        double* a = slot(top_ - 1);
        const double* b = slot(top_);
        const auto apply = [&](auto operation) {
            for (std::size_t k = 0; k < count; ++k) a[k] = operation(a[k], b[k]);
        };
        switch (op) {
            case Op::add:
                apply([](double u, double v) { return u + v; });
                break;
            case Op::subtract:
                apply([](double u, double v) { return u - v; });
                break;
            case Op::multiply:
                apply([](double u, double v) { return u * v; });
                break;
            case Op::divide:
                apply([](double u, double v) { return u / v; });
                break;
            case Op::power:
                apply([](double u, double v) { return std::pow(u, v); });
                break;
            case Op::atan2:
                apply([](double u, double v) { return std::atan2(u, v); });
                break;
            case Op::less:
                apply([](double u, double v) { return double(u < v); });
                break;
            case Op::greater:
                apply([](double u, double v) { return double(u > v); });
                break;
            case Op::less_equal:
                apply([](double u, double v) { return double(u <= v); });
                break;
            case Op::greater_equal:
                apply([](double u, double v) { return double(u >= v); });
                break;
            case Op::equal:
                apply([](double u, double v) { return double(u == v); });
                break;
            case Op::not_equal:
                apply([](double u, double v) { return double(u != v); });
                break;
            case Op::logical_and:
                apply([](double u, double v) { return double(u != 0 && v != 0); });
                break;
            case Op::logical_or:
                apply([](double u, double v) { return double(u != 0 || v != 0); });
                break;
            default:
                break;
        }
        --top_;
    }

private:
    double* slot(int s) { return stack_.data() + static_cast<std::size_t>(s) * block_; }
    bool is_uniform(int s) const { return uniform_[static_cast<std::size_t>(s)] != 0; }
    void widen(int s) {
        if (!is_uniform(s)) return;
        std::fill(slot(s) + 1, slot(s) + m_, slot(s)[0]);
        uniform_[static_cast<std::size_t>(s)] = 0;
    }
    // The points to compute for an operation on slots [from, to]: one where all are uniform
    // (the result stays so), else every point (all widened first).
    std::size_t points_of(int from, int to) {
        bool all = true;
        for (int s = from; s <= to; ++s) all = all && is_uniform(s);
        if (all) return 1;
        for (int s = from; s <= to; ++s) widen(s);
        return m_;
    }

    const std::array<const double*, 4>& in_;
    const std::array<std::size_t, 4>& step_;
    std::size_t block_;
    std::vector<double> stack_;
    std::vector<char> uniform_;
    std::size_t first_ = 0;  // the block's first point
    std::size_t m_ = 0;      // its points
    int top_ = -1;           // the stack's top slot
};

}  // namespace

void Program::run(const std::array<const double*, 4>& in, const std::array<std::size_t, 4>& step,
                  std::size_t n, double* out) const {
    const auto slots = static_cast<std::size_t>(std::max(depth, 1));
    const std::size_t block = std::min(n, max_block);
    BlockMachine machine(in, step, slots, block);
    for (std::size_t first = 0; first < n; first += block) {
        machine.run_block(*this, first, std::min<std::size_t>(block, n - first), out);
    }
}

}  // namespace simrun::framework::expression
