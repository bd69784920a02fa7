#pragma once
// An error in the user's input: a TOML file, a --set override, an expression, an option value.
// The command line reports what() and exits with code 2.
//
// Message convention, used by every part of simrun that reports input errors:
//     PLACE: key 'SECTION.NAME': WHAT
// PLACE is FILE:LINE:COLUMN (1-based) of the offending node, just FILE when no line is known,
// or `--set SECTION.NAME=VALUE` (the user's own words) when the value came from the command
// line. WHAT says what was expected and what was found ("expected an integer, got a string",
// "must be >= 3, got 0").
#include <stdexcept>
#include <string>
#include <string_view>

namespace simrun::framework {

class InputError : public std::runtime_error {
public:
    explicit InputError(const std::string& message) : std::runtime_error(message) {}

    // Builds "PLACE: key 'KEY': WHAT"; an empty place or key leaves out its part.
    InputError(std::string_view place, std::string_view key, std::string_view what)
        : std::runtime_error(format(place, key, what)) {}

    static std::string format(std::string_view place, std::string_view key, std::string_view what) {
        std::string message;
        if (!place.empty()) {
            message.append(place).append(": ");
        }
        if (!key.empty()) {
            message.append("key '").append(key).append("': ");
        }
        message.append(what);
        return message;
    }
};

}  // namespace simrun::framework
