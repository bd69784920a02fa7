// Matrix Market reader and writers. The reader loads the whole file into memory and parses it
// with std::from_chars, line by line, so every error can name its line.
#include "simrun/solvers/matrices/matrix_market.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>

#include "simrun/solvers/system/atomic_file.hpp"
#include "simrun/solvers/system/input_file.hpp"
#include "simrun/solvers/system/memory_budget.hpp"

namespace simrun::solvers {
namespace {

constexpr std::int64_t max_index = std::numeric_limits<std::int32_t>::max();
constexpr std::string_view banner_grammar =
    "'%%MatrixMarket matrix coordinate|array real|integer|pattern "
    "general|symmetric|skew-symmetric'";

enum class Format { coordinate, array };
enum class Field { real, integer, pattern };
enum class Symmetry { general, symmetric, skew_symmetric };

bool equals_ignoring_case(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// A token quoted for a message, cut short when long.
std::string quoted(std::string_view text) {
    constexpr std::size_t limit = 60;
    if (text.size() > limit) return "'" + std::string(text.substr(0, limit)) + "...'";
    return "'" + std::string(text) + "'";
}

// Splits `line` at white space into at most N tokens; returns how many tokens the line has
// (which may exceed N).
template <std::size_t N>
std::size_t split(std::string_view line, std::array<std::string_view, N>& tokens) {
    std::size_t count = 0;
    std::size_t pos = 0;
    while (true) {
        while (pos < line.size() && is_space(line[pos])) ++pos;
        if (pos == line.size()) return count;
        const std::size_t start = pos;
        while (pos < line.size() && !is_space(line[pos])) ++pos;
        if (count < N) tokens[count] = line.substr(start, pos - start);
        ++count;
    }
}

std::string read_whole_file(const std::filesystem::path& path) {
    if (const auto problem = input_file_problem(path)) {
        throw MatrixMarketError(path.string() + ": cannot open: " + *problem);
    }
    std::error_code size_error;
    const auto expected = std::filesystem::file_size(path, size_error);
    if (!size_error) {
        if (const auto problem = memory_problem(static_cast<double>(expected))) {
            throw MatrixMarketError(path.string() + ": reading it " + *problem);
        }
    }
    const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                               &std::fclose);
    if (!file) {
        throw MatrixMarketError(path.string() + ": cannot open: " + std::strerror(errno));
    }
    // Read straight into a buffer of the file's size, growing it if the file grew meanwhile.
    std::string text(size_error ? std::size_t{1} << 16 : static_cast<std::size_t>(expected) + 1,
                     '\0');
    std::size_t size = 0;
    while (true) {
        size += std::fread(text.data() + size, 1, text.size() - size, file.get());
        if (size < text.size()) break;
        text.resize(2 * text.size());
    }
    if (std::ferror(file.get())) {
        throw MatrixMarketError(path.string() + ": cannot read: " + std::strerror(errno));
    }
    text.resize(size);
    return text;
}

// Parses a whole file: banner, comments, size line, then entries handed to a sink one by one.
class Reader {
public:
    explicit Reader(const std::filesystem::path& path)
        : name_(path.string()), text_(read_whole_file(path)) {
        read_banner();
        read_size_line();
    }

    [[noreturn]] void fail(std::int64_t line, const std::string& message) const {
        throw MatrixMarketError(name_ + ":" + std::to_string(line) + ": " + message);
    }

    Format format() const { return format_; }
    std::int32_t rows() const { return rows_; }
    std::int32_t cols() const { return cols_; }
    std::int64_t declared_entries() const { return declared_; }
    std::int64_t size_line() const { return size_line_; }
    std::size_t bytes_left() const { return text_.size() - pos_; }

    // Calls add(i, j, v) (0-based) for every entry, after expanding symmetric storage:
    // symmetric (i, j, v) also gives (j, i, v); skew-symmetric also gives (j, i, -v).
    template <typename Add>
    void read_entries(Add&& add) {
        if (format_ == Format::coordinate) {
            read_coordinate_entries(add);
        } else {
            read_array_entries(add);
        }
    }

private:
    // Moves to the next line; false at the end of the text. line_ excludes the newline.
    bool next_line() {
        if (pos_ >= text_.size()) return false;
        const char* begin = text_.data() + pos_;
        const void* newline = std::memchr(begin, '\n', text_.size() - pos_);
        const std::size_t length =
            newline ? static_cast<std::size_t>(static_cast<const char*>(newline) - begin)
                    : text_.size() - pos_;
        line_ = std::string_view(begin, length);
        pos_ += length + (newline ? 1 : 0);
        ++line_number_;
        return true;
    }

