#pragma once
// One list of names per enum: the words the TOML input, the command line, the reports and the
// HDF5 attributes use for its values, written once where the enum is declared:
//
//     template <>
//     inline constexpr std::array enum_names<Format> = {
//         EnumName{Format::dia, "dia"}, EnumName{Format::stencil, "stencil"}, ...};
//
// name_of gives a value's name, parse_enum reads one back (throwing std::invalid_argument that
// lists the accepted names), enum_name_list writes them for messages ("dia, ell or csr").
#include <array>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace simrun::solvers {

template <typename E>
struct EnumName {
    E value;
    std::string_view name;
};

// Specialised for each enum with every value once, in the order messages list them.
template <typename E>
inline constexpr std::array<EnumName<E>, 0> enum_names{};

template <typename E>
constexpr std::string_view name_of(E value) {
    for (const auto& entry : enum_names<E>) {
        if (entry.value == value) return entry.name;
    }
    return "unknown";
}

// Every name in the table's order, after `extra` when given (e.g. "auto", for a setting that
// lets the selector decide).
template <typename E>
std::vector<std::string> enum_name_strings(std::string_view extra = {}) {
    std::vector<std::string> names;
    if (!extra.empty()) names.emplace_back(extra);
    for (const auto& entry : enum_names<E>) names.emplace_back(entry.name);
    return names;
}

// The words as a message lists them: "a, b or c".
inline std::string word_list(const std::vector<std::string>& words) {
    std::string list;
    for (std::size_t i = 0; i < words.size(); ++i) {
        if (i > 0) list += i + 1 == words.size() ? " or " : ", ";
        list += words[i];
    }
    return list;
}

// "a, b or c", with `extra` first when given.
template <typename E>
std::string enum_name_list(std::string_view extra = {}) {
    return word_list(enum_name_strings<E>(extra));
}

// The value named `text`; throws std::invalid_argument("unknown WHAT 'TEXT' (expected ...)"),
// listing `extra` too where the caller accepts it beside the enum's names (e.g. "auto").
template <typename E>
E parse_enum(std::string_view text, std::string_view what, std::string_view extra = {}) {
    for (const auto& entry : enum_names<E>) {
        if (entry.name == text) return entry.value;
    }
    throw std::invalid_argument("unknown " + std::string(what) + " '" + std::string(text) +
                                "' (expected " + enum_name_list<E>(extra) + ")");
}

}  // namespace simrun::solvers
