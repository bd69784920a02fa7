#include "simrun/framework/discretisation/expression.hpp"

#include <muParser.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
#include <numbers>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace simrun::framework {

// The constants an expression may name, for muParser and the compiled program alike.
constexpr std::array<std::pair<std::string_view, double>, 2> named_constants{
    {{"pi", std::numbers::pi}, {"e", std::numbers::e}}};

// The parser holds pointers to x, y, z, t, so both live together on the heap and a copy builds
// a new pair instead of copying the pointers.
struct Expression::Parser {
    double x = 0.0;
    double y = 0.0;
    double z = 0.0;
    double t = 0.0;
    mu::Parser parser;

    explicit Parser(const std::string& text) {
        parser.ClearConst();
        for (const auto& [name, value] : named_constants)
            parser.DefineConst(std::string(name), value);
        parser.DefineVar("x", &x);
        parser.DefineVar("y", &y);
        parser.DefineVar("z", &z);
        parser.DefineVar("t", &t);
        parser.SetExpr(text);
    }
};

// One parser per thread number of an OpenMP parallel region (as many as the threads a region
// gets by default), each made by its thread on first use. A thread beyond those, or one in a
// nested region, evaluates the main parser under the lock.
struct Expression::ThreadParsers {
    std::vector<std::unique_ptr<Parser>> parsers;
    std::mutex lock;

    ThreadParsers() : parsers(static_cast<std::size_t>(std::max(omp_get_max_threads(), 1))) {}
};

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
};