    // Moves to the next line that is neither blank nor a comment; false at the end.
    bool next_data_line() {
        while (next_line()) {
            const auto first = std::find_if_not(line_.begin(), line_.end(), is_space);
            if (first != line_.end() && *first != '%') return true;
        }
        return false;
    }

    void read_banner() {
        const std::string expected = "expected the banner " + std::string(banner_grammar);
        if (!next_line()) fail(1, expected + ", got an empty file");
        std::array<std::string_view, 5> tokens;
        const std::size_t count = split(line_, tokens);
        if (count == 0 || !equals_ignoring_case(tokens[0], "%%MatrixMarket")) {
            fail(1, expected + ", got " + quoted(line_));
        }
        if (count != 5) {
            fail(1, expected + " (5 fields), got " + std::to_string(count) + " fields");
        }
        if (!equals_ignoring_case(tokens[1], "matrix")) {
            fail(1, "unsupported object " + quoted(tokens[1]) + ", expected 'matrix'");
        }
        if (equals_ignoring_case(tokens[2], "coordinate")) {
            format_ = Format::coordinate;
        } else if (equals_ignoring_case(tokens[2], "array")) {
            format_ = Format::array;
        } else {
            fail(1, "unknown format " + quoted(tokens[2]) + ", expected 'coordinate' or 'array'");
        }
        if (equals_ignoring_case(tokens[3], "complex")) {
            fail(1, "complex matrices are not supported (field 'complex')");
        } else if (equals_ignoring_case(tokens[3], "real")) {
            field_ = Field::real;
        } else if (equals_ignoring_case(tokens[3], "integer")) {
            field_ = Field::integer;
        } else if (equals_ignoring_case(tokens[3], "pattern")) {
            field_ = Field::pattern;
        } else {
            fail(1, "unknown field " + quoted(tokens[3]) +
                        ", expected 'real', 'integer' or 'pattern'");
        }
        if (equals_ignoring_case(tokens[4], "hermitian")) {
            fail(1, "complex matrices are not supported (symmetry 'hermitian')");
        } else if (equals_ignoring_case(tokens[4], "general")) {
            symmetry_ = Symmetry::general;
        } else if (equals_ignoring_case(tokens[4], "symmetric")) {
            symmetry_ = Symmetry::symmetric;
        } else if (equals_ignoring_case(tokens[4], "skew-symmetric")) {
            symmetry_ = Symmetry::skew_symmetric;
        } else {
            fail(1, "unknown symmetry " + quoted(tokens[4]) +
                        ", expected 'general', 'symmetric' or 'skew-symmetric'");
        }
        if (format_ == Format::array && field_ == Field::pattern) {
            fail(1, "the 'pattern' field needs the 'coordinate' format, got 'array'");
        }
    }

    void read_size_line() {
        const bool coordinate = format_ == Format::coordinate;
        const std::string expected =
            coordinate ? "expected the size line 'rows columns entries' (3 non-negative integers)"
                       : "expected the size line 'rows columns' (2 non-negative integers)";
        if (!next_data_line()) fail(line_number_, expected + ", but the file ended");
        size_line_ = line_number_;
        std::array<std::string_view, 3> tokens;
        const std::size_t count = split(line_, tokens);
        std::array<std::int64_t, 3> sizes{};
        bool valid = count == (coordinate ? 3u : 2u);
        for (std::size_t t = 0; valid && t < count; ++t) {
            const auto [end, error] =
                std::from_chars(tokens[t].data(), tokens[t].data() + tokens[t].size(), sizes[t]);
            valid =
                error == std::errc() && end == tokens[t].data() + tokens[t].size() && sizes[t] >= 0;
        }
        if (!valid) fail(size_line_, expected + ", got " + quoted(line_));
        for (std::size_t t = 0; t < 2; ++t) {
            if (sizes[t] > max_index) {
                fail(size_line_, std::string(t == 0 ? "rows " : "columns ") +
                                     std::to_string(sizes[t]) + " exceed the 32-bit index limit " +
                                     std::to_string(max_index));
            }
        }
        rows_ = static_cast<std::int32_t>(sizes[0]);
        cols_ = static_cast<std::int32_t>(sizes[1]);
        if (symmetry_ != Symmetry::general && rows_ != cols_) {
            fail(size_line_, "a " + symmetry_name() + " matrix must be square, got " +
                                 std::to_string(rows_) + " x " + std::to_string(cols_));
        }
        if (coordinate) {
            // Repeated positions are allowed (they add up), so any count may be declared.
            declared_ = sizes[2];
        } else {
            // Stored values: all m n; symmetric n (n + 1) / 2; skew-symmetric n (n - 1) / 2.
            const std::int64_t n = rows_;
            declared_ = symmetry_ == Symmetry::general     ? n * cols_
                        : symmetry_ == Symmetry::symmetric ? n * (n + 1) / 2
                                                           : n * (n - 1) / 2;
        }
    }

