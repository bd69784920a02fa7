#include "simrun/framework/discretisation/expression.hpp"

#include <muParser.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <bit>
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

#include "expression/expression_cuda.hpp"
#include "expression/expression_cuda_bound.hpp"
#include "expression/expression_functions.hpp"
#include "expression/expression_parser.hpp"
#include "expression/expression_program.hpp"
#include "simrun/framework/config/config.hpp"

namespace simrun::framework {

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
        for (const auto& [name, value] : expression::named_constants)
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
    // muParser reads the text as a C string: past a NUL it would see nothing.
    if (const auto problem = control_character_problem(text_, true)) {
        throw InputError(place_, key_, *problem);
    }
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

std::span<const std::array<double, 4>> Expression::agreement_points() {
    // Over and beyond the unit cube (negative too: sqrt and log give NaN there alike), at
    // three times.
    static const std::array<std::array<double, 4>, 64> points = [] {
        std::array<std::array<double, 4>, 64> made{};
        std::uint64_t state = 0x9e3779b97f4a7c15u;
        const auto next = [&state] {
            state = state * 6364136223846793005u + 1442695040888963407u;
            return static_cast<double>(state >> 11) / static_cast<double>(std::uint64_t{1} << 53);
        };
        for (std::size_t k = 0; k < made.size(); ++k) {
            made[k][0] = 3 * next() - 1.5;
            made[k][1] = 3 * next() - 1.5;
            made[k][2] = 3 * next() - 1.5;
            made[k][3] = std::array{0.0, 0.3, 1.7}[k % 3];
        }
        return made;
    }();
    return points;
}

std::uint64_t ulps_apart(double a, double b) {
    if (std::isnan(a) || std::isnan(b)) {
        return std::isnan(a) && std::isnan(b) ? 0 : std::numeric_limits<std::uint64_t>::max();
    }
    // The doubles in the order of their values as integers: negative ones mirrored below zero
    // (so -0 and +0 are one apart; they compare equal and count as none).
    const auto ordered = [](double v) {
        const auto bits = std::bit_cast<std::int64_t>(v);
        return bits < 0 ? std::numeric_limits<std::int64_t>::min() - bits : bits;
    };
    if (a == b) return 0;
    const std::int64_t i = ordered(a), j = ordered(b);
    return i > j ? static_cast<std::uint64_t>(i) - static_cast<std::uint64_t>(j)
                 : static_cast<std::uint64_t>(j) - static_cast<std::uint64_t>(i);
}

bool Expression::agrees_at_points(std::span<const double> values, bool cuda_math) const {
    const auto points = agreement_points();
    if (values.size() != points.size()) return false;
    for (std::size_t k = 0; k < points.size(); ++k) {
        const auto& [x, y, z, t] = points[k];
        if (!agrees_at(x, y, z, t, values[k], cuda_math)) return false;
    }
    return true;
}

bool Expression::agrees_at(double x, double y, double z, double t, double value,
                           bool cuda_math) const {
    const double reference = (*this)(x, y, z, t);
    if (ulps_apart(reference, value) <= agreement_ulps) return true;
    return cuda_math && std::abs(reference - value) <= cuda_difference_bound(x, y, z, t);
}

double Expression::cuda_difference_bound(double x, double y, double z, double t) const {
    if (constant_value_) return 0.0;
    return program_ ? expression::cuda_difference_bound(*program_, x, y, z, t)
                    : std::numeric_limits<double>::infinity();
}

void Expression::compile() {
    std::optional<expression::Program> program = expression::parse(text_);
    if (!program) return;
    const auto points = agreement_points();
    std::vector<double> compiled(points.size());
    program->run({&points[0][0], &points[0][1], &points[0][2], &points[0][3]}, {4, 4, 4, 4},
                 points.size(), compiled.data());
    if (agrees_at_points(compiled)) {
        program_ = std::make_shared<const expression::Program>(std::move(*program));
    }
}

std::string Expression::cuda_function(const std::string& name) const {
    if (constant_value_) {
        const expression::Program constant{
            {{expression::Program::Op::constant, 0, 0, *constant_value_}}, 1};
        return expression::cuda_function(constant, name);
    }
    return program_ ? expression::cuda_function(*program_, name) : std::string();
}

const char* Expression::cuda_support() { return expression::cuda_support; }

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
