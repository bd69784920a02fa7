#include "simrun/framework/discretisation/expression.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "support/expression_cases.hpp"

namespace simrun::framework {
namespace {

std::string input_error(const std::function<void()>& action) {
    try {
        action();
    } catch (const InputError& error) {
        return error.what();
    }
    ADD_FAILURE() << "no InputError was thrown";
    return {};
}

constexpr double pi = std::numbers::pi;

TEST(Expression, EvaluatesToHandComputedValues) {
    const Expression f("sin(pi*x)*exp(-t)", "problem.initial");
    EXPECT_NEAR(f(0.5, 0.0, 0.0, 0.0), 1.0, 1e-15);
    EXPECT_NEAR(f(0.25, 7.0, 3.0, 1.0), std::sqrt(0.5) / std::numbers::e, 1e-15);
    EXPECT_NEAR(f(1.0 / 6.0, 0.0, 0.0, 2.0), 0.5 * std::exp(-2.0), 1e-15);
    EXPECT_NEAR(f(1.0, 0.0, 0.0, 0.0), 0.0, 1e-15);

    const Expression g("x^2 + 2*y*z - max(t, 1) + min(x, y) + e", "problem.source");
    EXPECT_DOUBLE_EQ(g(3.0, 0.5, -2.0, 4.0), 9.0 - 2.0 - 4.0 + 0.5 + std::numbers::e);

    const Expression h("sqrt(abs(x)) + log(e) + cos(pi*y) + tan(0) + (z > 0 ? 1 : -1)", "k");
    EXPECT_DOUBLE_EQ(h(-4.0, 1.0, 0.5, 0.0), 2.0 + 1.0 - 1.0 + 0.0 + 1.0);
    EXPECT_DOUBLE_EQ(Expression("2^3^2", "k")(0, 0, 0, 0), 512.0);
    EXPECT_DOUBLE_EQ(Expression("pi", "k")(0, 0, 0, 0), pi);
}

// Evaluating along x (the compiled program) gives muParser's values to within 4 units in the
// last place (NaN where it gives NaN) on 10^5 random points per expression, for every
// operator, precedence, function and constant of the grammar (test::expression_cases); each of
// these is compiled.
TEST(Expression, CompiledAlongXMatchesMuParserToFourUlps) {
    std::mt19937_64 random(20261125);
    std::uniform_real_distribution<double> uniform(-1.5, 1.5);
    for (const char* text : test::expression_cases) {
        SCOPED_TRACE(text);
        const Expression f(text, "k");
        EXPECT_TRUE(f.compiled());
        std::vector<double> xs(1000), values(1000);
        int compared = 0;
        for (int line = 0; line < 100; ++line) {
            for (double& x : xs) x = uniform(random);
            const double y = uniform(random), z = uniform(random), t = std::abs(uniform(random));
            f.evaluate_along_x(xs, y, z, t, values);
            for (std::size_t k = 0; k < xs.size(); ++k) {
                const double reference = f(xs[k], y, z, t);
                EXPECT_LE(ulps_apart(reference, values[k]), Expression::agreement_ulps)
                    << "at " << xs[k] << " " << y << " " << z << " " << t << ": " << reference
                    << " against " << values[k];
                ++compared;
            }
        }
        EXPECT_EQ(compared, 100000);
    }
}

// The distance in units in the last place counts the doubles between two values, across zero,
// through the subnormal numbers and up to the infinities.
TEST(Expression, UlpsApartCountsTheDoublesBetween) {
    constexpr double tiny = std::numeric_limits<double>::denorm_min();
    constexpr double big = std::numeric_limits<double>::max();
    constexpr double inf = std::numeric_limits<double>::infinity();
    EXPECT_EQ(ulps_apart(1.0, 1.0), 0u);
    EXPECT_EQ(ulps_apart(0.0, -0.0), 0u);
    EXPECT_EQ(ulps_apart(1.0, std::nextafter(1.0, 2.0)), 1u);
    EXPECT_EQ(ulps_apart(std::nextafter(1.0, 0.0), std::nextafter(1.0, 2.0)), 2u);
    EXPECT_EQ(ulps_apart(tiny, -tiny), 2u);  // tiny, 0 (either sign), -tiny
    EXPECT_EQ(ulps_apart(3 * tiny, tiny), 2u);
    EXPECT_EQ(ulps_apart(big, inf), 1u);
    EXPECT_EQ(ulps_apart(-inf, -big), 1u);
    const double nan = std::nan("");
    EXPECT_EQ(ulps_apart(nan, nan), 0u);
    EXPECT_EQ(ulps_apart(nan, 1.0), std::numeric_limits<std::uint64_t>::max());
}

// The bound on how far CUDA's math may take a value from muParser's: none without functions or
// with correctly rounded ones (sqrt), the function's documented ulps (CUDA's 1 and glibc's 1
// for exp) magnified by a cancellation after it, and a whole step where a comparison's inputs
// lie within their bound of each other.
TEST(Expression, CudaDifferenceBoundCarriesTheFunctionsErrors) {
    EXPECT_EQ(Expression("x*y + 1 - t/3", "k").cuda_difference_bound(0.3, 0.7, 0, 0.2), 0.0);
    EXPECT_EQ(Expression("sqrt(x) + 2", "k").cuda_difference_bound(0.3, 0, 0, 0), 0.0);
    // An ulp of v counted as 2^-52 |v| (at least the spacing of the doubles at v).
    const double x = 1e-3, epsilon = std::numeric_limits<double>::epsilon();
    const double e = std::exp(x), result = e - 1;
    EXPECT_DOUBLE_EQ(Expression("exp(x) - 1", "k").cuda_difference_bound(x, 0, 0, 0),
                     2 * epsilon * e + 0.5 * epsilon * result);
    // Thousands of ulps of the result: only the bound can tell a faithful device value here.
    EXPECT_GT(2 * e / result, 1000.0);
    // sin(pi/6) is 0.5 within an ulp: the comparison may go either way, a difference of 1.
    EXPECT_EQ(Expression("sin(x) >= 0.5", "k").cuda_difference_bound(std::numbers::pi / 6, 0, 0, 0),
              1.0);
    EXPECT_EQ(Expression("sin(x) >= 0.5", "k").cuda_difference_bound(0.4, 0, 0, 0), 0.0);
}

// The CUDA function runs the program's operations in its order, a local variable per stack
// slot, constants as exact hexadecimal literals, a^2 as a * a, max as fmax_ordered (after
// cuda_support): the text NVRTC compiles, which its cache is keyed by.
TEST(Expression, CudaFunctionRendersTheProgramInItsOrder) {
    EXPECT_EQ(Expression("x > y > z", "k").cuda_function("f"),
              "__device__ double f(double x, double y, double z, double t) {\n"
              "    double s0, s1;\n"
              "    s0 = x;\n"
              "    s1 = y;\n"
              "    s0 = double(s0 > s1);\n"
              "    s1 = z;\n"
              "    s0 = double(s0 > s1);\n"
              "    return s0;\n"
              "}\n");
    EXPECT_EQ(Expression("max(x, -y) + (x-0.8)^2", "k").cuda_function("g"),
              "__device__ double g(double x, double y, double z, double t) {\n"
              "    double s0, s1, s2;\n"
              "    s0 = x;\n"
              "    s1 = y;\n"
              "    s1 = -s1;\n"
              "    s0 = fmax_ordered(s0, s1);\n"
              "    s1 = x;\n"
              "    s2 = 0x1.999999999999ap-1;\n"
              "    s1 = s1 - s2;\n"
              "    s2 = 0x1p+1;\n"
              "    s1 = s1 * s1;\n"
              "    s0 = s0 + s1;\n"
              "    return s0;\n"
              "}\n");
    EXPECT_EQ(Expression("2*pi", "k").cuda_function("c"),
              "__device__ double c(double x, double y, double z, double t) {\n"
              "    double s0;\n"
              "    s0 = 0x1.921fb54442d18p+2;\n"
              "    return s0;\n"
              "}\n");
}

// Text nested deeper than the compiled program's parser goes (200; muParser takes up to its
// length limit of some 5000 characters, 300 levels here) is left to muParser (whose parser
// does not recurse): the same values, never a stack overflow.
TEST(Expression, DeepNestingIsLeftToMuParser) {
    for (const std::string& open : {std::string("("), std::string("-("), std::string("sin(")}) {
        std::string text;
        for (int k = 0; k < 300; ++k) text += open;
        text += "x";
        for (int k = 0; k < 300; ++k) text += ")";
        const Expression f(text, "k");
        EXPECT_FALSE(f.compiled()) << open;
        const std::vector<double> xs{0.25, 0.5};
        std::vector<double> values(2);
        f.evaluate_along_x(xs, 0, 0, 0, values);
        EXPECT_EQ(values[0], f(0.25, 0, 0, 0));
        EXPECT_EQ(values[1], f(0.5, 0, 0, 0));
    }
    std::string power = "x";
    for (int k = 0; k < 400; ++k) power += "^1";
    EXPECT_FALSE(Expression(power, "k").compiled());
    EXPECT_TRUE(Expression("((((x))))^2^1", "k").compiled());
}

TEST(Expression, MalformedExpressionReportsKeyPositionAndToken) {
    EXPECT_EQ(input_error([] { Expression("sin(pi*)", "problem.initial", "in.toml:4:11"); }),
              "in.toml:4:11: key 'problem.initial': unexpected parenthesis ')' at position 7 in "
              "'sin(pi*)'");
    const std::string unclosed = input_error([] { Expression("sin(pi*x", "problem.initial"); });
    EXPECT_EQ(unclosed.rfind("key 'problem.initial': missing parenthesis at position ", 0), 0u)
        << unclosed;
    EXPECT_NE(unclosed.find("in 'sin(pi*x'"), std::string::npos) << unclosed;
    const std::string dangling = input_error([] { Expression("1 +", "problem.initial"); });
    EXPECT_EQ(dangling,
              "key 'problem.initial': unexpected end of expression at position 3 in "
              "'1 +'");
}

TEST(Expression, UnknownNamesAreRejected) {
    EXPECT_EQ(
        input_error([] { Expression("x + q*t", "problem.exact", "--set problem.exact=x+q"); }),
        "--set problem.exact=x+q: key 'problem.exact': unknown name 'q' at position 4 in "
        "'x + q*t' (variables are x, y, z, t; constants pi, e)");
    EXPECT_NE(input_error([] { Expression("foo(x)", "k"); }).find("unknown name 'foo'"),
              std::string::npos);
    // muParser's own _pi is not part of simrun's language.
    EXPECT_NE(input_error([] { Expression("_pi", "k"); }).find("unknown name '_pi'"),
              std::string::npos);
}

TEST(Expression, EmptyTextAndAssignmentAreRejected) {
    EXPECT_EQ(input_error([] { Expression("  ", "problem.initial"); }),
              "key 'problem.initial': is empty; expected an expression of x, y, z, t");
    EXPECT_EQ(input_error([] { Expression("x=3", "k"); }),
              "key 'k': assignment '=' at position 1 in 'x=3' is not allowed (use == to compare)");
    EXPECT_DOUBLE_EQ(Expression("(x == 1) + (y <= 2) + (z != 0) + (t >= 1)", "k")(1, 2, 0, 1), 3.0);
}

// muParser read "x\0+1" as x: a control character anywhere is refused with the key, the place
// and the position, whoever builds the expression; tab and newline are blanks.
TEST(Expression, ControlCharactersAreRefusedWhereverTheyStand) {
    EXPECT_EQ(
        input_error([] { Expression(std::string("x\0+1", 4), "problem.source", "in.toml:5:10"); }),
        "in.toml:5:10: key 'problem.source': holds the control character U+0000 at "
        "position 1 (plain text expected; tab and newline aside)");
    EXPECT_NE(input_error([] { Expression("x \x01+ 1", "k"); }).find("U+0001 at position 2"),
              std::string::npos);
    EXPECT_NE(input_error([] { Expression("x + 1\x7f", "k"); }).find("U+007F at position 5"),
              std::string::npos);
    EXPECT_DOUBLE_EQ(Expression("x +\n\t1\r\n", "k")(2, 0, 0, 0), 3.0);
}

TEST(Expression, ReportsDependenceOnTimeAndSpace) {
    const Expression space("sin(x)*y", "k");
    EXPECT_FALSE(space.depends_on_time());
    EXPECT_FALSE(space.is_constant());
    const Expression time("exp(-t)", "k");
    EXPECT_TRUE(time.depends_on_time());
    EXPECT_FALSE(time.is_constant());
    const Expression constant("2*pi + e", "k");
    EXPECT_FALSE(constant.depends_on_time());
    EXPECT_TRUE(constant.is_constant());
    EXPECT_EQ(constant.text(), "2*pi + e");
}

TEST(Expression, ConstantsGiveTheirValueEverywhereAndOnEveryThread) {
    // A constant is evaluated once; its value is muParser's (2 pi + e, sqrt(2)/2 and a
    // non-finite one), the same inside a parallel region and in copies.
    const Expression constant("2*pi + e", "k");
    const Expression root("sqrt(2)/2", "k");
    const Expression infinite("1/0", "k");
    const Expression copy = root;
    EXPECT_DOUBLE_EQ(constant(0.3, -1, 7, 9), 2 * pi + std::numbers::e);
    EXPECT_DOUBLE_EQ(root(0, 0, 0, 0), std::sqrt(2.0) / 2);
    EXPECT_TRUE(std::isinf(infinite(1, 2, 3, 4)));
    int mismatches = 0;
#pragma omp parallel for reduction(+ : mismatches)
    for (int i = 0; i < 1000; ++i) {
        mismatches += constant(i, -i, 0.5 * i, i) != 2 * pi + std::numbers::e ? 1 : 0;
        mismatches += copy(i, i, i, i) != std::sqrt(2.0) / 2 ? 1 : 0;
    }
    EXPECT_EQ(mismatches, 0);
}

TEST(Expression, CopyEvaluatesAfterTheOriginalIsDestroyed) {
    std::optional<Expression> original(std::in_place, "x + 10*y + 100*z + 1000*t", "k");
    const Expression copy = *original;
    Expression assigned("0", "k");
    assigned = *original;
    original.reset();
    EXPECT_DOUBLE_EQ(copy(1, 2, 3, 4), 4321.0);
    EXPECT_DOUBLE_EQ(assigned(4, 3, 2, 1), 1234.0);
    EXPECT_TRUE(copy.depends_on_time());

    Expression moved = std::move(assigned);
    EXPECT_DOUBLE_EQ(moved(1, 1, 1, 1), 1111.0);
}

TEST(Expression, CopiesAreIndependent) {
    const Expression a("x*t", "k");
    const Expression b = a;
    EXPECT_DOUBLE_EQ(a(2, 0, 0, 3), 6.0);
    EXPECT_DOUBLE_EQ(b(5, 0, 0, 7), 35.0);
    EXPECT_DOUBLE_EQ(a(2, 0, 0, 3), 6.0);
}

TEST(Expression, NonFiniteValuesAreNotConstructionErrors) {
    const Expression root("sqrt(x)", "k");
    EXPECT_TRUE(std::isnan(root(-1, 0, 0, 0)));
    EXPECT_DOUBLE_EQ(root(4, 0, 0, 0), 2.0);
    const Expression inverse("1/x", "k");
    EXPECT_TRUE(std::isinf(inverse(0, 0, 0, 0)));
}

}  // namespace
}  // namespace simrun::framework
