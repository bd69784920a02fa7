#include "simrun/framework/distributed/agreement.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "simrun/framework/config/input_error.hpp"
#include "simrun/solvers/base/errors.hpp"

namespace simrun::framework {
namespace {

// On the wire: the kind (-1: no failure; `peer`: this rank stopped because another failed, see
// solvers::all_or_none) and the message.
constexpr std::int32_t peer = 100;

// What a failure is: its kind on the wire, whether the ranks agree on it, and its message.
struct Classified {
    std::int32_t kind;
    bool agreed;
    std::string message;
};

Classified classify(std::exception_ptr failure) {
    const auto as = [](AgreedFailure::Kind kind, bool agreed, const std::exception& e) {
        return Classified{static_cast<std::int32_t>(kind), agreed, e.what()};
    };
    try {
        std::rethrow_exception(failure);
    } catch (const solvers::PeerFailure& e) {
        return {peer, true, e.what()};
    } catch (const InputError& e) {
        return as(AgreedFailure::Kind::input, true, e);
    } catch (const std::invalid_argument& e) {
        return as(AgreedFailure::Kind::input, true, e);
    } catch (const solvers::NotCompiled& e) {
        return as(AgreedFailure::Kind::usage, true, e);
    } catch (const solvers::DeviceUnavailable& e) {
        return as(AgreedFailure::Kind::usage, true, e);
    } catch (const FailureOnEveryRank& e) {
        return as(AgreedFailure::Kind::failure, true, e);
    } catch (const std::exception& e) {
        return as(AgreedFailure::Kind::failure, false, e);
    } catch (...) {
        return {static_cast<std::int32_t>(AgreedFailure::Kind::failure), false,
                "an unknown exception"};
    }
}

std::vector<std::byte> record(std::exception_ptr failure) {
    const Classified c = failure ? classify(failure) : Classified{-1, true, {}};
    std::vector<std::byte> bytes(sizeof c.kind + c.message.size());
    std::memcpy(bytes.data(), &c.kind, sizeof c.kind);
    std::memcpy(bytes.data() + sizeof c.kind, c.message.data(), c.message.size());
    return bytes;
}

}  // namespace

bool agreed_on(std::exception_ptr failure) { return classify(failure).agreed; }

void agree(const solvers::Communicator& ranks, std::exception_ptr failure) {
    if (ranks.size() == 1) {
        if (failure) std::rethrow_exception(failure);
        return;
    }
    const auto records = ranks.all_gather(record(failure));
    int first = -1, failed = 0, stopped_by = -1;
    std::string message;
    bool same = true;
    std::int32_t kind = -1;
    for (std::size_t r = 0; r < records.size(); ++r) {
        std::int32_t k = -1;
        std::memcpy(&k, records[r].data(), sizeof k);
        if (k < 0) continue;
        const std::string text(reinterpret_cast<const char*>(records[r].data()) + sizeof k,
                               records[r].size() - sizeof k);
        if (k == peer) {  // the failing rank's own record carries the cause
            if (stopped_by < 0) stopped_by = static_cast<int>(r);
            continue;
        }
        ++failed;
        if (first < 0) {
            first = static_cast<int>(r);
            message = text;
            kind = k;
        } else {
            same = same && text == message;
        }
    }
    if (first < 0 && stopped_by >= 0) {
        throw AgreedFailure(AgreedFailure::Kind::failure, stopped_by, false,
                            "stopped because another rank failed");
    }
    if (first < 0) return;
    const bool every_rank = same && failed == ranks.size();
    throw AgreedFailure(static_cast<AgreedFailure::Kind>(kind), first, every_rank, message);
}

}  // namespace simrun::framework
