#pragma once
// A scalar function of x, y, z and t given as text by the user, e.g. "sin(pi*x)*exp(-t)".
//
// Grammar: muParser's. Variables x, y, z, t only; constants pi and e; the usual operators
// (+ - * / ^, comparisons, `a ? b : c`) and functions (sin, cos, tan, asin, acos, atan, sinh,
// cosh, tanh, exp, log (natural), log10, log2, sqrt, abs, sign, rint, min, max, sum, avg).
// Assignment ('=') is not allowed.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "simrun/framework/config/input_error.hpp"

namespace simrun::framework {

// An expression compiled for evaluation over many points at once: the program of a stack
// machine, parsed, run on the host and rendered as CUDA C++ in src/discretisation/expression/.
namespace expression {
struct Program;
}

// How many doubles lie from a to b, counting b (0 where a == b, or both are NaN; the largest
// value where one alone is NaN): the distance in units in the last place, subnormal numbers
// and the two infinities included.
std::uint64_t ulps_apart(double a, double b);

class Expression {
public:
    // The largest distance in units in the last place from muParser's values that a compiled
    // form of an expression may have at the agreement points (and is tested to keep over
    // random points).
    static constexpr std::uint64_t agreement_ulps = 4;

    // Parses and checks `text` at once. `key` is the dotted input key it came from
    // ("problem.initial") and `place` where that is (FILE:LINE:COLUMN or `--set ...`, as
    // ConfigSection::place returns; may be empty). Throws InputError "PLACE: key 'KEY': WHAT"
    // for an empty or malformed expression, a control character other than tab, newline and
    // carriage return (a NUL would cut it short), or an unknown name, where WHAT gives muParser's
    // reason, the token and its 0-based position, and the text, e.g.
    //     key 'problem.initial': unexpected parenthesis ')' at position 7 in 'sin(pi*)'
    // A well-formed expression that evaluates to NaN or Inf somewhere (sqrt(-1), 1/x at x = 0)
    // is not an error here; callers that need finite values check the results.
    Expression(std::string text, std::string key, std::string place = {});

    // Copies parse the text again, so a copy is independent of the original.
    Expression(const Expression& other);
    Expression& operator=(const Expression& other);
    // A moved-from Expression may only be assigned to or destroyed.
    Expression(Expression&&) noexcept;
    Expression& operator=(Expression&&) noexcept;
    ~Expression();

    // The value at (x, y, z, t). Safe to call at once from the threads of one OpenMP parallel
    // region (each thread evaluates a parser of its own, made on its first call there, so the
    // values are those of a serial loop); not from threads of other kinds.
    double operator()(double x, double y, double z, double t) const;

    // The values at (x[k], y, z, t), k < x.size(), into out (of x's size): what operator()
    // gives at each point to within 4 units in the last place (NaN where it gives NaN). The
    // expression compiled for many points at once where it agreed so with muParser at sample
    // points when constructed, else muParser at each point; the parts that depend only on y,
    // z, t and constants are computed once per line (of up to 2048 points). 3.6-20x faster
    // than operator() at each point (the heater source of inputs/heat.toml 27 against 98 ns a
    // point, a boundary value depending on y alone 1.0 against 24). Callable at once from the
    // threads of one OpenMP parallel region.
    void evaluate_along_x(std::span<const double> x, double y, double z, double t,
                          std::span<double> out) const;
    // Whether evaluate_along_x runs the compiled program (false: muParser at each point).
    bool compiled() const { return program_ != nullptr; }

    // CUDA C++ source of `__device__ double NAME(double x, double y, double z, double t)`
    // computing the compiled program (or the constant) with CUDA's math functions, after
    // cuda_support(); empty where the expression is not compiled. Its values are to be checked
    // with agrees_at_points before they are used.
    std::string cuda_function(const std::string& name) const;
    static const char* cuda_support();
    // 64 points (x, y, z, t), and whether values[k], another evaluation of this expression at
    // points[k], agrees with operator() there (agrees_at) at every one: the test a compiled form
    // passes before it is used.
    static std::span<const std::array<double, 4>> agreement_points();
    bool agrees_at_points(std::span<const double> values, bool cuda_math = false) const;
    // Whether `value`, another evaluation at (x, y, z, t), is within agreement_ulps units in the
    // last place of operator() there (ulps_apart; NaN where it is NaN), or, for one with CUDA's
    // math functions (`cuda_math`: cuda_function's), within cuda_difference_bound.
    bool agrees_at(double x, double y, double z, double t, double value, bool cuda_math) const;
    // How far cuda_function's value may be from operator()'s at (x, y, z, t): the documented
    // largest errors of CUDA's and glibc's functions, in ulps of their values, carried through
    // the expression to first order. A few ulps where the expression is well conditioned; more
    // where it magnifies its functions' errors (exp(50 x t) - 1 where the two terms nearly
    // cancel, a sum of terms near zero). 0 for a constant, infinite where not compiled().
    double cuda_difference_bound(double x, double y, double z, double t) const;

    // Whether the text uses none of x, y, z, t.
    bool is_constant() const { return !uses_space_ && !depends_on_time_; }
    // Whether the text uses t (time-independent data need not be evaluated again).
    bool depends_on_time() const { return depends_on_time_; }
    const std::string& text() const { return text_; }

private:
    struct Parser;
    struct ThreadParsers;
    Parser& parser_for_this_thread() const;
    // The program parsed from text_ where it agrees with muParser (evaluate_along_x).
    void compile();

    std::string text_;
    std::string key_;
    std::string place_;
    std::unique_ptr<Parser> parser_;
    std::unique_ptr<ThreadParsers> thread_parsers_;
    std::shared_ptr<const expression::Program> program_;  // shared by copies, never modified
    bool uses_space_ = false;
    bool depends_on_time_ = false;
    std::optional<double> constant_value_;  // where is_constant()
};

}  // namespace simrun::framework
