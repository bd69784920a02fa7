#include "simrun/framework/config/config.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>
#include <tuple>
#include <utility>

#include "simrun/solvers/system/input_file.hpp"

namespace simrun::framework {

namespace detail {

struct ConfigState {
    std::string source_name;
    std::string text;
    toml::table root;
    // Dotted names of every section opened and every key asked for, present or not.
    std::set<std::string> known;
};

}  // namespace detail

namespace {

using detail::ConfigState;

constexpr std::string_view override_prefix = "--set ";

std::string join(const std::vector<std::string>& parts, std::size_t count) {
    std::string out;
    for (std::size_t i = 0; i < count; ++i) {
        if (i > 0) {
            out += '.';
        }
        out += parts[i];
    }
    return out;
}

std::string join(const std::vector<std::string>& parts) { return join(parts, parts.size()); }

std::string child_name(const std::string& parent, std::string_view key) {
    return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

std::vector<std::string> split_dotted(std::string_view name) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (true) {
        const std::size_t dot = name.find('.', start);
        parts.emplace_back(name.substr(start, dot == std::string_view::npos ? dot : dot - start));
        if (dot == std::string_view::npos) {
            return parts;
        }
        start = dot + 1;
    }
}

bool is_bare_key(std::string_view part) {
    return !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-';
    });
}

std::string_view trim(std::string_view s) {
    const auto first = s.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) {
        return {};
    }
    const auto last = s.find_last_not_of(" \t\r\n");
    return s.substr(first, last - first + 1);
}

bool is_override(const toml::source_region& region) {
    return region.path && region.path->starts_with(override_prefix);
}

// FILE:LINE:COLUMN, the override's own text, or the fallback when toml++ knows no place.
std::string place_of(const toml::source_region& region, const std::string& fallback) {
    if (!region.path) {
        return fallback;
    }
    if (is_override(region) || region.begin.line == 0) {
        return *region.path;
    }
    return *region.path + ":" + std::to_string(region.begin.line) + ":" +
           std::to_string(region.begin.column);
}

std::string type_phrase(const toml::node& node) {
    switch (node.type()) {
        case toml::node_type::table:
            return "a table";
        case toml::node_type::array:
            return "an array";
        case toml::node_type::string:
            return "a string";
        case toml::node_type::integer:
            return "an integer";
        case toml::node_type::floating_point:
            return "a floating-point number";
        case toml::node_type::boolean:
            return "a boolean";
        case toml::node_type::date:
            return "a date";
        case toml::node_type::time:
            return "a time";
        case toml::node_type::date_time:
            return "a date-time";
        case toml::node_type::none:
            break;
    }
    return "nothing";
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) {
        row[j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            const std::size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
            row[j] = std::min({above + 1, row[j - 1] + 1, substitution});
            diagonal = above;
        }
    }
    return row[b.size()];
}

// The closest known name directly under `parent` ("" for the top level), within distance 2.
std::string suggestion(const ConfigState& state, const std::string& parent,
                       std::string_view unknown) {
    const std::string prefix = parent.empty() ? std::string() : parent + ".";
    std::string best;
    std::size_t best_distance = 3;
    for (const std::string& name : state.known) {
        if (!name.starts_with(prefix)) {
            continue;
        }
        const std::string_view candidate = std::string_view(name).substr(prefix.size());
        if (candidate.find('.') != std::string_view::npos) {
            continue;
        }
        const std::size_t distance = edit_distance(candidate, unknown);
        if (distance < best_distance) {
            best_distance = distance;
            best = candidate;
        }
    }
    return best;
}

// The table at `path`, or nullptr when a part of the path is absent or not a table.
const toml::table* find_table(const ConfigState& state, const std::vector<std::string>& path) {
    const toml::table* table = &state.root;
    for (const std::string& part : path) {
        const toml::node* node = table->get(part);
        if (node == nullptr || !node->is_table()) {
            return nullptr;
        }
        table = node->as_table();
    }
    return table;
}

