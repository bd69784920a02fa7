#pragma once
// The expression's text parsed again into a Program (expression_program.hpp), by muParser's
// grammar and semantics: the precedences || < && < comparisons < + - < * / and unary signs < ^,
// ^ right-associative, comparisons left-associative, `c ? a : b` lowest and right-associative,
// rint(v) = floor(v + 0.5), sign(NaN) = 0, a NaN condition true. Where muParser's bytecode
// computes differently it is followed (a variable to the power 2, 3 or 4 as products). A
// program is kept only when it agrees with muParser at sample points (Expression's
// constructor); otherwise evaluation stays with muParser.
#include <optional>
#include <string_view>

#include "expression_program.hpp"

namespace simrun::framework::expression {

// The program parsed from `text`, which muParser has accepted; std::nullopt where the text
// leaves the grammar above or nests deeper than 200 levels (evaluation then stays with
// muParser).
std::optional<Program> parse(std::string_view text);

}  // namespace simrun::framework::expression