namespace {

using Unary = double (*)(double);
struct NamedFunction {
    std::string_view name;
    Unary f;
};
double sign_of(double v) { return v < 0 ? -1.0 : v > 0 ? 1.0 : 0.0; }
double rint_of(double v) { return std::floor(v + 0.5); }
const std::array<NamedFunction, 21> unary_functions{{
    {"sin", [](double v) { return std::sin(v); }},
    {"cos", [](double v) { return std::cos(v); }},
    {"tan", [](double v) { return std::tan(v); }},
    {"asin", [](double v) { return std::asin(v); }},
    {"acos", [](double v) { return std::acos(v); }},
    {"atan", [](double v) { return std::atan(v); }},
    {"sinh", [](double v) { return std::sinh(v); }},
    {"cosh", [](double v) { return std::cosh(v); }},
    {"tanh", [](double v) { return std::tanh(v); }},
    // The inverse hyperbolic functions by the formulas muParser evaluates, not std::asinh and
    // the like (which differ from them in the last places).
    {"asinh", [](double v) { return std::log(v + std::sqrt(v * v + 1)); }},
    {"acosh", [](double v) { return std::log(v + std::sqrt(v * v - 1)); }},
    {"atanh", [](double v) { return 0.5 * std::log((1 + v) / (1 - v)); }},
    {"exp", [](double v) { return std::exp(v); }},
    {"log", [](double v) { return std::log(v); }},
    {"ln", [](double v) { return std::log(v); }},
    {"log10", [](double v) { return std::log10(v); }},
    {"log2", [](double v) { return std::log2(v); }},
    {"sqrt", [](double v) { return std::sqrt(v); }},
    {"abs", [](double v) { return std::abs(v); }},
    {"sign", sign_of},
    {"rint", rint_of},
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

namespace {

// Position of a lone '=' (muParser's assignment), or npos; ==, <=, >=, != are comparisons.
std::size_t find_assignment(const std::string& text) {
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '=') {
            continue;
        }
        const bool after_operator =
            i > 0 && std::string_view("=<>!").find(text[i - 1]) != std::string_view::npos;
        const bool before_equals = i + 1 < text.size() && text[i + 1] == '=';
        if (!after_operator && !before_equals) {
            return i;
        }
        if (before_equals) {
            ++i;
        }
    }
    return std::string::npos;
}

// muParser's message in the style of simrun's: lower case, single quotes, no final period, and
// a position past the end (muParser's for a missing end) moved to the end.
std::string describe(const mu::Parser::exception_type& error, const std::string& text) {
    const std::string position = std::to_string(
        std::min<std::size_t>(static_cast<std::size_t>(error.GetPos()), text.size()));
    if (error.GetCode() == mu::ecUNASSIGNABLE_TOKEN) {
        return "unknown name '" + error.GetToken() + "' at position " + position + " in '" + text +
               "' (variables are x, y, z, t; constants pi, e)";
    }
    std::string message = error.GetMsg();
    if (const auto at = message.find("position "); at != std::string::npos) {
        const auto digits = at + std::string_view("position ").size();
        const auto end = message.find_first_not_of("0123456789", digits);
        message.replace(digits, (end == std::string::npos ? message.size() : end) - digits,
                        position);
    }
    for (char& c : message) {
        if (c == '"') {
            c = '\'';
        }
    }
    while (!message.empty() && (message.back() == '.' || message.back() == ' ')) {
        message.pop_back();
    }
    if (!message.empty()) {
        message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
    }
    if (message.find("position") == std::string::npos && error.GetPos() >= 0) {
        message += " at position " + position;
    }
    return message + " in '" + text + "'";
}

}  // namespace

Expression::Expression(std::string text, std::string key, std::string place)
    : text_(std::move(text)), key_(std::move(key)), place_(std::move(place)) {
    if (text_.find_first_not_of(" \t\r\n") == std::string::npos) {
        throw InputError(place_, key_, "is empty; expected an expression of x, y, z, t");
    }
    if (const std::size_t at = find_assignment(text_); at != std::string::npos) {
        throw InputError(place_, key_,
                         "assignment '=' at position " + std::to_string(at) + " in '" + text_ +
                             "' is not allowed (use == to compare)");
    }
    try {
        parser_ = std::make_unique<Parser>(text_);
        thread_parsers_ = std::make_unique<ThreadParsers>();
        parser_->parser.Eval();
        // muParser evaluates "a, b" to its last part: one value is expected, so a list is a
        // mistake (a decimal comma, a stray argument) rather than something to half-use.
        if (const int parts = parser_->parser.GetNumResults(); parts > 1) {
            throw InputError(place_, key_,
                             "'" + text_ + "' is " + std::to_string(parts) +
                                 " comma-separated expressions; expected one (decimals take a "
                                 "point: 0.5)");
        }
        for (const auto& [name, address] : parser_->parser.GetUsedVar()) {
            if (name == "t") {
                depends_on_time_ = true;
            } else {
                uses_space_ = true;
            }
        }
        // A constant is evaluated once: grids call it at every node.
        if (is_constant()) constant_value_ = parser_->parser.Eval();
        compile();
    } catch (const mu::Parser::exception_type& error) {
        throw InputError(place_, key_, describe(error, text_));
    }
}

Expression::Expression(const Expression& other)
    : text_(other.text_),
      key_(other.key_),
      place_(other.place_),
      parser_(std::make_unique<Parser>(other.text_)),
      thread_parsers_(std::make_unique<ThreadParsers>()),
      program_(other.program_),
      uses_space_(other.uses_space_),
      depends_on_time_(other.depends_on_time_),
      constant_value_(other.constant_value_) {}

Expression& Expression::operator=(const Expression& other) {
    if (this != &other) {
        Expression copy(other);
        *this = std::move(copy);
    }
    return *this;
}

Expression::Expression(Expression&&) noexcept = default;
Expression& Expression::operator=(Expression&&) noexcept = default;
Expression::~Expression() = default;

Expression::Parser& Expression::parser_for_this_thread() const {
    auto& slots = thread_parsers_->parsers;
    const auto thread = static_cast<std::size_t>(omp_get_thread_num());
    std::unique_ptr<Parser>& slot = slots[thread];
    if (!slot) {
        const std::lock_guard guard(thread_parsers_->lock);  // muParser's set-up, one at a time
        slot = std::make_unique<Parser>(text_);
    }
    return *slot;
}

double Expression::operator()(double x, double y, double z, double t) const {
    const auto evaluate = [&](Parser& parser) {
        parser.x = x;
        parser.y = y;
        parser.z = z;
        parser.t = t;
        return parser.parser.Eval();
    };
    if (constant_value_) return *constant_value_;
    if (!omp_in_parallel()) return evaluate(*parser_);
    if (omp_get_level() == 1 &&
        static_cast<std::size_t>(omp_get_thread_num()) < thread_parsers_->parsers.size()) {
        return evaluate(parser_for_this_thread());
    }
    const std::lock_guard guard(thread_parsers_->lock);
    return evaluate(*parser_);
}

void Expression::compile() {
    std::optional<CompiledExpression> program = ProgramParser(text_).parse();
    if (!program) return;
    // Sample points over and beyond the unit cube (negative too: sqrt and log give NaN there
    // alike), at three times; the two must agree to 4 units in the last place at each, NaN
    // and infinities included.
    constexpr int points = 64;
    std::array<double, points> xs{}, ys{}, zs{}, ts{}, compiled{};
    std::uint64_t state = 0x9e3779b97f4a7c15u;
    const auto next = [&state] {
        state = state * 6364136223846793005u + 1442695040888963407u;
        return static_cast<double>(state >> 11) / static_cast<double>(std::uint64_t{1} << 53);
    };
    for (int k = 0; k < points; ++k) {
        xs[static_cast<std::size_t>(k)] = 3 * next() - 1.5;
        ys[static_cast<std::size_t>(k)] = 3 * next() - 1.5;
        zs[static_cast<std::size_t>(k)] = 3 * next() - 1.5;
        ts[static_cast<std::size_t>(k)] =
            std::array{0.0, 0.3, 1.7}[static_cast<std::size_t>(k % 3)];
    }
    program->run({xs.data(), ys.data(), zs.data(), ts.data()}, {1, 1, 1, 1}, points,
                 compiled.data());
    constexpr double ulps = 4 * std::numeric_limits<double>::epsilon();
    for (std::size_t k = 0; k < points; ++k) {
        const double reference = (*this)(xs[k], ys[k], zs[k], ts[k]);
        const double value = compiled[k];
        const bool same =
            (std::isnan(reference) && std::isnan(value)) || reference == value ||
            std::abs(reference - value) <= ulps * std::max(std::abs(reference), std::abs(value));
        if (!same) return;
    }
    program_ = std::make_shared<const CompiledExpression>(std::move(*program));
}

void Expression::evaluate_along_x(std::span<const double> x, double y, double z, double t,
                                  std::span<double> out) const {
    if (constant_value_) {
        std::fill(out.begin(), out.end(), *constant_value_);
        return;
    }
    if (!program_) {
        for (std::size_t k = 0; k < x.size(); ++k) out[k] = (*this)(x[k], y, z, t);
        return;
    }
    program_->run({x.data(), &y, &z, &t}, {1, 0, 0, 0}, x.size(), out.data());
}

}  // namespace simrun::framework