std::string table_place(const ConfigState& state, const std::vector<std::string>& path) {
    const toml::table* table = find_table(state, path);
    return table == nullptr ? state.source_name : place_of(table->source(), state.source_name);
}

const toml::node* find_key(const ConfigState& state, const std::vector<std::string>& path,
                           std::string_view key) {
    const toml::table* table = find_table(state, path);
    return table == nullptr ? nullptr : table->get(key);
}

[[noreturn]] void throw_wrong_type(const ConfigState& state, const toml::node& node,
                                   const std::string& key, std::string_view expected) {
    throw InputError(place_of(node.source(), state.source_name), key,
                     "expected " + std::string(expected) + ", got " + type_phrase(node));
}

std::vector<double> to_numbers(const ConfigState& state, const toml::node& node,
                               const std::string& key, std::string_view expected) {
    const toml::array* array = node.as_array();
    if (array == nullptr) {
        throw_wrong_type(state, node, key, expected);
    }
    std::vector<double> out;
    out.reserve(array->size());
    for (const toml::node& element : *array) {
        if (const auto* f = element.as_floating_point()) {
            out.push_back(f->get());
        } else if (const auto* i = element.as_integer()) {
            out.push_back(static_cast<double>(i->get()));
        } else {
            throw InputError(place_of(element.source(), state.source_name), key,
                             "expected " + std::string(expected) + ", element " +
                                 std::to_string(out.size() + 1) + " is " + type_phrase(element));
        }
    }
    return out;
}

template <class T>
T convert(const ConfigState& state, const toml::node& node, const std::string& key) {
    if constexpr (std::is_same_v<T, std::int64_t>) {
        if (const auto* v = node.as_integer()) {
            return v->get();
        }
        throw_wrong_type(state, node, key, "an integer");
    } else if constexpr (std::is_same_v<T, double>) {
        if (const auto* v = node.as_floating_point()) {
            return v->get();
        }
        if (const auto* v = node.as_integer()) {
            return static_cast<double>(v->get());
        }
        throw_wrong_type(state, node, key, "a number");
    } else if constexpr (std::is_same_v<T, bool>) {
        if (const auto* v = node.as_boolean()) {
            return v->get();
        }
        throw_wrong_type(state, node, key, "a boolean (true or false)");
    } else if constexpr (std::is_same_v<T, std::string>) {
        const auto* v = node.as_string();
        if (v == nullptr) throw_wrong_type(state, node, key, "a string");
        if (const auto problem = control_character_problem(v->get(), true)) {
            throw InputError(place_of(node.source(), state.source_name), key, *problem);
        }
        return v->get();
    } else if constexpr (std::is_same_v<T, std::vector<double>>) {
        return to_numbers(state, node, key, "an array of numbers");
    } else {
        constexpr std::size_t n = std::tuple_size_v<T>;
        const std::string expected = "an array of " + std::to_string(n) + " numbers";
        const std::vector<double> values = to_numbers(state, node, key, expected);
        if (values.size() != n) {
            throw InputError(place_of(node.source(), state.source_name), key,
                             "expected " + expected + ", got " + std::to_string(values.size()));
        }
        T out{};
        std::copy(values.begin(), values.end(), out.begin());
        return out;
    }
}

// A TOML basic string holding `text` verbatim.
std::string toml_quoted(std::string_view text) {
    std::string out = "\"";
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (byte < 0x20 || byte == 0x7f) {
            constexpr char hex[] = "0123456789ABCDEF";
            out += "\\u00";
            out += hex[byte >> 4];
            out += hex[byte & 0xf];
        } else {
            out += c;
        }
    }
    out += '"';
    return out;
}

// Whether `table` holds exactly the one chain of keys `parts` (and nothing the value smuggled in).
bool holds_only(const toml::table& table, const std::vector<std::string>& parts) {
    const toml::table* level = &table;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (level->size() != 1 || !level->contains(parts[i])) {
            return false;
        }
        if (i + 1 < parts.size()) {
            level = level->get(parts[i])->as_table();
            if (level == nullptr) {
                return false;
            }
        }
    }
    return true;
}

