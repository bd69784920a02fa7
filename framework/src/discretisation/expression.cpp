#include "simrun/framework/discretisation/expression.hpp"

#include <muParser.h>
#include <omp.h>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <numbers>
#include <utility>
#include <vector>

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
        parser.DefineConst("pi", std::numbers::pi);
        parser.DefineConst("e", std::numbers::e);
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

}  // namespace simrun::framework
