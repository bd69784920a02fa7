#pragma once
// An expression compiled for evaluation over many points at once (Expression keeps one where it
// agrees with muParser): the program of a stack machine, run on the host over blocks of points
// (here), parsed from the text by expression_parser, rendered as CUDA C++ by expression_cuda.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace simrun::framework::expression {

// The program in postfix order: every instruction pops its operands from the stack and pushes
// its result, and runs over a block of points at once.
struct Program {
    enum class Op : std::uint8_t {
        constant,  // push value
        variable,  // push x, y, z or t (index)
        negate,
        add,
        subtract,
        multiply,
        divide,
        power,
        less,
        greater,
        less_equal,
        greater_equal,
        equal,
        not_equal,
        logical_and,
        logical_or,
        select,    // c, a, b -> c != 0 ? a : b
        function,  // unary function (index into unary_functions)
        atan2,
        sum,
        average,
        minimum,
        maximum,         // over `count` arguments
        variable_power,  // variable (index) to the power count (2, 3 or 4) as products
    };
    struct Instruction {
        Op op;
        int index = 0;  // variable or function
        int count = 0;  // arguments of a variadic function, or the power
        double value = 0;
    };
    std::vector<Instruction> code;
    int depth = 0;  // the stack's largest size

    // Points per pass of an instruction: a whole grid line up to this many, so that the parts
    // of the expression that are the same along the line are computed once for it.
    static constexpr std::size_t max_block = 2048;

    // out[k] at (x[k * x_step], y[k * y_step], z[k * z_step], t[k * t_step]) for k < n: a
    // step of 0 holds a coordinate fixed.
    void run(const std::array<const double*, 4>& in, const std::array<std::size_t, 4>& step,
             std::size_t n, double* out) const;
};

// Calls the member of `visitor` that handles `instruction`'s kind of operation: constant,
// variable (with variable_power), negate, function, select, variadic (sum, average, minimum,
// maximum) or binary (the rest): one dispatch for every reader of a program.
template <typename Visitor>
void visit(const Program::Instruction& instruction, Visitor& visitor) {
    using Op = Program::Op;
    switch (instruction.op) {
        case Op::constant:
            visitor.constant(instruction);
            break;
        case Op::variable:
        case Op::variable_power:
            visitor.variable(instruction);
            break;
        case Op::negate:
            visitor.negate();
            break;
        case Op::function:
            visitor.function(instruction);
            break;
        case Op::select:
            visitor.select();
            break;
        case Op::sum:
        case Op::average:
        case Op::minimum:
        case Op::maximum:
            visitor.variadic(instruction);
            break;
        default:
            visitor.binary(instruction.op);
            break;
    }
}

}  // namespace simrun::framework::expression
