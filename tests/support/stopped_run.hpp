#pragma once
// A run stopped by a signal once it has written some output steps (run/stop_signals.hpp): the
// shell lines that wait for the listing, and the steps its outputs then hold.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>
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

// The steps the outputs of a run that `stopped` (run_stop_script) hold, writing every `every`th
// of its `steps` steps: 0, every, 2 every, ... and the step its message names ("stopped by
// SIGTERM after step N"). Empty (the reason recorded as a test failure) where it did not exit
// with the shell's code for `signal` (SIGINT or SIGTERM), says no such step, or names its last
// step (it ended before the signal).
inline std::vector<std::int64_t> steps_of_stopped_run(const CommandResult& stopped, int signal,
                                                      std::int64_t every, std::int64_t steps) {
    EXPECT_EQ(stopped.exit_code, 128 + signal) << stopped.err;
    const std::string name = signal == SIGINT ? "SIGINT" : "SIGTERM";
    std::smatch match;
    if (stopped.exit_code != 128 + signal ||
        !std::regex_search(stopped.err, match,
                           std::regex("stopped by " + name + " after step (\\d+)"))) {
        ADD_FAILURE() << "no stop by " << name << " said: " << stopped.err;
        return {};
    }
    const std::int64_t last = std::stoll(match[1].str());
    if (last >= steps) {
        ADD_FAILURE() << "the run ended before the signal: " << stopped.err;
        return {};
    }
    std::vector<std::int64_t> written;
    for (std::int64_t step = 0; step < last; step += every) written.push_back(step);
    written.push_back(last);
    return written;
}

}  // namespace simrun::testing
