// The one distribution model (solvers/src/distributed/): a partition's parts, windows and
// sides, the halo plans made from it (a slab's plane one run, a box's face a run per row), and
// the halo exchange and redistribution over ranks (threads of one process) against the values
// each rank must end with.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "distributed/halo_exchange.hpp"
#include "distributed/halo_plan.hpp"
#include "distributed/redistribution.hpp"
#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/distributed/partition.hpp"
#include "support/test_backend.hpp"
#include "support/thread_ranks.hpp"

namespace simrun::solvers {
namespace {

using testing::test_backend;
using testing::ThreadRanks;

Box box_of(std::int64_t x0, std::int64_t x1, std::int64_t y0, std::int64_t y1) {
    return {{x0, y0, 0}, {x1, y1, 1}};
}

// 4 x 4 points over a 2 x 2 process grid.
std::vector<Box> two_by_two() {
    return {box_of(0, 2, 0, 2), box_of(2, 4, 0, 2), box_of(0, 2, 2, 4), box_of(2, 4, 2, 4)};
}

TEST(Partition, BoxesHaveTheirNeighboursAndSides) {
    const Partition p({2, {4, 4, 1}}, two_by_two(), 0);
    EXPECT_EQ(p.window(), box_of(0, 3, 0, 3));
    EXPECT_EQ(p.neighbours(), (std::vector<int>{1, 2, 3}));
    EXPECT_EQ(p.sides()[0].sent, box_of(1, 2, 0, 2));      // its column in rank 1's window
    EXPECT_EQ(p.sides()[0].received, box_of(2, 3, 0, 2));  // rank 1's column in its window
    EXPECT_EQ(p.sides()[2].sent, box_of(1, 2, 1, 2));      // the corner
    EXPECT_EQ(p.sides()[2].received, box_of(2, 3, 2, 3));
}

TEST(Partition, SlabsAreTheOneByKCaseAndOneProcessHasNoSides) {
    const GridBox box{2, {4, 6, 1}};
    const Partition slabs = Partition::slabs(box, {0, 2, 4, 6}, 1);
    EXPECT_EQ(slabs.part(), box_of(0, 4, 2, 4));
    EXPECT_EQ(slabs.window(), box_of(0, 4, 1, 5));
    EXPECT_EQ(slabs.neighbours(), (std::vector<int>{0, 2}));
    // A plane each way is one run of the window.
    const HaloPlan plan = halo_plan(slabs, slabs.window());
    ASSERT_EQ(plan.neighbours.size(), 2u);
    EXPECT_EQ(plan.neighbours[0].sent, (std::vector<IndexRun>{{4, 4}}));
    EXPECT_EQ(plan.neighbours[0].received, (std::vector<IndexRun>{{0, 4}}));
    EXPECT_EQ(plan.neighbours[1].sent, (std::vector<IndexRun>{{8, 4}}));
    EXPECT_EQ(plan.neighbours[1].received, (std::vector<IndexRun>{{12, 4}}));
    // A level held by fewer ranks: a rank of no planes has no window and no sides.
    const Partition fewer = Partition::slabs(box, {0, 3, 6, 6}, 2);
    EXPECT_TRUE(fewer.window().empty());
    EXPECT_TRUE(fewer.sides().empty());
    const Partition one = Partition::whole(box);
    EXPECT_EQ(one.window(), whole_part(box));
    EXPECT_TRUE(one.sides().empty());
}

TEST(HaloPlan, ABoxFaceAcrossRowsIsARunPerRow) {
    const Partition p({2, {4, 4, 1}}, two_by_two(), 1);
    const HaloPlan plan = halo_plan(p, p.window());  // window [1, 4) x [0, 3)
    ASSERT_EQ(plan.neighbours[0].rank, 0);
    EXPECT_EQ(plan.neighbours[0].sent, (std::vector<IndexRun>{{1, 1}, {4, 1}}));
    EXPECT_EQ(plan.neighbours[0].received, (std::vector<IndexRun>{{0, 1}, {3, 1}}));
    std::vector<IndexRun> runs;
    for (const std::int64_t i : {3, 4, 5, 9}) add_index(runs, i);
    EXPECT_EQ(runs, (std::vector<IndexRun>{{3, 3}, {9, 1}}));
    EXPECT_EQ(run_indices(runs), (std::vector<std::int64_t>{3, 4, 5, 9}));
}

// The value of the whole box's point (i, j).
double value_at(std::int64_t i, std::int64_t j) { return 1.5 + static_cast<double>(i + 7 * j); }

// The points of `layout` (x fastest): the values of those of `known` (times `scale`), -1
// elsewhere.
std::vector<double> values_on(const Box& layout, const Box& known, double scale = 1.0) {
    std::vector<double> values(static_cast<std::size_t>(layout.size()), -1.0);
    for_each_point(known, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t) {
        values[static_cast<std::size_t>(layout.index(i, j, k))] = scale * value_at(i, j);
    });
    return values;
}

// Runs `body(backend, partition, communicator)` on 4 thread ranks, each with its part of
// 4 x 4 points over a 2 x 2 process grid.
template <typename Body>
void on_two_by_two(Body body) {
    ThreadRanks ranks(4);
    ranks.run([&](std::shared_ptr<const Communicator> communicator) {
        const Partition p({2, {4, 4, 1}}, two_by_two(), communicator->rank());
        body(test_backend(communicator), p, *communicator);
    });
}

TEST(HaloExchange, EveryWindowTakesItsNeighboursValues) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    on_two_by_two([](const std::shared_ptr<const Backend>& backend, const Partition& p,
                     const Communicator& communicator) {
        HaloExchange<double> halo(backend, halo_plan(p, p.window()));
        Array<double> window = Array<double>::from_host(backend, values_on(p.window(), p.part()));
        halo.begin(window.data());
        halo.end(window.data());
        EXPECT_EQ(window.to_host(), values_on(p.window(), p.window()));
        EXPECT_EQ(communicator.times().halo.count, 1);
    });
}

