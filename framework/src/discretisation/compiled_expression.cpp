#include "compiled_expression.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numbers>

namespace simrun::framework {

namespace {

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

// Recursive descent over the text, emitting the program in postfix order; std::nullopt where
// the text leaves this grammar (muParser has accepted it, so evaluation stays with muParser).
class ProgramParser {
public:
    explicit ProgramParser(std::string_view text) : text_(text) {}

    std::optional<CompiledExpression> parse() {
        if (!ternary()) return std::nullopt;
        skip_space();
        if (at_ != text_.size()) return std::nullopt;
        program_.depth = depth_max_;
        return std::move(program_);
    }

private:
    using Op = CompiledExpression::Op;

    void skip_space() {
        while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
    }
    bool accept(std::string_view token) {
        skip_space();
        if (text_.substr(at_, token.size()) != token) return false;
        at_ += token.size();
        return true;
    }
    // The stack's size after an instruction that pops `pops` and pushes one.
    void emit(CompiledExpression::Instruction instruction, int pops) {
        program_.code.push_back(instruction);
        depth_ += 1 - pops;
        depth_max_ = std::max(depth_max_, depth_);
    }

    // Each nesting (a parenthesis, an argument, a branch) recurses: past max_nesting the text is
    // left to muParser, whose parser does not recurse, rather than risk the stack.
    static constexpr int max_nesting = 200;

    bool ternary() {
        if (++nesting_ > max_nesting) return false;
        const bool parsed = ternary_at_this_depth();
        --nesting_;
        return parsed;
    }

    bool ternary_at_this_depth() {
        if (!binary(1)) return false;
        if (!accept("?")) return true;
        if (!ternary() || !accept(":") || !ternary()) return false;
        emit({Op::select}, 3);
        return true;
    }

    // Levels: 1 ||, 2 &&, 3 comparisons, 4 + -, 5 * /; operands of 5 are signed powers.
    bool binary(int level) {
        if (level > 5) return signed_power();
        if (!binary(level + 1)) return false;
        for (;;) {
            skip_space();
            const std::optional<Op> op = binary_operator(level);
            if (!op) return true;
            if (!binary(level + 1)) return false;
            emit({*op}, 2);
        }
    }

    std::optional<Op> binary_operator(int level) {
        switch (level) {
            case 1:
                if (accept("||")) return Op::logical_or;
                break;
            case 2:
                if (accept("&&")) return Op::logical_and;
                break;
            case 3:
                if (accept("<=")) return Op::less_equal;
                if (accept(">=")) return Op::greater_equal;
                if (accept("==")) return Op::equal;
                if (accept("!=")) return Op::not_equal;
                if (accept("<")) return Op::less;
                if (accept(">")) return Op::greater;
                break;
            case 4:
                if (accept("+")) return Op::add;
                if (accept("-")) return Op::subtract;
                break;
            default:
                if (accept("*")) return Op::multiply;
                if (accept("/")) return Op::divide;
                break;
        }
        return std::nullopt;
    }

    // A sign binds more loosely than ^: -2^2 = -(2^2). Signs and exponents recurse too
    // (- - - x, 2^2^2^...): they count as nestings.
    bool signed_power() {
        if (++nesting_ > max_nesting) return false;
        bool parsed = true;
        if (accept("-")) {
            parsed = signed_power();
            if (parsed) emit({Op::negate}, 1);
        } else if (accept("+")) {
            parsed = signed_power();
        } else {
            parsed = power();
        }
        --nesting_;
        return parsed;
    }

