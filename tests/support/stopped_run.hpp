#pragma once
// A run stopped by a signal once it has written some output steps (run/stop_signals.hpp): the
// shell lines that wait for the listing, and the steps its outputs then hold.
#include <sys/wait.h>

#include <cstdint>
#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "support/run_simrun.hpp"

namespace simrun::testing {

// Shell lines that wait (30 s at most) until out/heat.xmf lists `steps` steps.
inline std::string wait_until_xmf_lists(int steps) {
    return "for i in $(seq 600); do\n"
           "  n=$(grep -c '<Grid Name=\"step_' out/heat.xmf 2>/dev/null)\n"
           "  [ \"${n:-0}\" -ge " +
           std::to_string(steps) +
           " ] && break; sleep 0.05\n"
           "done\n";
}

// Writes `script` as stop.sh in `dir`, runs it there with bash, and gives its exit code (-1
// where it did not exit) and the run's stderr, which the script sends to err.txt.
inline CommandResult run_stop_script(const TemporaryDirectory& dir, const std::string& script) {
    dir.write("stop.sh", script);
    const int status = std::system(("cd '" + dir.path().string() + "' && bash stop.sh").c_str());
    CommandResult result;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.err = read_text(dir.path() / "err.txt");
    return result;
}

// The steps the outputs of a run writing every `every`th step hold once it stopped by
// `signal_name` ("SIGTERM"): 0, every, 2 every, ... and the step its message (`err`, "stopped
// by SIGTERM after step N") names. Empty where the message is missing.
inline std::vector<std::int64_t> steps_of_stopped_run(const std::string& err,
                                                      const std::string& signal_name,
                                                      std::int64_t every) {
    std::smatch match;
    if (!std::regex_search(err, match,
                           std::regex("stopped by " + signal_name + " after step (\\d+)"))) {
        return {};
    }
    const std::int64_t last = std::stoll(match[1].str());
    std::vector<std::int64_t> steps;
    for (std::int64_t step = 0; step < last; step += every) steps.push_back(step);
    steps.push_back(last);
    return steps;
}

}  // namespace simrun::testing
