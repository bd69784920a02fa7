#include "simrun/framework/distributed/agreement.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "simrun/framework/distributed/failure_kind.hpp"

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

// The kind is classify's (failure_kind.hpp); a failure of the computation is agreed only where
// every rank decided it alike (FailureOnEveryRank).
Classified classify_for_agreement(std::exception_ptr failure) {
    try {
        std::rethrow_exception(failure);
    } catch (const solvers::PeerFailure& e) {
        return {peer, true, e.what()};
    } catch (const std::exception& e) {
        const FailureKind kind = classify(e);
        const bool agreed =
            kind != FailureKind::failure || dynamic_cast<const FailureOnEveryRank*>(&e) != nullptr;
        return {static_cast<std::int32_t>(kind), agreed, e.what()};
    } catch (...) {
        return {static_cast<std::int32_t>(FailureKind::failure), false, "an unknown exception"};
    }
}

std::vector<std::byte> record(std::exception_ptr failure) {
    const Classified c = failure ? classify_for_agreement(failure) : Classified{-1, true, {}};
    std::vector<std::byte> bytes(sizeof c.kind + c.message.size());
    std::memcpy(bytes.data(), &c.kind, sizeof c.kind);
    std::memcpy(bytes.data() + sizeof c.kind, c.message.data(), c.message.size());
    return bytes;
}

}  // namespace

bool agreed_on(std::exception_ptr failure) { return classify_for_agreement(failure).agreed; }

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
        throw AgreedFailure(FailureKind::failure, stopped_by, false,
                            "stopped because another rank failed");
    }
    if (first < 0) return;
    const bool every_rank = same && failed == ranks.size();
    throw AgreedFailure(static_cast<FailureKind>(kind), first, every_rank, message);
}

}  // namespace simrun::framework
