#pragma once
// Strict TOML input: typed access to sections and keys, --set overrides from the command line,
// and a final check that every key in the input was read by someone.
//
// Every error is an InputError with the message "PLACE: key 'SECTION.NAME': WHAT" (see
// input_error.hpp); PLACE is the node's FILE:LINE:COLUMN from toml++, or `--set KEY=VALUE` for
// a value that came from an override.
//
// Typical use:
//     Config config = Config::from_file(path);
//     for (auto& s : overrides) config.apply_override(s);
//     ConfigSection grid = config.section("grid");
//     auto nx = grid.require<std::int64_t>("nx");
//     if (nx < 3) grid.fail("nx", "must be >= 3, got " + std::to_string(nx));
//     ...                         // every reader takes its keys
//     config.check_all_used();    // then any key nobody asked for is an error
#include <array>
#include <concepts>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "simrun/framework/config/input_error.hpp"

namespace simrun::framework {

namespace detail {
struct ConfigState;
}

// What is wrong with `text` as input text, or nullopt: a control character (U+0000 to U+001F,
// U+007F), which would cut a name or an expression short (a NUL) or hide in it, e.g. "holds
// the control character U+0000 at position 1". Tab, newline and carriage return are allowed
// where `whitespace` is (an expression may span lines; a path may not).
std::optional<std::string> control_character_problem(std::string_view text, bool whitespace);

// The value types a key can be read as. A TOML integer is accepted where a double is asked for;
// the fixed-size arrays check their length.
template <class T>
concept ConfigValue = std::same_as<T, std::int64_t> || std::same_as<T, double> ||
    std::same_as<T, bool> || std::same_as<T, std::string> || std::same_as<T, std::vector<double>> ||
    std::same_as<T, std::array<double, 2>> || std::same_as<T, std::array<double, 3>>;

// A view of one table of a Config ("grid", "boundary.left"). A section that is absent from the
// input behaves as empty, so get() returns its defaults. Cheap to copy; it shares the Config's
// state and stays valid after the Config is moved. Keys are single names (no dots).
class ConfigSection {
public:
    // The dotted name of this section, e.g. "boundary.left".
    const std::string& name() const { return name_; }

    // Whether the key is present. Marks the key as known (see Config::check_all_used).
    bool has(std::string_view key) const;

    // The key's value, or default_value when the key is absent. Marks the key as known.
    // Throws InputError when the value has the wrong type ("expected an integer, got a
    // string"), a fixed-size array has the wrong length, or a string holds a control character
    // other than tab, newline and carriage return (control_character_problem).
    template <ConfigValue T>
    T get(std::string_view key, T default_value) const;

    // The key's value. Marks the key as known. Throws InputError when the key is absent (placed
    // at the section's header, or at the file when the section is absent too) or as get().
    template <ConfigValue T>
    T require(std::string_view key) const;

    // The key's value as a path (a file's or a directory's), or default_value when absent
    // (required when it is empty). Throws InputError as require<std::string>, and for an empty
    // path or one holding a control character (a tab or newline too).
    std::filesystem::path path(std::string_view key, std::string_view default_value = {}) const;

    // Throws InputError "PLACE: key 'SECTION.KEY': WHAT" placed at the key's value, or at the
    // section when the key is absent. For values of the right type that are impossible.
    [[noreturn]] void fail(std::string_view key, std::string_view what) const;

    // The PLACE of the key's value as used in messages (FILE:LINE:COLUMN, --set ..., or FILE),
    // and the key's dotted name ("problem.initial"); e.g. for Expression's error messages.
    std::string place(std::string_view key) const;
    std::string full_key(std::string_view key) const;

    // Whether the key is present and holds a table (e.g. `left = { type = "neumann" }`).
    // Does not mark it as known.
    bool is_table(std::string_view key) const;

    // Whether the key is present and holds a string. Does not mark it as known.
    bool is_string(std::string_view key) const;

    // The directory relative paths in the input are resolved against: the input file's
    // directory (the current directory for input given as a string).
    std::filesystem::path base_directory() const;

    // The keys present in this section, in alphabetical order. Does not mark them as known.
    std::vector<std::string> keys() const;

    // The nested table `name` (e.g. section("boundary").subsection("left")); absent behaves as
    // empty. Marks it as known. Throws InputError when the key exists but is not a table.
    ConfigSection subsection(std::string_view name) const;

private:
    friend class Config;
    ConfigSection(std::shared_ptr<detail::ConfigState> state, std::vector<std::string> path);

    std::shared_ptr<detail::ConfigState> state_;
    std::vector<std::string> path_;
    std::string name_;
};

// A parsed TOML input with its overrides and a record of which keys were read.
// Move-only: sections share its state, so a copy would share the record of use.
class Config {
public:
    // Throws InputError naming the path when the file is missing or unreadable, and
    // "FILE:LINE:COLUMN: TOML syntax error: ..." (toml++'s description) when it does not parse.
    static Config from_file(const std::filesystem::path& path);
    // As from_file; source_name stands for the file name in messages.
    static Config from_string(std::string_view text, std::string source_name);

    Config(Config&&) noexcept = default;
    Config& operator=(Config&&) noexcept = default;
    Config(const Config&) = delete;
    Config& operator=(const Config&) = delete;
    ~Config();

    // Applies `--set KEY=VALUE`. KEY is dotted (grid.nx, boundary.left.value); VALUE is parsed
    // as a TOML value (1024, 0.5, "text", [0.0, 2.0], true), and taken as a plain string when
    // it is not valid TOML (time.scheme=backward_euler). Missing tables are created. The new
    // nodes are placed at `--set KEY=VALUE` in later messages. Throws InputError when there is
    // no '=' or KEY is not a dotted name, when KEY names a table, or when a part of KEY is a
    // value rather than a table.
    void apply_override(std::string_view assignment);

    // A typed override from a program (verify's refined levels, the benchmark, the Python
    // module): KEY as for apply_override, the value stored as given, with no text in between.
    // Throws InputError placed at `origin` as apply_override does; later messages about the
    // value name the input without a line.
    using Value = std::variant<std::int64_t, double, bool, std::string>;
    void set(std::string_view key, const Value& value, std::string_view origin);

    // The input text exactly as read (to be stored with the outputs).
    const std::string& text() const;
    // The file name used in messages.
    const std::string& source_name() const;
    // The input after overrides, printed as TOML.
    std::string effective_toml() const;

    // The top-level table `name` (dotted names reach nested tables). Absent behaves as empty.
    // Marks it as known. Throws InputError when the key exists but is not a table.
    ConfigSection section(std::string_view name) const;

    // Throws InputError for the first key (in file order; overrides after the file) that no
    // get/require/has asked for: "PLACE: key 'grid.nxx': unknown key in [grid]; did you mean
    // 'nx'?" (the suggestion when a known key of that section is within edit distance 2), and
    // "PLACE: key 'solverr': unknown section [solverr]" for tables nobody opened.
    void check_all_used() const;

private:
    explicit Config(std::shared_ptr<detail::ConfigState> state);

    std::shared_ptr<detail::ConfigState> state_;
};

}  // namespace simrun::framework