TEST(HaloExchange, ASecondExchangeCarriesTheChangedValues) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    on_two_by_two([](const std::shared_ptr<const Backend>& backend, const Partition& p,
                     const Communicator& communicator) {
        HaloExchange<double> halo(backend, halo_plan(p, p.window()));
        Array<double> window = Array<double>::from_host(backend, values_on(p.window(), p.part()));
        halo.exchange(window.data());
        window.copy_from_host(values_on(p.window(), p.part(), 2.0));
        halo.begin(window.data());
        halo.end(window.data());
        EXPECT_EQ(window.to_host(), values_on(p.window(), p.window(), 2.0));
        EXPECT_EQ(communicator.times().halo.count, 2);
    });
}

TEST(HaloExchange, AKeptExchangeIsReadThroughReceived) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    on_two_by_two(
        [](const std::shared_ptr<const Backend>& backend, const Partition& p, const Communicator&) {
            HaloExchange<double> halo(backend, halo_plan(p, p.window()),
                                      HaloExchange<double>::Arrival::kept);
            const Array<double> window =
                Array<double>::from_host(backend, values_on(p.window(), p.part()));
            halo.begin(window.data());
            halo.end(nullptr);
            ASSERT_EQ(halo.plan().neighbours.size(), p.sides().size());
            for (std::size_t n = 0; n < p.sides().size(); ++n) {
                // The neighbour's points in this rank's window, in their order (x fastest).
                const Box& from = p.sides()[n].received;
                std::vector<double> received(static_cast<std::size_t>(from.size()));
                backend->copy_to_host(received.data(), halo.received(n),
                                      received.size() * sizeof(double));
                EXPECT_EQ(received, values_on(from, from)) << "neighbour " << n;
            }
        });
}

TEST(Redistribution, PartsOfSeveralRunsHandedToFewerRanksInTheirWindows) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    on_two_by_two([](const std::shared_ptr<const Backend>& backend, const Partition& p,
                     const Communicator& communicator) {
        const int r = communicator.rank();
        const GridBox& box = p.box();
        const Partition& from = p;
        // A box handoff: the 2 x 2 parts to the left and right halves on ranks 0 and 1, each
        // half in its window (a column of halo on the inner side): a run per row each way.
        const Partition to(box, {box_of(0, 2, 0, 4), box_of(2, 4, 0, 4), no_points, no_points}, r);
        VectorLayout held(4), wanted(4);
        for (int q = 0; q < 4; ++q) {
            const auto at = static_cast<std::size_t>(q);
            held[at] = part_runs(box, from.part(q), q == r ? from.window() : from.part(q));
            if (!to.part(q).empty()) {
                wanted[at] = part_runs(box, to.part(q), q == r ? to.window() : to.part(q));
            }
        }
        EXPECT_GT(held[static_cast<std::size_t>(r)].size(), 1u);
        const auto handoff = Redistribution<double>::point_to_point(backend, held, wanted);
        const Array<double> source =
            Array<double>::from_host(backend, values_on(from.window(), from.part()));
        Array<double> target = Array<double>::from_host(backend, values_on(to.window(), no_points));
        handoff->run(source.data(), target.data());
        EXPECT_EQ(target.to_host(), values_on(to.window(), to.part()));
    });
}

