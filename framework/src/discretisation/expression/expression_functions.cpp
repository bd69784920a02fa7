#include "expression_functions.hpp"

#include <cmath>
#include <numbers>

namespace simrun::framework::expression {

double sign_of(double v) { return v < 0 ? -1.0 : v > 0 ? 1.0 : 0.0; }
double rint_of(double v) { return std::floor(v + 0.5); }
const std::array<NamedFunction, 21> unary_functions{{
    {"sin", [](double v) { return std::sin(v); }, "sin(V)", 2 + 1,
     [](double v) { return std::cos(v); }},
    {"cos", [](double v) { return std::cos(v); }, "cos(V)", 2 + 1,
     [](double v) { return -std::sin(v); }},
    {"tan", [](double v) { return std::tan(v); }, "tan(V)", 2 + 1,
     [](double v) { return 1 + std::tan(v) * std::tan(v); }},
    {"asin", [](double v) { return std::asin(v); }, "asin(V)", 2 + 1,
     [](double v) { return 1 / std::sqrt(std::abs(1 - v * v)); }},
    {"acos", [](double v) { return std::acos(v); }, "acos(V)", 2 + 1,
     [](double v) { return -1 / std::sqrt(std::abs(1 - v * v)); }},
    {"atan", [](double v) { return std::atan(v); }, "atan(V)", 2 + 1,
     [](double v) { return 1 / (1 + v * v); }},
    {"sinh", [](double v) { return std::sinh(v); }, "sinh(V)", 2 + 2,
     [](double v) { return std::cosh(v); }},
    {"cosh", [](double v) { return std::cosh(v); }, "cosh(V)", 1 + 2,
     [](double v) { return std::sinh(v); }},
    {"tanh", [](double v) { return std::tanh(v); }, "tanh(V)", 1 + 2,
     [](double v) { return 1 - std::tanh(v) * std::tanh(v); }},
    // The inverse hyperbolic functions by the formulas muParser evaluates, not std::asinh and
    // the like (which differ from them in the last places); on CUDA alike, through its log.
    {"asinh", [](double v) { return std::log(v + std::sqrt(v * v + 1)); },
     "log(V + sqrt(V * V + 1))", 1 + 1, [](double v) { return 1 / std::sqrt(v * v + 1); }},
    {"acosh", [](double v) { return std::log(v + std::sqrt(v * v - 1)); },
     "log(V + sqrt(V * V - 1))", 1 + 1,
     [](double v) { return 1 / std::sqrt(std::abs(v * v - 1)); }},
    {"atanh", [](double v) { return 0.5 * std::log((1 + v) / (1 - v)); },
     "0.5 * log((1 + V) / (1 - V))", 1 + 1, [](double v) { return 1 / std::abs(1 - v * v); }},
    {"exp", [](double v) { return std::exp(v); }, "exp(V)", 1 + 1,
     [](double v) { return std::exp(v); }},
    {"log", [](double v) { return std::log(v); }, "log(V)", 1 + 1, [](double v) { return 1 / v; }},
    {"ln", [](double v) { return std::log(v); }, "log(V)", 1 + 1, [](double v) { return 1 / v; }},
    {"log10", [](double v) { return std::log10(v); }, "log10(V)", 1 + 1,
     [](double v) { return 1 / (v * std::numbers::ln10); }},
    {"log2", [](double v) { return std::log2(v); }, "log2(V)", 1 + 1,
     [](double v) { return 1 / (v * std::numbers::ln2); }},
    {"sqrt", [](double v) { return std::sqrt(v); }, "sqrt(V)", 0,
     [](double v) { return 0.5 / std::sqrt(v); }},
    {"abs", [](double v) { return std::abs(v); }, "fabs(V)", 0,
     [](double v) { return v < 0 ? -1.0 : 1.0; }},
    {"sign", sign_of, "(V < 0 ? -1.0 : V > 0 ? 1.0 : 0.0)", 0, nullptr},
    {"rint", rint_of, "floor(V + 0.5)", 0, nullptr},
}};

}  // namespace simrun::framework::expression