    std::string symmetry_name() const {
        return symmetry_ == Symmetry::general     ? "general"
               : symmetry_ == Symmetry::symmetric ? "symmetric"
                                                  : "skew-symmetric";
    }

    // A 1-based index in 1..size, returned 0-based.
    std::int32_t parse_index(std::string_view token, const char* what, std::int32_t size) const {
        std::int64_t index = 0;
        const char* last = token.data() + token.size();
        const auto [end, error] = std::from_chars(token.data(), last, index);
        if (end != last || (error != std::errc() && error != std::errc::result_out_of_range)) {
            fail(line_number_,
                 "expected an integer " + std::string(what) + ", got " + quoted(token));
        }
        if (error != std::errc() || index < 1 || index > size) {
            fail(line_number_, std::string(what) + " " + std::string(token) + " out of range 1.." +
                                   std::to_string(size));
        }
        return static_cast<std::int32_t>(index - 1);
    }

    double parse_value(std::string_view token) const {
        // from_chars takes no leading '+'; a sign must then be followed by the number itself.
        std::string_view number = token;
        if (number.size() > 1 && number[0] == '+' && number[1] != '-' && number[1] != '+') {
            number.remove_prefix(1);
        }
        const char* first = number.data();
        const char* last = number.data() + number.size();
        if (field_ == Field::integer) {
            std::int64_t value = 0;
            const auto [end, error] = std::from_chars(first, last, value);
            if (error != std::errc() || end != last) {
                fail(line_number_, "expected an integer value, got " + quoted(token));
            }
            return static_cast<double>(value);
        }
        double value = 0;
        const auto [end, error] = std::from_chars(first, last, value);
        if (end != last || error == std::errc::invalid_argument) {
            fail(line_number_, "expected a real value, got " + quoted(token));
        }
        if (error == std::errc::result_out_of_range) {
            // Underflow rounds to a subnormal or zero; overflow is a non-finite value.
            value = std::strtod(std::string(number).c_str(), nullptr);
        }
        if (!std::isfinite(value)) {
            fail(line_number_,
                 "non-finite value " + quoted(token) + " (NaN and infinity are not allowed)");
        }
        return value;
    }

    template <typename Add>
    void expand(std::int32_t i, std::int32_t j, double value, Add& add) const {
        if (symmetry_ == Symmetry::skew_symmetric && i == j) {
            fail(line_number_, "diagonal entry (" + std::to_string(i + 1) + ", " +
                                   std::to_string(j + 1) +
                                   ") in a skew-symmetric file, whose diagonal is zero and "
                                   "not stored");
        }
        if (symmetry_ != Symmetry::general && i != j) check_one_triangle(i, j);
        add(i, j, value);
        if (symmetry_ == Symmetry::symmetric && i != j) add(j, i, value);
        if (symmetry_ == Symmetry::skew_symmetric) add(j, i, -value);
    }

    // A symmetric or skew-symmetric file stores one triangle (the lower, by the standard; the
    // upper is accepted when it is the only one): an entry on the other side would be a
    // second copy of its mirror, which expansion would add on top of it.
    void check_one_triangle(std::int32_t i, std::int32_t j) const {
        const int side = i > j ? -1 : 1;
        if (triangle_ == 0) {
            triangle_ = side;
            triangle_line_ = line_number_;
            return;
        }
        if (side == triangle_) return;
        fail(line_number_, "entry (" + std::to_string(i + 1) + ", " + std::to_string(j + 1) +
                               ") lies " + (side < 0 ? "below" : "above") +
                               " the diagonal, but line " + std::to_string(triangle_line_) +
                               " has one " + (side < 0 ? "above" : "below") +
                               " it: a symmetric file stores one triangle (the lower); with both, "
                               "each off-diagonal entry would be counted twice");
    }

