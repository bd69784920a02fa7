#pragma once
// Expressions covering every operator, precedence, function and constant of the expression
// grammar, for the tests of their compiled forms (on the host and on the device).
namespace simrun::test {

inline constexpr const char* expression_cases[] = {
    "sin(pi*x)*exp(-t)",
    "4*exp(-300*((x-0.8)^2 + (y-0.8)^2)) * (sin(6*pi*t) > 0)",
    "0.5*sin(pi*y)",
    "x^2 + 2*y*z - max(t, 1) + min(x, y, z) + e",
    "-x^2 + 2^-x - -y + +z^3 - x^4 + x^0 + y^1 + 2^3^2 - x^2^0.5",
    "sqrt(abs(x)) + log(abs(y) + 1) + ln(e + z^2) + log10(1 + x^2) + log2(2 + y)",
    "cos(x) + tan(y/3) + asin(x/2) + acos(y/2) + atan(z) + atan2(y, x)",
    "sinh(x) + cosh(y) + tanh(z) + asinh(x) + acosh(2 + y^2) + atanh(z/2)",
    "sign(x) + rint(3*y) + rint(-2.5) + sum(x, y, z, t) + avg(x, y) + max(x, -y)",
    "x < y ? x : y >= z ? 1e-3 : .5",
    "(x <= 0.25 && y > -0.5) || z == 0 || t != 0.3 ? x/3 : y*1.5e2",
    "1 + 0 ? 2 : 3",
    "x > y > z",
    "sqrt(x)",
    "log(y) / (x - 0.5)",
    "exp(50*x*t) - 1",
};

}  // namespace simrun::test
