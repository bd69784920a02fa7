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

    // Builds "PLACE: key 'KEY': WHAT"; an empty place or key leaves out its part. The place and
    // the key are kept apart too, for callers that hand them on as data (the Python module).
    InputError(std::string_view place, std::string_view key, std::string_view what)
        : std::runtime_error(format(place, key, what)), place_(place), key_(key) {}

    // The PLACE and KEY the error was built from; empty for an error given as one message.
    const std::string& place() const { return place_; }
    const std::string& key() const { return key_; }

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

private:
    std::string place_;
    std::string key_;
};

}  // namespace simrun::framework