// `a.b.c = VALUE` parsed with the override as source path, so every node created remembers it.
toml::table parse_override(const std::vector<std::string>& parts, std::string_view value,
                           const std::string& origin, const std::string& key) {
    const std::string dotted = join(parts);
    try {
        toml::table parsed = toml::parse(dotted + " = " + std::string(value), std::string(origin));
        if (holds_only(parsed, parts)) {
            return parsed;
        }
    } catch (const toml::parse_error&) {
        // Not a TOML value: taken as a plain string below.
    }
    try {
        return toml::parse(dotted + " = " + toml_quoted(value), std::string(origin));
    } catch (const toml::parse_error& error) {
        throw InputError(origin, key, "invalid value: " + std::string(error.description()));
    }
}

struct Unknown {
    bool from_override;
    std::uint32_t line;
    std::uint32_t column;
    std::string place, key, what;
};

void collect_unknown(const ConfigState& state, const toml::table& table, const std::string& path,
                     std::vector<Unknown>& out) {
    for (const auto& [key, node] : table) {
        const std::string name = child_name(path, key.str());
        if (state.known.count(name) != 0) {
            if (const toml::table* sub = node.as_table()) {
                collect_unknown(state, *sub, name, out);
            }
            continue;
        }
        std::string what;
        if (path.empty() && node.is_table()) {
            what = "unknown section [" + name + "]";
        } else if (path.empty()) {
            what = "unknown key at the top level";
        } else {
            what = "unknown key in [" + path + "]";
        }
        const std::string near = suggestion(state, path, key.str());
        if (!near.empty()) {
            what += "; did you mean '" + near + "'?";
        }
        const toml::source_region& region = key.source().path ? key.source() : node.source();
        const bool from_override = is_override(region) || region.begin.line == 0;
        out.push_back({from_override, region.begin.line, region.begin.column,
                       place_of(region, state.source_name), name, what});
    }
}

}  // namespace

std::optional<std::string> control_character_problem(std::string_view text, bool whitespace) {
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c >= 0x20 && c != 0x7f) continue;
        if (whitespace && (c == '\t' || c == '\n' || c == '\r')) continue;
        char code[8];
        std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(c));
        return std::string("holds the control character ") + code + " at position " +
               std::to_string(i) + " (plain text expected" +
               (whitespace ? "; tab and newline aside)" : ")");
    }
    return std::nullopt;
}

// ---- ConfigSection ----

ConfigSection::ConfigSection(std::shared_ptr<detail::ConfigState> state,
                             std::vector<std::string> path)
    : state_(std::move(state)), path_(std::move(path)), name_(join(path_)) {}

std::string ConfigSection::full_key(std::string_view key) const { return child_name(name_, key); }

bool ConfigSection::has(std::string_view key) const {
    state_->known.insert(full_key(key));
    return find_key(*state_, path_, key) != nullptr;
}

template <ConfigValue T>
T ConfigSection::get(std::string_view key, T default_value) const {
    const std::string name = full_key(key);
    state_->known.insert(name);
    const toml::node* node = find_key(*state_, path_, key);
    return node == nullptr ? default_value : convert<T>(*state_, *node, name);
}

template <ConfigValue T>
T ConfigSection::require(std::string_view key) const {
    const std::string name = full_key(key);
    state_->known.insert(name);
    const toml::node* node = find_key(*state_, path_, key);
    if (node == nullptr) {
        throw InputError(table_place(*state_, path_), name, "is required but missing");
    }
    return convert<T>(*state_, *node, name);
}

template std::int64_t ConfigSection::get(std::string_view, std::int64_t) const;
template double ConfigSection::get(std::string_view, double) const;
template bool ConfigSection::get(std::string_view, bool) const;
template std::string ConfigSection::get(std::string_view, std::string) const;
template std::vector<double> ConfigSection::get(std::string_view, std::vector<double>) const;
template std::array<double, 2> ConfigSection::get(std::string_view, std::array<double, 2>) const;
template std::array<double, 3> ConfigSection::get(std::string_view, std::array<double, 3>) const;

