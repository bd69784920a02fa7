#include "simrun/framework/run/stop_signals.hpp"

#include <unistd.h>

#include <csignal>
#include <stdexcept>
#include <utility>

namespace simrun::framework {
namespace {

volatile std::sig_atomic_t received_signal = 0;
volatile std::sig_atomic_t announce_stop = 0;
bool installed = false;
struct sigaction previous_interrupt, previous_terminate;

constexpr char stop_message[] =
    "\nsimrun: stopping after this step (signalled; signal again to stop at once)\n";

void record(int signal) {
    if (received_signal == 0) received_signal = signal;
    if (announce_stop != 0) {
        // write(2) is async-signal-safe; what it returns changes nothing here.
        [[maybe_unused]] const ssize_t written =
            write(STDERR_FILENO, stop_message, sizeof stop_message - 1);
    }
}

}  // namespace

StopSignals::StopSignals(bool announce) {
    if (installed) throw std::logic_error("StopSignals: one at a time");
    received_signal = 0;
    announce_stop = announce ? 1 : 0;
    struct sigaction action {};
    action.sa_handler = record;
    sigemptyset(&action.sa_mask);
    // SA_RESETHAND: the disposition goes back to the default as the handler runs, so a second
    // signal of the kind acts at once. SA_RESTART: system calls the signal interrupts resume.
    action.sa_flags = SA_RESETHAND | SA_RESTART;
    // A signal the process was started ignoring (SIGINT for a shell's background job, nohup)
    // stays ignored.
    for (const auto& [signal, previous] :
         {std::pair{SIGINT, &previous_interrupt}, std::pair{SIGTERM, &previous_terminate}}) {
        sigaction(signal, nullptr, previous);
        if (previous->sa_handler != SIG_IGN) sigaction(signal, &action, nullptr);
    }
    installed = true;
}

StopSignals::~StopSignals() {
    sigaction(SIGINT, &previous_interrupt, nullptr);
    sigaction(SIGTERM, &previous_terminate, nullptr);
    installed = false;
}

int StopSignals::received() const { return received_signal; }

std::string signal_name(int signal) {
    if (signal == SIGINT) return "SIGINT";
    if (signal == SIGTERM) return "SIGTERM";
    return "signal " + std::to_string(signal);
}

}  // namespace simrun::framework
