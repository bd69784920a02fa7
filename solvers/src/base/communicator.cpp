#include "simrun/solvers/base/communicator.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace simrun::solvers {
namespace {

// The all_or_none whose local work the calling thread is in; null outside.
thread_local const CallSite* local_work_site = nullptr;

// "file.cpp:123 (Class::function)": the file's name without its folders, and the function's
// without namespaces, parameters or lambdas.
std::string place(const CallSite& site) {
    const std::string file = site.file_name();
    std::string function = site.function_name();
    function = function.substr(0, function.find('('));
    function = function.substr(function.find_last_of(' ') + 1);
    for (const std::string_view space : {"simrun::solvers::", "simrun::framework::"}) {
        if (function.starts_with(space)) function.erase(0, space.size());
    }
    return file.substr(file.find_last_of('/') + 1) + ":" + std::to_string(site.line()) + " (" +
           function + ")";
}

// One rank's view of a collective, of fixed size so that every rank's fits one gather.
struct CollectiveRecord {
    std::uint64_t count = 0;
    char text[200] = {};  // "<operation> at <place>", cut to fit

    CollectiveRecord(std::uint64_t number, std::string_view operation, const CallSite& site)
        : count(number) {
        const std::string what = std::string(operation) + " at " + place(site);
        std::memcpy(text, what.data(), std::min(what.size(), sizeof text - 1));
    }
    bool operator==(const CollectiveRecord& other) const {
        return count == other.count && std::strncmp(text, other.text, sizeof text) == 0;
    }
};

}  // namespace

double Communicator::sum(double value, CallSite site) const {
    sum(std::span<double>(&value, 1), site);
    return value;
}

void Communicator::enter_collective(std::string_view operation, CallSite site) const {
    if (local_work_site != nullptr) {
        throw std::logic_error("collective " + std::string(operation) + " at " + place(site) +
                               " inside the local work of all_or_none at " +
                               place(*local_work_site) +
                               ": a rank that fails there would leave the others waiting");
    }
    if (size() == 1 || !checks_collectives_) return;
    const CollectiveRecord mine(++collectives_, operation, site);
    const auto all = gather_bytes(std::as_bytes(std::span(&mine, 1)));
    std::string views;
    bool diverged = false;
    for (std::size_t r = 0; r < all.size(); ++r) {
        CollectiveRecord theirs = mine;
        std::memcpy(&theirs, all[r].data(), sizeof theirs);
        diverged = diverged || !(theirs == mine);
        views += "\n  rank " + std::to_string(r) + ": collective #" + std::to_string(theirs.count) +
                 ", " + theirs.text;
    }
    if (!diverged) return;
    std::fprintf(stderr,
                 "simrun: rank %d: the ranks' collectives diverged (SIMRUN_CHECK_COLLECTIVES); "
                 "each rank's next one:%s\n",
                 rank(), views.c_str());
    std::fflush(stderr);
    abort(3);
}

bool collective_checks_asked() {
    const char* value = std::getenv("SIMRUN_CHECK_COLLECTIVES");
    return value != nullptr && std::string(value) != "0" && std::string(value) != "";
}

LocalWork::LocalWork(const CallSite& site) : outer_(local_work_site) { local_work_site = &site; }

LocalWork::~LocalWork() { local_work_site = outer_; }

namespace detail {

void agree_on_failure(const Communicator& ranks, const std::exception_ptr& failure,
                      const CallSite& site) {
    // The lowest failing rank, or size() where none failed.
    const double first = ranks.min(failure ? ranks.rank() : ranks.size(), site);
    if (failure) std::rethrow_exception(failure);
    if (first < ranks.size()) throw PeerFailure(static_cast<int>(first));
}

}  // namespace detail

void exchange_with_neighbours(const Communicator& ranks, std::span<std::byte> to_before,
                              std::span<std::byte> from_before, std::span<std::byte> to_after,
                              std::span<std::byte> from_after) {
    std::vector<Message> sends, receives;
    const int rank = ranks.rank();
    if (!to_before.empty() || !from_before.empty()) {
        sends.push_back({rank - 1, to_before});
        receives.push_back({rank - 1, from_before});
    }
    if (!to_after.empty() || !from_after.empty()) {
        sends.push_back({rank + 1, to_after});
        receives.push_back({rank + 1, from_after});
    }
    if (sends.empty()) return;
    ranks.start_exchange(sends, receives)->finish();
}

namespace {

class SingleProcess final : public Communicator {
public:
    int rank() const override { return 0; }
    int size() const override { return 1; }
    int host_rank() const override { return 0; }
    std::unique_ptr<PendingExchange> start_exchange(
        std::span<const Message> sends, std::span<const Message> receives) const override {
        struct Nothing final : PendingExchange {
            void finish() override {}
        };
        // One process has no other rank to exchange with.
        if (!sends.empty() || !receives.empty()) std::abort();
        return std::make_unique<Nothing>();
    }
    [[noreturn]] void abort(int code) const override { std::_Exit(code); }
    std::string describe() const override { return "one process"; }

protected:
    void reduce_sum(std::span<double>) const override {}
    double reduce_min(double value) const override { return value; }
    std::vector<std::vector<std::byte>> gather_bytes(
        std::span<const std::byte> bytes) const override {
        return {std::vector<std::byte>(bytes.begin(), bytes.end())};
    }
    std::vector<double> gather_values(std::span<const double> values, int) const override {
        return {values.begin(), values.end()};
    }
    void meet() const override {}
    std::shared_ptr<const Communicator> make_duplicate() const override { return single_process(); }
};

}  // namespace

std::shared_ptr<const Communicator> single_process() {
    static const auto one = std::make_shared<const SingleProcess>();
    return one;
}

}  // namespace simrun::solvers