template std::int64_t ConfigSection::require(std::string_view) const;
template double ConfigSection::require(std::string_view) const;
template bool ConfigSection::require(std::string_view) const;
template std::string ConfigSection::require(std::string_view) const;
template std::vector<double> ConfigSection::require(std::string_view) const;
template std::array<double, 2> ConfigSection::require(std::string_view) const;
template std::array<double, 3> ConfigSection::require(std::string_view) const;

std::string ConfigSection::place(std::string_view key) const {
    const toml::node* node = find_key(*state_, path_, key);
    return node == nullptr ? table_place(*state_, path_)
                           : place_of(node->source(), state_->source_name);
}

std::filesystem::path ConfigSection::path(std::string_view key,
                                          std::string_view default_value) const {
    const std::string text = default_value.empty()
                                 ? require<std::string>(key)
                                 : get<std::string>(key, std::string(default_value));
    if (text.empty()) fail(key, "must not be empty (a path expected)");
    if (const auto problem = control_character_problem(text, false)) fail(key, *problem);
    return text;
}

void ConfigSection::fail(std::string_view key, std::string_view what) const {
    throw InputError(place(key), full_key(key), what);
}

std::vector<std::string> ConfigSection::keys() const {
    std::vector<std::string> out;
    if (const toml::table* table = find_table(*state_, path_)) {
        for (const auto& entry : *table) {
            out.emplace_back(entry.first.str());
        }
    }
    return out;
}

bool ConfigSection::is_table(std::string_view key) const {
    const toml::node* node = find_key(*state_, path_, key);
    return node != nullptr && node->is_table();
}

bool ConfigSection::is_string(std::string_view key) const {
    const toml::node* node = find_key(*state_, path_, key);
    return node != nullptr && node->is_string();
}

std::filesystem::path ConfigSection::base_directory() const {
    std::error_code error;
    const std::filesystem::path source(state_->source_name);
    if (std::filesystem::is_regular_file(source, error)) return source.parent_path();
    return std::filesystem::current_path();
}

ConfigSection ConfigSection::subsection(std::string_view name) const {
    const std::string full = full_key(name);
    state_->known.insert(full);
    const toml::node* node = find_key(*state_, path_, name);
    if (node != nullptr && !node->is_table()) {
        throw_wrong_type(*state_, *node, full, "a table [" + full + "]");
    }
    std::vector<std::string> path = path_;
    path.emplace_back(name);
    return ConfigSection(state_, std::move(path));
}

// ---- Config ----

Config::Config(std::shared_ptr<detail::ConfigState> state) : state_(std::move(state)) {}

Config::~Config() = default;

// An input file is text a person wrote: 256 MiB is far past any real one, and bounds what a
// wrong path (a log, a core dump) costs before the TOML parser refuses it.
constexpr std::uintmax_t max_input_bytes = std::uintmax_t{256} << 20;

Config Config::from_file(const std::filesystem::path& path) {
    const std::string name = path.string();
    if (const auto problem = solvers::input_file_problem(path, max_input_bytes)) {
        throw InputError(name + ": cannot read the input file: " + *problem);
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw InputError(name + ": cannot read the input file: " + std::strerror(errno));
    }
    std::ostringstream text;
    text << in.rdbuf();
    if (text.tellp() > static_cast<std::streamoff>(max_input_bytes)) {
        throw InputError(name + ": cannot read the input file: it grew past " +
                         std::to_string(max_input_bytes >> 20) + " MiB while being read");
    }
    if (in.bad()) {
        throw InputError(name + ": cannot read the input file: read failed");
    }
    return from_string(text.str(), name);
}

Config Config::from_string(std::string_view text, std::string source_name) {
    auto state = std::make_shared<ConfigState>();
    state->source_name = std::move(source_name);
    state->text = std::string(text);
    try {
        state->root = toml::parse(state->text, std::string(state->source_name));
    } catch (const toml::parse_error& error) {
        throw InputError(place_of(error.source(), state->source_name) +
                         ": TOML syntax error: " + std::string(error.description()));
    }
    return Config(std::move(state));
}

