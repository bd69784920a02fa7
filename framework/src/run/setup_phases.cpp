#include "simrun/framework/run/setup_phases.hpp"

#include <algorithm>
#include <cstdio>

namespace simrun::framework {

namespace {

// "name 0.123 s", as the header prints a phase.
std::string phase(const char* name, double seconds) {
    char text[64];
    std::snprintf(text, sizeof text, "%s %.3f s", name, seconds);
    return text;
}

// Whether `seconds` shows as more than 0.000 in the header.
bool shown(double seconds) { return seconds >= 0.0005; }

}  // namespace

double SetupPhases::other() const {
    const double named = input + context + coefficients + compilation + assembly + analysis +
                         solver + data_term + initial_state + first_step_data;
    return std::max(0.0, total - named);
}

std::string describe_setup(const SetupPhases& phases) {
    char total[32];
    std::snprintf(total, sizeof total, "%.3f s: ", phases.total);
    std::string text = total + phase("input", phases.input);
    if (shown(phases.context)) text += ", " + phase("context", phases.context);
    if (shown(phases.coefficients)) {
        text += ", " + phase("coefficient check", phases.coefficients);
    }
    if (shown(phases.compilation) || phases.compilation_cached) {
        text += ", " + phase("compilation", phases.compilation);
        if (phases.compilation_cached) text += " (cached)";
    }
    text += ", " + phase("assembly", phases.assembly) + ", " +
            phase("matrix analysis", phases.analysis) + ", " +
            phase("solver set-up", phases.solver);
    if (shown(phases.data_term)) text += ", " + phase("data term", phases.data_term);
    if (shown(phases.initial_state)) text += ", " + phase("initial state", phases.initial_state);
    if (shown(phases.first_step_data)) {
        text += ", " + phase("first step's data", phases.first_step_data);
    }
    if (shown(phases.other())) text += ", " + phase("other", phases.other());
    return text;
}

std::string setup_decisions(const SetupPhases& phases) {
    std::string text;
    const auto line = [&](const char* key, double seconds) {
        char value[96];
        std::snprintf(value, sizeof value, "setup.%s = %.6f\n", key, seconds);
        text += value;
    };
    line("total", phases.total);
    line("input", phases.input);
    line("context", phases.context);
    line("coefficients", phases.coefficients);
    line("compilation", phases.compilation);
    text += std::string("setup.compilation_cached = ") +
            (phases.compilation_cached ? "true" : "false") + "\n";
    line("assembly", phases.assembly);
    line("analysis", phases.analysis);
    line("solver", phases.solver);
    line("data_term", phases.data_term);
    line("initial_state", phases.initial_state);
    line("first_step_data", phases.first_step_data);
    line("other", phases.other());
    return text;
}

}  // namespace simrun::framework