TEST(Redistribution, AWindowTakenFromTheWholeIsLocal) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    on_two_by_two([](const std::shared_ptr<const Backend>& backend, const Partition& p,
                     const Communicator& communicator) {
        const int r = communicator.rank();
        const GridBox& box = p.box();
        const VectorLayout whole = whole_on_every_rank(box.size(), 4);
        // The parts gathered whole on every rank are a collective gather, which point_to_point
        // refuses.
        VectorLayout parts(4);
        for (int q = 0; q < 4; ++q) {
            parts[static_cast<std::size_t>(q)] = part_runs(box, p.part(q), p.part(q));
        }
        EXPECT_THROW(Redistribution<double>::point_to_point(backend, parts, whole),
                     std::logic_error);
        VectorLayout window_points(4);
        window_points[static_cast<std::size_t>(r)] = part_runs(box, p.window(), p.window());
        const auto window_of =
            Redistribution<double>::point_to_point(backend, whole, window_points);
        const Array<double> all =
            Array<double>::from_host(backend, values_on(whole_part(box), whole_part(box)));
        Array<double> window(backend, static_cast<std::size_t>(p.window().size()));
        window_of->run(all.data(), window.data());
        EXPECT_EQ(window.to_host(), values_on(p.window(), p.window()));
        // Local work: no message, nothing counted.
        EXPECT_EQ(communicator.times().gathers.count, 0);
    });
}

TEST(Redistribution, PartsGatheredWholeAndPlanesHandedToFewerRanks) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    ThreadRanks ranks(4);
    ranks.run([&](std::shared_ptr<const Communicator> communicator) {
        const auto backend = test_backend(communicator);
        const int r = communicator->rank();
        const GridBox box{2, {4, 4, 1}};
        const Partition p(box, two_by_two(), r);
        VectorLayout parts(4);
        for (int q = 0; q < 4; ++q) {
            parts[static_cast<std::size_t>(q)] =
                part_runs(box, p.part(q), q == r ? p.window() : p.part(q));
        }
        const auto gather = Redistribution<double>::gather_on_every_rank(backend, parts);
        const Array<double> window =
            Array<double>::from_host(backend, values_on(p.window(), p.part()));
        Array<double> whole(backend, static_cast<std::size_t>(box.size()));
        gather->run(window.data(), whole.data());
        EXPECT_EQ(whole.to_host(), values_on(whole_part(box), whole_part(box)));
        // Rows of 4 points: ranks 0-3 hold one each, ranks 0 and 1 want two each.
        VectorLayout held(4), wanted(4);
        for (int q = 0; q < 4; ++q) held[static_cast<std::size_t>(q)] = {{4 * q, 0, 4}};
        for (int q = 0; q < 2; ++q) wanted[static_cast<std::size_t>(q)] = {{8 * q, 0, 8}};
        const auto handoff = Redistribution<double>::point_to_point(backend, held, wanted);
        const Array<double> row = Array<double>::from_host(
            backend, values_on(box_of(0, 4, r, r + 1), box_of(0, 4, r, r + 1)));
        Array<double> rows(backend, r < 2 ? 8 : 0);
        handoff->run(row.data(), rows.data());
        if (r < 2) {
            const Box two_rows = box_of(0, 4, 2 * r, 2 * r + 2);
            EXPECT_EQ(rows.to_host(), values_on(two_rows, two_rows));
        }
    });
}

TEST(Redistribution, AWantedPointNoRankHoldsIsRefused) {
    const HaloPlan plan = redistribution_plan(0, {{{0, 0, 4}}}, {{{0, 0, 6}}});
    std::vector<double> from(4, 1.0), into(6);
    EXPECT_THROW(redistribute_on_host<double>(*single_process(), plan, from, into),
                 std::logic_error);
}

}  // namespace
}  // namespace simrun::solvers