    void fail_on_extra_entry() const {
        fail(line_number_, "more entries than the " + std::to_string(declared_) +
                               " declared in the size line (line " + std::to_string(size_line_) +
                               ")");
    }

    void fail_on_missing_entries(std::int64_t read) const {
        fail(line_number_, "the file ended after " + std::to_string(read) + " of the " +
                               std::to_string(declared_) +
                               " entries declared in the size line (line " +
                               std::to_string(size_line_) + ")");
    }

    template <typename Add>
    void read_coordinate_entries(Add& add) {
        const bool pattern = field_ == Field::pattern;
        const std::size_t expected = pattern ? 2 : 3;
        const std::string shape = pattern ? "2 fields (row column)" : "3 fields (row column value)";
        std::array<std::string_view, 3> tokens;
        std::int64_t read = 0;
        while (next_data_line()) {
            if (read == declared_) fail_on_extra_entry();
            const std::size_t count = split(line_, tokens);
            if (count != expected) {
                fail(line_number_, "expected " + shape + ", got " + std::to_string(count));
            }
            const std::int32_t i = parse_index(tokens[0], "row index", rows_);
            const std::int32_t j = parse_index(tokens[1], "column index", cols_);
            expand(i, j, pattern ? 1.0 : parse_value(tokens[2]), add);
            ++read;
        }
        if (read < declared_) fail_on_missing_entries(read);
    }

    // Column-major; symmetric files store the lower triangle (i >= j) column by column,
    // skew-symmetric files the strict lower triangle (i > j).
    template <typename Add>
    void read_array_entries(Add& add) {
        const std::int32_t skip = symmetry_ == Symmetry::general          ? -1
                                  : symmetry_ == Symmetry::skew_symmetric ? 1
                                                                          : 0;
        std::int32_t i = 0;
        std::int32_t j = 0;
        // First stored row of column j: 0 for general, j for symmetric, j + 1 for skew.
        const auto first_row = [&](std::int32_t column) { return skip < 0 ? 0 : column + skip; };
        std::array<std::string_view, 1> tokens;
        std::int64_t read = 0;
        if (cols_ > 0) i = first_row(0);
        while (i >= rows_ && j < cols_) i = first_row(++j);
        while (next_data_line()) {
            if (read == declared_) fail_on_extra_entry();
            const std::size_t count = split(line_, tokens);
            if (count != 1) {
                fail(line_number_, "expected 1 field (value), got " + std::to_string(count));
            }
            expand(i, j, parse_value(tokens[0]), add);
            ++read;
            if (++i >= rows_) {
                do {
                    ++j;
                    i = j < cols_ ? first_row(j) : 0;
                } while (j < cols_ && i >= rows_);
            }
        }
        if (read < declared_) fail_on_missing_entries(read);
    }

    std::string name_;
    std::string text_;
    mutable int triangle_ = 0;  // the side of the diagonal stored entries lie on: -1 lower, 1 upper
    mutable std::int64_t triangle_line_ = 0;
    std::size_t pos_ = 0;
    std::string_view line_;
    std::int64_t line_number_ = 0;
    std::int64_t size_line_ = 0;
    Format format_ = Format::coordinate;
    Field field_ = Field::real;
    Symmetry symmetry_ = Symmetry::general;
    std::int32_t rows_ = 0;
    std::int32_t cols_ = 0;
    std::int64_t declared_ = 0;
};

void append_value(std::string& out, double value) {
    char buffer[32];
    const auto result =
        std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::general, 17);
    out.append(buffer, static_cast<std::size_t>(result.ptr - buffer));
}

void append_integer(std::string& out, std::int64_t value) {
    char buffer[24];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    out.append(buffer, static_cast<std::size_t>(result.ptr - buffer));
}

[[noreturn]] void fail_write(const std::filesystem::path& path, const std::string& what) {
    throw std::runtime_error("cannot write '" + path.string() + "': " + what);
}

}  // namespace

