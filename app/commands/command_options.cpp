#include "command_options.hpp"

#include <algorithm>

namespace simrun::app {

framework::Config load(const InputArguments& arguments) {
    framework::Config config = framework::Config::from_file(arguments.file);
    for (const auto& assignment : arguments.overrides) config.apply_override(assignment);
    return config;
}

std::optional<std::array<std::int64_t, 3>> parse_process_grid(const std::string& text) {
    std::array<std::int64_t, 3> parts{1, 1, 1};
    std::size_t axis = 0, at = 0;
    for (;;) {
        const std::size_t end = std::min(text.find('x', at), text.size());
        const std::string number = text.substr(at, end - at);
        if (axis == 3 || number.empty() || number.size() > 6 ||
            number.find_first_not_of("0123456789") != std::string::npos || std::stoll(number) < 1) {
            return std::nullopt;
        }
        parts[axis++] = std::stoll(number);
        if (end == text.size()) break;
        at = end + 1;
    }
    if (axis < 2) return std::nullopt;
    return parts;
}

void add_process_grid_option(CLI::App& app, std::string& process_grid) {
    app.add_option("--process-grid", process_grid,
                   "Under MPI, split the grid into PxQ (2D) or PxQxR (3D) boxes, one per rank "
                   "(default: slabs across the slowest axis, which multigrid over ranks needs)")
        ->option_text("PxQ[xR]")
        ->check([](const std::string& text) {
            return parse_process_grid(text) ? std::string()
                                            : "expected PxQ or PxQxR, positive whole numbers "
                                              "(e.g. 2x2), not '" +
                                                  text + "'";
        });
}

std::string plain_path(const std::string& text) {
    const auto problem = framework::control_character_problem(text, false);
    return problem ? "the path " + *problem : std::string();
}

std::string joined(const std::vector<std::string>& words) {
    std::string text;
    for (const auto& word : words) text += (text.empty() ? "" : "|") + word;
    return text;
}

}  // namespace simrun::app