    // ^ is right-associative and takes a signed exponent: 2^3^2 = 2^9, 2^-1 = 0.5.
    bool power() {
        const std::size_t base_at = program_.code.size();
        if (!primary()) return false;
        if (!accept("^")) return true;
        const std::size_t exponent_at = program_.code.size();
        if (!signed_power()) return false;
        // muParser's bytecode: a variable to the power 0 .. 4 (a literal) as 1 or products.
        const auto& code = program_.code;
        if (exponent_at == base_at + 1 && code.size() == exponent_at + 1 &&
            code[base_at].op == Op::variable && code[exponent_at].op == Op::constant) {
            const double p = code[exponent_at].value;
            if (p == 0 || p == 1 || p == 2 || p == 3 || p == 4) {
                const int index = code[base_at].index;
                program_.code.resize(base_at);
                depth_ -= 2;
                if (p == 0) {
                    emit({Op::constant, 0, 0, 1.0}, 0);
                } else if (p == 1) {
                    emit({Op::variable, index}, 0);
                } else {
                    emit({Op::variable_power, index, static_cast<int>(p)}, 0);
                }
                return true;
            }
        }
        emit({Op::power}, 2);
        return true;
    }

    bool primary() {
        skip_space();
        if (at_ >= text_.size()) return false;
        if (accept("(")) return ternary() && accept(")");
        const char c = text_[at_];
        if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return number();
        if (!std::isalpha(static_cast<unsigned char>(c)) && c != '_') return false;
        const std::size_t start = at_;
        while (at_ < text_.size() &&
               (std::isalnum(static_cast<unsigned char>(text_[at_])) || text_[at_] == '_')) {
            ++at_;
        }
        const std::string_view name = text_.substr(start, at_ - start);
        static constexpr std::array<std::string_view, 4> variables{"x", "y", "z", "t"};
        for (int v = 0; v < 4; ++v) {
            if (name == variables[static_cast<std::size_t>(v)]) {
                emit({Op::variable, v}, 0);
                return true;
            }
        }
        for (const auto& [constant, value] : named_constants) {
            if (name == constant) {
                emit({Op::constant, 0, 0, value}, 0);
                return true;
            }
        }
        return function(name);
    }

    bool function(std::string_view name) {
        if (!accept("(")) return false;
        int arguments = 0;
        if (!accept(")")) {
            do {
                if (!ternary()) return false;
                ++arguments;
            } while (accept(","));
            if (!accept(")")) return false;
        }
        for (std::size_t f = 0; f < unary_functions.size(); ++f) {
            if (unary_functions[f].name == name) {
                if (arguments != 1) return false;
                emit({Op::function, static_cast<int>(f)}, 1);
                return true;
            }
        }
        if (name == "atan2" && arguments == 2) {
            emit({Op::atan2}, 2);
            return true;
        }
        const std::optional<Op> variadic = name == "sum"   ? Op::sum
                                           : name == "avg" ? Op::average
                                           : name == "min" ? Op::minimum
                                           : name == "max" ? std::optional<Op>(Op::maximum)
                                                           : std::nullopt;
        if (!variadic || arguments < 1) return false;
        emit({*variadic, 0, arguments}, arguments);
        return true;
    }

    bool number() {
        // digits [. digits] [e [sign] digits], as muParser reads a value
        const std::size_t start = at_;
        while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) ++at_;
        if (at_ < text_.size() && text_[at_] == '.') {
            ++at_;
            while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) {
                ++at_;
            }
        }
        if (at_ < text_.size() && (text_[at_] == 'e' || text_[at_] == 'E')) {
            std::size_t exponent = at_ + 1;
            if (exponent < text_.size() && (text_[exponent] == '+' || text_[exponent] == '-')) {
                ++exponent;
            }
            if (exponent < text_.size() &&
                std::isdigit(static_cast<unsigned char>(text_[exponent]))) {
                at_ = exponent;
                while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) {
                    ++at_;
                }
            }
        }
        double value = 0;
        const std::string_view digits = text_.substr(start, at_ - start);
        const auto [end, error] =
            std::from_chars(digits.data(), digits.data() + digits.size(), value);
        if (error != std::errc() || end != digits.data() + digits.size()) return false;
        emit({Op::constant, 0, 0, value}, 0);
        return true;
    }

    std::string_view text_;
    std::size_t at_ = 0;
    CompiledExpression program_;
    int depth_ = 0;
    int depth_max_ = 0;
    int nesting_ = 0;
};

}  // namespace

