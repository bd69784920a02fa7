#pragma once
// Small helpers the problem modules share: reading expressions from their [problem] section.
#include <optional>
#include <string>

#include "simrun/framework/config/config.hpp"
#include "simrun/framework/discretisation/expression.hpp"

namespace simrun::problems {

// The expression under `key`, or default_text when absent (required when default_text is empty).
inline framework::Expression read_expression(const framework::ConfigSection& section,
                                             const char* key,
                                             std::optional<std::string> default_text = {}) {
    const std::string text = default_text ? section.get<std::string>(key, *default_text)
                                          : section.require<std::string>(key);
    return framework::Expression(text, section.full_key(key), section.place(key));
}

// The optional exact solution (key `exact`).
inline std::optional<framework::Expression> read_exact(const framework::ConfigSection& section) {
    if (!section.has("exact")) return std::nullopt;
    return read_expression(section, "exact");
}

// A coefficient given as a number or an expression (e.g. `k = 2.0` or `k = "1 + x*y"`).
inline framework::Expression read_coefficient(const framework::ConfigSection& section,
                                              const char* key, double default_value) {
    if (section.is_string(key)) return read_expression(section, key);
    const double value = section.get<double>(key, default_value);
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", value);
    return framework::Expression(text, section.full_key(key), section.place(key));
}

}  // namespace simrun::problems