CooData<double> read_matrix_market(const std::filesystem::path& path) {
    Reader reader(path);
    CooData<double> coo;
    coo.rows = reader.rows();
    coo.cols = reader.cols();
    // Every stored entry takes at least 4 bytes ("i j\n"); symmetric ones may double. (The
    // declared count itself may be anything up to 2^63: bounded by the text first.)
    const std::int64_t stored =
        std::min(reader.declared_entries(), static_cast<std::int64_t>(reader.bytes_left() / 4 + 1));
    const auto reserve = static_cast<std::size_t>(2 * stored);
    coo.row.reserve(reserve);
    coo.col.reserve(reserve);
    coo.values.reserve(reserve);
    // An array file is dense: its exact zeros are not entries of the sparse matrix.
    const bool skip_zeros = reader.format() == Format::array;
    reader.read_entries([&](std::int32_t i, std::int32_t j, double value) {
        if (skip_zeros && value == 0.0) return;
        coo.row.push_back(i);
        coo.col.push_back(j);
        coo.values.push_back(value);
    });
    return coo;
}

std::vector<double> read_matrix_market_vector(const std::filesystem::path& path) {
    Reader reader(path);
    if (reader.cols() != 1) {
        reader.fail(reader.size_line(), "expected a vector (1 column), got " +
                                            std::to_string(reader.rows()) + " x " +
                                            std::to_string(reader.cols()));
    }
    std::vector<double> values(static_cast<std::size_t>(reader.rows()), 0.0);
    // Array files hold each position once (assigned, keeping -0); coordinate repeats add up.
    if (reader.format() == Format::array) {
        reader.read_entries([&](std::int32_t i, std::int32_t, double value) { values[i] = value; });
    } else {
        reader.read_entries(
            [&](std::int32_t i, std::int32_t, double value) { values[i] += value; });
    }
    return values;
}

void write_matrix_market_vector(const std::filesystem::path& path, std::span<const double> values) {
    if (values.size() > static_cast<std::size_t>(max_index)) {
        fail_write(path, std::to_string(values.size()) + " values exceed the 32-bit index limit");
    }
    std::string out = "%%MatrixMarket matrix array real general\n";
    out.reserve(out.size() + 24 * values.size() + 32);
    append_integer(out, static_cast<std::int64_t>(values.size()));
    out += " 1\n";
    for (std::size_t k = 0; k < values.size(); ++k) {
        if (!std::isfinite(values[k])) {
            fail_write(path, "value " + std::to_string(k + 1) + " is not finite");
        }
        append_value(out, values[k]);
        out += '\n';
    }
    write_file_atomically(path, out);
}

void write_matrix_market(const std::filesystem::path& path, const CsrData<double>& matrix) {
    const std::int32_t rows = matrix.rows;
    const auto nnz = static_cast<std::int64_t>(matrix.col.size());
    const bool consistent = rows >= 0 && matrix.cols >= 0 &&
                            matrix.row_ptr.size() == static_cast<std::size_t>(rows) + 1 &&
                            matrix.values.size() == matrix.col.size() &&
                            matrix.row_ptr.front() == 0 && matrix.row_ptr.back() == nnz &&
                            std::is_sorted(matrix.row_ptr.begin(), matrix.row_ptr.end()) &&
                            std::all_of(matrix.col.begin(), matrix.col.end(),
                                        [&](std::int32_t j) { return j >= 0 && j < matrix.cols; });
    if (!consistent) {
        throw std::invalid_argument("write_matrix_market '" + path.string() +
                                    "': the CSR matrix is inconsistent (row_ptr, col and values "
                                    "do not describe a " +
                                    std::to_string(rows) + " x " + std::to_string(matrix.cols) +
                                    " matrix)");
    }
    std::string out = "%%MatrixMarket matrix coordinate real general\n";
    out.reserve(out.size() + 48 * static_cast<std::size_t>(nnz) + 48);
    append_integer(out, rows);
    out += ' ';
    append_integer(out, matrix.cols);
    out += ' ';
    append_integer(out, nnz);
    out += '\n';
    for (std::int32_t i = 0; i < rows; ++i) {
        for (std::int32_t k = matrix.row_ptr[i]; k < matrix.row_ptr[i + 1]; ++k) {
            if (!std::isfinite(matrix.values[k])) {
                fail_write(path, "entry (" + std::to_string(i + 1) + ", " +
                                     std::to_string(matrix.col[k] + 1) + ") is not finite");
            }
            append_integer(out, std::int64_t{i} + 1);
            out += ' ';
            append_integer(out, std::int64_t{matrix.col[k]} + 1);
            out += ' ';
            append_value(out, matrix.values[k]);
            out += '\n';
        }
    }
    write_file_atomically(path, out);
}

}  // namespace simrun::solvers