void CompiledExpression::run(const std::array<const double*, 4>& in,
                             const std::array<std::size_t, 4>& step, std::size_t n,
                             double* out) const {
    const auto slots = static_cast<std::size_t>(std::max(depth, 1));
    const std::size_t block = std::min(n, max_block);
    std::vector<double> stack(slots * block);
    // A slot is uniform when its value is the same at every point of the block (it depends
    // only on coordinates held fixed and constants): it is then computed once, in its first
    // entry, by the same operations on the same values as at each point.
    std::vector<char> uniform(slots);
    for (std::size_t first = 0; first < n; first += block) {
        const std::size_t m = std::min<std::size_t>(block, n - first);
        int top = -1;  // the stack's top slot
        const auto slot = [&](int s) { return stack.data() + static_cast<std::size_t>(s) * block; };
        const auto is_uniform = [&](int s) { return uniform[static_cast<std::size_t>(s)] != 0; };
        const auto widen = [&](int s) {
            if (!is_uniform(s)) return;
            std::fill(slot(s) + 1, slot(s) + m, slot(s)[0]);
            uniform[static_cast<std::size_t>(s)] = 0;
        };
        // The points to compute for an operation on slots [from, to]: one where all are
        // uniform (the result stays so), else every point (all widened first).
        const auto points_of = [&](int from, int to) -> std::size_t {
            bool all = true;
            for (int s = from; s <= to; ++s) all = all && is_uniform(s);
            if (all) return 1;
            for (int s = from; s <= to; ++s) widen(s);
            return m;
        };
        for (const Instruction& instruction : code) {
            switch (instruction.op) {
                case Op::constant:
                    slot(++top)[0] = instruction.value;
                    uniform[static_cast<std::size_t>(top)] = 1;
                    break;
                case Op::variable:
                case Op::variable_power: {
                    const auto v = static_cast<std::size_t>(instruction.index);
                    const double* source = in[v] + first * step[v];
                    double* r = slot(++top);
                    const std::size_t count = step[v] == 0 ? 1 : m;
                    uniform[static_cast<std::size_t>(top)] = step[v] == 0;
                    for (std::size_t k = 0; k < count; ++k) {
                        const double a = source[k * step[v]];
                        r[k] = instruction.op == Op::variable ? a
                               : instruction.count == 2       ? a * a
                               : instruction.count == 3       ? a * a * a
                                                              : a * a * a * a;
                    }
                    break;
                }
                case Op::negate:
                case Op::function: {
                    double* r = slot(top);
                    const std::size_t count = points_of(top, top);
                    if (instruction.op == Op::negate) {
                        for (std::size_t k = 0; k < count; ++k) r[k] = -r[k];
                    } else {
                        const Unary f =
                            unary_functions[static_cast<std::size_t>(instruction.index)].f;
                        for (std::size_t k = 0; k < count; ++k) r[k] = f(r[k]);
                    }
                    break;
                }
                case Op::select: {
                    const std::size_t count = points_of(top - 2, top);
                    const double* c = slot(top - 2);
                    const double* a = slot(top - 1);
                    const double* b = slot(top);
                    double* r = slot(top - 2);
                    for (std::size_t k = 0; k < count; ++k) r[k] = c[k] != 0 ? a[k] : b[k];
                    top -= 2;
                    break;
                }
                case Op::sum:
                case Op::average:
                case Op::minimum:
                case Op::maximum: {
                    const int first_argument = top - instruction.count + 1;
                    const std::size_t count = points_of(first_argument, top);
                    double* r = slot(first_argument);
                    const bool adds = instruction.op == Op::sum || instruction.op == Op::average;
                    for (std::size_t k = 0; k < count; ++k) {
                        double value = adds ? 0.0 : r[k];
                        for (int a = 0; a < instruction.count; ++a) {
                            const double v = slot(first_argument + a)[k];
                            if (adds) {
                                value += v;
                            } else if (a > 0) {
                                value = instruction.op == Op::minimum ? std::min(value, v)
                                                                      : std::max(value, v);
                            }
                        }
                        r[k] = instruction.op == Op::average
                                   ? value / static_cast<double>(instruction.count)
                                   : value;
                    }
                    top = first_argument;
                    break;
                }
                default: {  // binary
                    const std::size_t count = points_of(top - 1, top);
                    double* a = slot(top - 1);
                    const double* b = slot(top);
                    const auto apply = [&](auto op) {
                        for (std::size_t k = 0; k < count; ++k) a[k] = op(a[k], b[k]);
                    };
                    switch (instruction.op) {
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
                    --top;
                    break;
                }
            }
        }
        widen(0);
        std::copy(slot(0), slot(0) + m, out + first);
    }
}

std::optional<CompiledExpression> CompiledExpression::parse(std::string_view text) {
    return ProgramParser(text).parse();
}

namespace {

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
constexpr std::array<std::pair<CompiledExpression::Op, std::string_view>, 14> binary_forms{{
    {CompiledExpression::Op::add, "A + B"},
    {CompiledExpression::Op::subtract, "A - B"},
    {CompiledExpression::Op::multiply, "A * B"},
    {CompiledExpression::Op::divide, "A / B"},
    {CompiledExpression::Op::power, "pow(A, B)"},
    {CompiledExpression::Op::atan2, "atan2(A, B)"},
    {CompiledExpression::Op::less, "double(A < B)"},
    {CompiledExpression::Op::greater, "double(A > B)"},
    {CompiledExpression::Op::less_equal, "double(A <= B)"},
    {CompiledExpression::Op::greater_equal, "double(A >= B)"},
    {CompiledExpression::Op::equal, "double(A == B)"},
    {CompiledExpression::Op::not_equal, "double(A != B)"},
    {CompiledExpression::Op::logical_and, "double(A != 0 && B != 0)"},
    {CompiledExpression::Op::logical_or, "double(A != 0 || B != 0)"},
}};

}  // namespace

// std::min and std::max as run() uses them: the first argument unless the second is strictly
// smaller (larger), so NaN and signed zeros come out as on the host.
const char* const CompiledExpression::cuda_support =
    "__device__ inline double fmin_ordered(double a, double b) { return b < a ? b : a; }\n"
    "__device__ inline double fmax_ordered(double a, double b) { return a < b ? b : a; }\n";

std::string CompiledExpression::cuda_function(const std::string& name) const {
    const auto s = [](int slot) { return "s" + std::to_string(slot); };
    std::string body;
    const auto line = [&body](const std::string& text) { body += "    " + text + ";\n"; };
    int top = -1;
    // The constant a slot holds, where it holds one pushed as such (a power's exponent).
    std::vector<std::optional<double>> constant(static_cast<std::size_t>(std::max(depth, 1)));
    for (const Instruction& instruction : code) {
        switch (instruction.op) {
            case Op::constant:
                ++top;
                constant[static_cast<std::size_t>(top)] = instruction.value;
                line(s(top) + " = " + cuda_literal(instruction.value));
                break;
            case Op::variable:
            case Op::variable_power: {
                const std::string v(1, "xyzt"[instruction.index]);
                std::string power = v;
                const int factors = instruction.op == Op::variable ? 1 : instruction.count;
                for (int f = 1; f < factors; ++f) power += " * " + v;
                line(s(++top) + " = " + power);
                break;
            }
            case Op::negate:
                line(s(top) + " = -" + s(top));
                break;
            case Op::function:
                line(s(top) + " = " +
                     substitute(unary_functions[static_cast<std::size_t>(instruction.index)].cuda,
                                s(top), ""));
                break;
            case Op::select:
                top -= 2;
                line(s(top) + " = " + s(top) + " != 0 ? " + s(top + 1) + " : " + s(top + 2));
                break;
            case Op::sum:
            case Op::average:
            case Op::minimum:
            case Op::maximum: {
                const int first = top - instruction.count + 1;
                const bool adds = instruction.op == Op::sum || instruction.op == Op::average;
                // As run(): a running value from 0 (sums) or the first argument, in order.
                std::string value = adds ? "0.0" : s(first);
                for (int a = adds ? 0 : 1; a < instruction.count; ++a) {
                    const std::string v = s(first + a);
                    value = adds ? "(" + value + " + " + v + ")"
                            : instruction.op == Op::minimum
                                ? "fmin_ordered(" + value + ", " + v + ")"
                                : "fmax_ordered(" + value + ", " + v + ")";
                }
                if (instruction.op == Op::average) {
                    value += " / " + cuda_literal(static_cast<double>(instruction.count));
                }
                line(s(first) + " = " + value);
                top = first;
                break;
            }
            default: {
                --top;
                const std::string a = s(top), b = s(top + 1);
                std::string value;
                if (instruction.op == Op::power &&
                    constant[static_cast<std::size_t>(top + 1)] == 2.0) {
                    // a^2 as a * a: the correctly rounded square, within an ulp of glibc's
                    // pow (CUDA's pow is within 2 ulps, which exp(-300 r^2) magnifies:
                    // inputs/heat.toml's heater then differs at 4% of points by more than 4
                    // ulps, with a * a at 0.03%).
                    value = a + " * " + a;
                } else {
                    for (const auto& [op, form] : binary_forms) {
                        if (op == instruction.op) value = substitute(form, a, b);
                    }
                }
                line(a + " = " + value);
                break;
            }
        }
        if (instruction.op != Op::constant) constant[static_cast<std::size_t>(top)].reset();
    }
    std::string slots;
    for (int k = 0; k < std::max(depth, 1); ++k) slots += (k > 0 ? ", " : "") + s(k);
    return "__device__ double " + name + "(double x, double y, double z, double t) {\n" +
           "    double " + slots + ";\n" + body + "    return s0;\n}\n";
}

namespace {

constexpr double unit_roundoff = 0x1p-53;  // half an ulp of 1

// An ulp of v, taken as 2^-52 |v| (at least the spacing of the doubles at v), or the smallest
// subnormal.
double ulp_of(double v) {
    return std::max(2 * unit_roundoff * std::abs(v), std::numeric_limits<double>::denorm_min());
}

}  // namespace

double CompiledExpression::cuda_difference_bound(double x, double y, double z, double t) const {
    const double in[4] = {x, y, z, t};
    // Each slot: the host's value and a bound on how far the device's may be from it.
    std::vector<double> v(static_cast<std::size_t>(std::max(depth, 1)));
    std::vector<double> e(v.size());
    int top = -1;
    // Where inputs differ, the operation's own rounding may differ too: half an ulp more.
    const auto rounded = [](double bound, double value) {
        return bound > 0 ? bound + 0.5 * ulp_of(value) : 0.0;
    };
    // A step (a comparison, a truth value, sign, rint) may flip where its input is within its
    // bound of the step.
    const auto may_flip = [](double distance, double bound) {
        return bound > 0 && std::abs(distance) <= bound;
    };
    for (const Instruction& instruction : code) {
        const auto at = [&](int s) { return static_cast<std::size_t>(s); };
        switch (instruction.op) {
            case Op::constant:
                ++top;
                v[at(top)] = instruction.value;
                e[at(top)] = 0;
                break;
            case Op::variable:
            case Op::variable_power: {
                const double a = in[instruction.index];
                const int factors = instruction.op == Op::variable ? 1 : instruction.count;
                double value = a;
                for (int f = 1; f < factors; ++f) value *= a;
                ++top;
                v[at(top)] = value;
                e[at(top)] = 0;
                break;
            }
            case Op::negate:
                v[at(top)] = -v[at(top)];
                break;
            case Op::function: {
                const NamedFunction& f =
                    unary_functions[static_cast<std::size_t>(instruction.index)];
                const double a = v[at(top)], ea = e[at(top)];
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
                v[at(top)] = value;
                e[at(top)] = bound;
                break;
            }
            case Op::select: {
                top -= 2;
                const double c = v[at(top)], a = v[at(top + 1)], b = v[at(top + 2)];
                const double ec = e[at(top)], ea = e[at(top + 1)], eb = e[at(top + 2)];
                v[at(top)] = c != 0 ? a : b;
                e[at(top)] = may_flip(c, ec) ? std::abs(a - b) + std::max(ea, eb)
                             : c != 0        ? ea
                                             : eb;
                break;
            }
            case Op::sum:
            case Op::average:
            case Op::minimum:
            case Op::maximum: {
                const int first = top - instruction.count + 1;
                const bool adds = instruction.op == Op::sum || instruction.op == Op::average;
                double value = adds ? 0.0 : v[at(first)], bound = 0;
                for (int a = 0; a < instruction.count; ++a) {
                    const double w = v[at(first + a)];
                    if (adds) {
                        value += w;
                        bound = rounded(bound + e[at(first + a)], value);
                    } else {
                        if (a > 0) {
                            value = instruction.op == Op::minimum ? std::min(value, w)
                                                                  : std::max(value, w);
                        }
                        bound = std::max(bound, e[at(first + a)]);
                    }
                }
                if (instruction.op == Op::average) {
                    value /= static_cast<double>(instruction.count);
                    bound = rounded(bound / static_cast<double>(instruction.count), value);
                }
                top = first;
                v[at(top)] = value;
                e[at(top)] = bound;
                break;
            }
            default: {
                --top;
                const double a = v[at(top)], b = v[at(top + 1)];
                const double ea = e[at(top)], eb = e[at(top + 1)];
                double value = 0, bound = 0;
                switch (instruction.op) {
                    case Op::add:
                    case Op::subtract:
                        value = instruction.op == Op::add ? a + b : a - b;
                        bound = rounded(ea + eb, value);
                        break;
                    case Op::multiply:
                        value = a * b;
                        bound = rounded(std::abs(b) * ea + std::abs(a) * eb + ea * eb, value);
                        break;
                    case Op::divide:
                        value = a / b;
                        bound =
                            eb >= std::abs(b)
                                ? std::numeric_limits<double>::infinity()
                                : rounded((ea + std::abs(value) * eb) / (std::abs(b) - eb), value);
                        break;
                    case Op::power:
                        value = std::pow(a, b);
                        // a^2 is rendered as a * a, the correctly rounded square, which glibc's
                        // pow (within 0.52 ulps) misses by an ulp at some 0.1% of points.
                        if (b == 2.0 && eb == 0) {
                            bound = rounded(2 * std::abs(a) * ea + ea * ea, value) + ulp_of(value);
                        } else {
                            bound = std::abs(b * std::pow(a, b - 1)) * ea +
                                    std::abs(std::log(std::abs(a)) * value) * eb +
                                    (2 + 1) * ulp_of(value);
                        }
                        break;
                    case Op::atan2:
                        value = std::atan2(a, b);
                        bound = (std::abs(b) * ea + std::abs(a) * eb) / (a * a + b * b) +
                                (2 + 1) * ulp_of(value);
                        break;
                    case Op::logical_and:
                    case Op::logical_or:
                        value = instruction.op == Op::logical_and ? double(a != 0 && b != 0)
                                                                  : double(a != 0 || b != 0);
                        bound = may_flip(a, ea) || may_flip(b, eb) ? 1 : 0;
                        break;
                    default: {  // comparisons
                        const bool result = instruction.op == Op::less            ? a < b
                                            : instruction.op == Op::greater       ? a > b
                                            : instruction.op == Op::less_equal    ? a <= b
                                            : instruction.op == Op::greater_equal ? a >= b
                                            : instruction.op == Op::equal         ? a == b
                                                                                  : a != b;
                        value = result;
                        bound = may_flip(a - b, ea + eb) ? 1 : 0;
                        break;
                    }
                }
                if (std::isnan(bound)) bound = std::numeric_limits<double>::infinity();
                v[at(top)] = value;
                e[at(top)] = bound;
                break;
            }
        }
    }
    return e[0];
}

}  // namespace simrun::framework
