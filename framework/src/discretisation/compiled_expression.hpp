#pragma once
// An expression compiled for evaluation over many points at once (Expression keeps one where it
// agrees with muParser): the program of a stack machine, run on the host over blocks of points
// or rendered as CUDA C++ for a kernel compiled at run time.
#include <array>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace simrun::framework {

// The constants an expression may name, for muParser and the compiled program alike.
inline constexpr std::array<std::pair<std::string_view, double>, 2> named_constants{
    {{"pi", std::numbers::pi}, {"e", std::numbers::e}}};

// The expression compiled for evaluation over many points at once: parsed again by the parser
// below (muParser's grammar and semantics: the precedences || < && < comparisons < + - < * /
// and unary signs < ^, ^ right-associative, comparisons left-associative, `c ? a : b` lowest
// and right-associative, rint(v) = floor(v + 0.5), sign(NaN) = 0, a NaN condition true) into a
// program for a stack machine whose every instruction runs over a block of points. Where
// muParser's bytecode computes differently it is followed (a variable to the power 2, 3 or 4
// as products). A program is kept only when it agrees with muParser at sample points
// (Expression's constructor); otherwise evaluation stays with muParser.
struct CompiledExpression {
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
        function,  // unary function (index)
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

    // The program parsed from `text`, which muParser has accepted; std::nullopt where the text
    // leaves the grammar above (evaluation then stays with muParser).
    static std::optional<CompiledExpression> parse(std::string_view text);

    // CUDA C++ source of `__device__ double NAME(double x, double y, double z, double t)`: the
    // program's operations in its order, with CUDA's math functions (within 1 or 2 units in the
    // last place of the host's; their agreement is checked where they run).
    std::string cuda_function(const std::string& name) const;
    // The functions those call, to be placed once before them.
    static const char* const cuda_support;
    // How far the value of cuda_function at (x, y, z, t) may be from run()'s (the host's,
    // muParser's): each function's documented largest errors on CUDA and in glibc, in ulps of
    // its value, carried through the program to first order (a derivative times its input's
    // bound; sums add bounds; a comparison, select or rint whose input is within its bound of
    // the step takes the whole step). 0 where the program calls no function.
    double cuda_difference_bound(double x, double y, double z, double t) const;
};

}  // namespace simrun::framework
