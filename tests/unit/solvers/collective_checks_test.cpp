// The checks that keep the ranks' collectives in step (communicator.hpp): a collective inside
// all_or_none's local work is refused naming both places, and with SIMRUN_CHECK_COLLECTIVES
// ranks that reach different collectives stop naming each one's place instead of hanging.
// Ranks are threads of this process (tests/support/thread_ranks.hpp).
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "simrun/solvers/base/communicator.hpp"
#include "support/thread_ranks.hpp"

namespace simrun::solvers {
namespace {

std::string message_of(const std::function<void()>& work) {
    try {
        work();
    } catch (const std::logic_error& error) {
        return error.what();
    }
    return "";
}

// On one process as over ranks: the collective is refused before it is made, and the message
// names it, its line and the all_or_none's line.
TEST(CollectiveChecks, ACollectiveInsideLocalWorkIsRefusedNamingBothPlaces) {
    const auto one = single_process();
    const CallSite outer = CallSite::current();
    const CallSite inner = CallSite::current();
    const std::string message = message_of([&] {
        all_or_none(
            *one, [&] { one->sum(1.0, inner); }, outer);
    });
    EXPECT_NE(message.find("collective sum at collective_checks_test.cpp:" +
                           std::to_string(inner.line())),
              std::string::npos)
        << message;
    EXPECT_NE(
        message.find("all_or_none at collective_checks_test.cpp:" + std::to_string(outer.line())),
        std::string::npos)
        << message;
    // An all_or_none inside another's local work is refused too, as over ranks (its agreement
    // would be a collective there).
    EXPECT_NE(message_of([&] {
                  all_or_none(*one, [&] { all_or_none(*one, [] {}); });
              }).find("collective all_or_none's agreement at"),
              std::string::npos);
    // Outside local work the same call is fine, and the guard is gone once all_or_none returns.
    EXPECT_EQ(message_of([&] { EXPECT_EQ(one->sum(1.0), 1.0); }), "");
    // collectively's work may itself be a library's collective: not local work.
    EXPECT_EQ(message_of([&] { collectively(*one, "a library call", [&] { one->barrier(); }); }),
              "");
}

TEST(CollectiveChecks, OverRanksEveryRankRefusesTheCollectiveInsideLocalWork) {
    testing::ThreadRanks ranks(3);
    std::vector<std::string> messages(3);
    ranks.run([&](std::shared_ptr<const Communicator> rank) {
        messages[static_cast<std::size_t>(rank->rank())] =
            message_of([&] { all_or_none(*rank, [&] { rank->max(2.0); }); });
    });
    for (const auto& message : messages) {
        EXPECT_NE(message.find("collective max at"), std::string::npos) << message;
    }
}

// Two ranks at different collectives (rank 0 a sum, rank 1 a min, each the 2nd it makes): each
// prints every rank's next collective with its place, and the program ends.
TEST(CollectiveChecksDeathTest, RanksAtDifferentCollectivesStopNamingEachOnesPlace) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    ::setenv("SIMRUN_CHECK_COLLECTIVES", "1", 1);
    const CallSite sum_site = CallSite::current();
    const CallSite min_site = CallSite::current();
    EXPECT_DEATH(
        {
            testing::ThreadRanks ranks(2);
            ranks.run([&](std::shared_ptr<const Communicator> rank) {
                rank->barrier();
                if (rank->rank() == 0) {
                    rank->sum(1.0, sum_site);
                } else {
                    rank->min(1.0, min_site);
                }
            });
        },
        "rank 0: collective #2, sum at collective_checks_test.cpp:" +
            std::to_string(sum_site.line()) +
            ".*\n.*rank 1: collective #2, min at collective_checks_test.cpp:" +
            std::to_string(min_site.line()));
    ::unsetenv("SIMRUN_CHECK_COLLECTIVES");
}

}  // namespace
}  // namespace simrun::solvers
