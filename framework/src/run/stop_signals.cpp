#include "simrun/framework/run/stop_signals.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <stdexcept>
#include <utility>

namespace simrun::framework {
namespace {

// Written by the handler on whichever thread the signal lands, read by the run's thread: atomics
// that need no lock are safe in a handler.
std::atomic<int> received_signal{0};
std::atomic<bool> announce_stop{false};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free);
// The signals this object handles (not those the process was started ignoring), with the
// dispositions found.
struct Handled {
    int signal;
    bool installed = false;
    struct sigaction previous {};
};
Handled handled[2] = {{SIGINT, false, {}}, {SIGTERM, false, {}}};
bool active = false;

constexpr char stop_message[] =
    "\nsimrun: stopping after this step (signalled; signal again to stop at once)\n";

void record(int signal) {
    const int saved_errno = errno;  // the interrupted code's
    int none = 0;
    received_signal.compare_exchange_strong(none, signal);
    // Either signal a second time acts as it would have without the handler (sigaction is
    // async-signal-safe).
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    for (const Handled& h : handled) {
        if (h.installed) sigaction(h.signal, &default_action, nullptr);
    }
    if (announce_stop.load()) {
        // write(2) is async-signal-safe; what it returns changes nothing here.
        [[maybe_unused]] const ssize_t written =
            write(STDERR_FILENO, stop_message, sizeof stop_message - 1);
    }
    errno = saved_errno;
}

}  // namespace

StopSignals::StopSignals(bool announce) {
    if (active) throw std::logic_error("StopSignals: one at a time");
    received_signal.store(0);
    announce_stop.store(announce);
    struct sigaction action {};
    action.sa_handler = record;
    sigemptyset(&action.sa_mask);
    // SA_RESTART: system calls the signal interrupts resume.
    action.sa_flags = SA_RESTART;
    // A signal the process was started ignoring (SIGINT for a shell's background job, nohup)
    // stays ignored.
    for (Handled& h : handled) {
        sigaction(h.signal, nullptr, &h.previous);
        h.installed = h.previous.sa_handler != SIG_IGN;
    }
    for (const Handled& h : handled) {
        if (h.installed) sigaction(h.signal, &action, nullptr);
    }
    active = true;
}

StopSignals::~StopSignals() {
    for (Handled& h : handled) {
        if (h.installed) sigaction(h.signal, &h.previous, nullptr);
        h.installed = false;
    }
    active = false;
}

int StopSignals::received() const { return received_signal.load(); }

std::string signal_name(int signal) {
    if (signal == SIGINT) return "SIGINT";
    if (signal == SIGTERM) return "SIGTERM";
    return "signal " + std::to_string(signal);
}

}  // namespace simrun::framework
