// A stop asked by signal (run/stop_signals.hpp): recorded while a StopSignals lives, either
// signal a second time acting as without it, the dispositions found restored after, and a
// signal the process ignores left ignored. raise() delivers to this thread at once.
#include "simrun/framework/run/stop_signals.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <stdexcept>
#include <string>

namespace simrun::framework {
namespace {

// The disposition of `signal` now.
void (*disposition(int signal))(int) {
    struct sigaction current {};
    sigaction(signal, nullptr, &current);
    return current.sa_handler;
}

void custom(int) {}

// Sets `signal`'s handler for the test's length, restored after.
class Disposition {
public:
    Disposition(int signal, void (*handler)(int)) : signal_(signal) {
        struct sigaction action {};
        action.sa_handler = handler;
        sigemptyset(&action.sa_mask);
        sigaction(signal, &action, &previous_);
    }
    ~Disposition() { sigaction(signal_, &previous_, nullptr); }

private:
    int signal_;
    struct sigaction previous_ {};
};

TEST(StopSignals, RecordsTheFirstSignalThenLeavesEitherToActAndRestoresAfter) {
    const Disposition interrupt(SIGINT, custom), terminate(SIGTERM, custom);
    {
        const StopSignals signals(false);
        EXPECT_EQ(signals.received(), 0);
        EXPECT_NE(disposition(SIGTERM), custom);
        std::raise(SIGTERM);  // recorded: the test goes on
        EXPECT_EQ(signals.received(), SIGTERM);
        // A second signal of either kind would now end the process.
        EXPECT_EQ(disposition(SIGTERM), SIG_DFL);
        EXPECT_EQ(disposition(SIGINT), SIG_DFL);
    }
    EXPECT_EQ(disposition(SIGINT), custom);
    EXPECT_EQ(disposition(SIGTERM), custom);
}

TEST(StopSignals, ASignalTheProcessIgnoresStaysIgnored) {
    const Disposition interrupt(SIGINT, SIG_IGN), terminate(SIGTERM, custom);
    {
        const StopSignals signals(false);
        EXPECT_EQ(disposition(SIGINT), SIG_IGN);
        std::raise(SIGINT);
        EXPECT_EQ(signals.received(), 0);
        std::raise(SIGTERM);
        EXPECT_EQ(signals.received(), SIGTERM);
        EXPECT_EQ(disposition(SIGINT), SIG_IGN);
    }
    EXPECT_EQ(disposition(SIGINT), SIG_IGN);
    EXPECT_EQ(disposition(SIGTERM), custom);
}

TEST(StopSignals, OneAtATimeAndEachStartsUnsignalled) {
    const Disposition interrupt(SIGINT, custom), terminate(SIGTERM, custom);
    {
        const StopSignals signals(false);
        EXPECT_THROW(StopSignals(false), std::logic_error);
        std::raise(SIGINT);
        EXPECT_EQ(signals.received(), SIGINT);
    }
    const StopSignals again(false);
    EXPECT_EQ(again.received(), 0);
}

TEST(StopSignals, NamesTheSignals) {
    EXPECT_EQ(signal_name(SIGINT), "SIGINT");
    EXPECT_EQ(signal_name(SIGTERM), "SIGTERM");
    EXPECT_EQ(signal_name(SIGHUP), "signal " + std::to_string(SIGHUP));
}

}  // namespace
}  // namespace simrun::framework
