#pragma once
// The names an expression may call and use besides x, y, z, t: the grammar's unary functions,
// each with its value on the host, its CUDA C++ form and how far that form may differ, and the
// named constants. Read by the parser (names), the host program (values), the CUDA rendering
// (forms) and its error bound (differences, derivatives).
#include <array>
#include <numbers>
#include <string_view>
#include <utility>

namespace simrun::framework::expression {

// The constants an expression may name, for muParser and the compiled program alike.
inline constexpr std::array<std::pair<std::string_view, double>, 2> named_constants{
    {{"pi", std::numbers::pi}, {"e", std::numbers::e}}};

using Unary = double (*)(double);
// A unary function of the grammar: its name, its value on the host, its CUDA C++ form (V its
// argument), the largest difference of that form from the host's value in ulps of the value
// (CUDA's documented largest error plus glibc's on x86_64; 0 where both are exact), and its
// derivative (null for the steps sign and rint).
struct NamedFunction {
    std::string_view name;
    Unary f;
    std::string_view cuda;
    double difference_ulps;
    Unary derivative;
};
// sign(NaN) = 0, as muParser; rint(v) = floor(v + 0.5).
double sign_of(double v);
double rint_of(double v);
// Every unary function, in the order Instruction::index numbers them.
extern const std::array<NamedFunction, 21> unary_functions;

}  // namespace simrun::framework::expression
