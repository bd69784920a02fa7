#include "expression_parser.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <string_view>
#include <utility>

#include "expression_functions.hpp"

namespace simrun::framework::expression {
namespace {

// Recursive descent over the text, emitting the program in postfix order; std::nullopt where
// the text leaves this grammar (muParser has accepted it, so evaluation stays with muParser).
class ProgramParser {
public:
    explicit ProgramParser(std::string_view text) : text_(text) {}

    std::optional<Program> parse() {
        if (!ternary()) return std::nullopt;
        skip_space();
        if (at_ != text_.size()) return std::nullopt;
        program_.depth = depth_max_;
        return std::move(program_);
    }

private:
    using Op = Program::Op;

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
    void emit(Program::Instruction instruction, int pops) {
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
    Program program_;
    int depth_ = 0;
    int depth_max_ = 0;
    int nesting_ = 0;
};

}  // namespace

std::optional<Program> parse(std::string_view text) { return ProgramParser(text).parse(); }

}  // namespace simrun::framework::expression