namespace {

// KEY's parts, or InputError at `origin` when KEY is not a dotted name.
std::vector<std::string> key_parts(std::string_view key, const std::string& origin) {
    const std::vector<std::string> parts = split_dotted(key);
    if (!std::all_of(parts.begin(), parts.end(), is_bare_key)) {
        throw InputError(origin, key,
                         "is not a key name (expected dotted names of letters, digits, '_' and "
                         "'-', such as grid.nx)");
    }
    return parts;
}

// Puts the one value of `incoming` (a table holding only the path `parts`) into `root`,
// creating missing tables; a value never replaces a table, nor a table a value.
void merge(toml::table& root, const std::vector<std::string>& parts, toml::table& incoming,
           const std::string& origin) {
    const std::string dotted = join(parts);
    toml::table* target = &root;
    toml::table* source = &incoming;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        toml::node* existing = target->get(parts[i]);
        toml::node* node = source->get(parts[i]);
        const bool last = i + 1 == parts.size();
        if (existing == nullptr || (last && !existing->is_table())) {
            target->insert_or_assign(parts[i], std::move(*node));
            return;
        }
        if (last) {
            throw InputError(origin, dotted,
                             "cannot replace the table [" + dotted +
                                 "] with a value; set its keys instead, e.g. --set " + dotted +
                                 ".NAME=VALUE");
        }
        if (!existing->is_table()) {
            const std::string prefix = join(parts, i + 1);
            throw InputError(origin, prefix,
                             "is " + type_phrase(*existing) + ", not a table, so '" + dotted +
                                 "' cannot be set");
        }
        target = existing->as_table();
        source = node->as_table();
    }
}

}  // namespace

void Config::apply_override(std::string_view assignment) {
    const std::size_t equals = assignment.find('=');
    const std::string_view key = trim(assignment.substr(0, equals));
    if (equals == std::string_view::npos || key.empty()) {
        throw InputError("--set expects key=value, got '" + std::string(assignment) + "'");
    }
    const std::string_view value = trim(assignment.substr(equals + 1));
    const std::string origin = std::string(override_prefix) + std::string(assignment);
    const std::vector<std::string> parts = key_parts(key, origin);
    toml::table parsed = parse_override(parts, value, origin, join(parts));
    merge(state_->root, parts, parsed, origin);
}

void Config::set(std::string_view key, const Value& value, std::string_view origin) {
    const std::vector<std::string> parts = key_parts(key, std::string(origin));
    toml::table incoming;
    toml::table* table = &incoming;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
        table = table->insert(parts[i], toml::table{}).first->second.as_table();
    }
    std::visit([&](const auto& v) { table->insert(parts.back(), v); }, value);
    merge(state_->root, parts, incoming, std::string(origin));
}

const std::string& Config::text() const { return state_->text; }

const std::string& Config::source_name() const { return state_->source_name; }

std::string Config::effective_toml() const {
    std::ostringstream out;
    out << state_->root;
    return out.str();
}

ConfigSection Config::section(std::string_view name) const {
    const std::vector<std::string> parts = split_dotted(name);
    const toml::table* table = &state_->root;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const std::string prefix = join(parts, i + 1);
        state_->known.insert(prefix);
        const toml::node* node = table == nullptr ? nullptr : table->get(parts[i]);
        if (node != nullptr && !node->is_table()) {
            throw_wrong_type(*state_, *node, prefix, "a table [" + prefix + "]");
        }
        table = node == nullptr ? nullptr : node->as_table();
    }
    return ConfigSection(state_, parts);
}

void Config::check_all_used() const {
    std::vector<Unknown> unknown;
    collect_unknown(*state_, state_->root, "", unknown);
    if (unknown.empty()) {
        return;
    }
    const auto first =
        std::min_element(unknown.begin(), unknown.end(), [](const Unknown& a, const Unknown& b) {
            return std::tie(a.from_override, a.line, a.column) <
                   std::tie(b.from_override, b.line, b.column);
        });
    throw InputError(first->place, first->key, first->what);
}

}  // namespace simrun::framework
