// Halo exchanges that stay on the devices (device_halo.hpp), over ranks as threads of one
// process (tests/support/thread_ranks.hpp) sharing the GPU, with SIMRUN_HALO=device (the
// exchanges between ranks of one GPU are otherwise staged through the host). Built per
// back-end: on the CPU no rank makes one; on CUDA every rank receives its neighbours' rows at
// every exchange, and a distributed solve gives the bits of the same solve staged through the
// host. (Not under compute-sanitizer: it runs one kernel at a time, and a rank's wait on the GPU
// would hold its neighbour's send back; sanitize the device halos under mpirun, a process a
// GPU.)
#include "simrun/solvers/base/device_halo.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/selection/linear_system_solver.hpp"
#include "simrun/solvers/selection/matrix_properties.hpp"
#include "support/grid_boxes.hpp"
#include "support/rank_blocks.hpp"
#include "support/solve_over_ranks.hpp"
#include "support/test_backend.hpp"
#include "support/test_matrices.hpp"
#include "support/thread_ranks.hpp"

namespace simrun::solvers {
namespace {

using testing::test_backend;
using testing::ThreadRanks;

// SIMRUN_HALO set for a scope, the earlier value back after it.
class HaloMode {
public:
    explicit HaloMode(const char* mode) {
        if (const char* was = std::getenv("SIMRUN_HALO")) earlier_ = was;
        setenv("SIMRUN_HALO", mode, 1);
    }
    ~HaloMode() {
        if (earlier_) {
            setenv("SIMRUN_HALO", earlier_->c_str(), 1);
        } else {
            unsetenv("SIMRUN_HALO");
        }
    }
    HaloMode(const HaloMode&) = delete;
    HaloMode& operator=(const HaloMode&) = delete;

private:
    std::optional<std::string> earlier_;
};

// Rows from rank `from` to rank `to` at exchange `k`: a value no other row, pair or exchange
// has; from rank r to r + 1 go 5 + r rows, from r + 1 to r 9 + r (sizes differ by side).
double row_value(int from, int to, int k, std::size_t i) {
    return 1000.0 * from + 100.0 * to + 10.0 * k + static_cast<double>(i) / 64;
}
std::size_t rows_between(int from, int to) {
    return static_cast<std::size_t>(from < to ? 5 + from : 9 + to);
}

TEST(DeviceHalo, NeighboursRowsArriveAtEveryExchange) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const HaloMode mode("device");
    for (const int count : {2, 3, 4}) {
        SCOPED_TRACE(std::to_string(count) + " ranks");
        ThreadRanks ranks(count);
        ranks.run([&](std::shared_ptr<const Communicator> communicator) {
            const int r = communicator->rank();
            const auto backend = test_backend(communicator);
            const bool before = r > 0, after = r + 1 < count;
            const auto rows = [](bool side, int from, int to) {
                return side ? rows_between(from, to) : 0;
            };
            // The rank before and the rank after, where they are: sides 0 and 1 in that order.
            std::vector<HaloSide> sides;
            if (before) {
                sides.push_back({r - 1, rows(before, r, r - 1) * sizeof(double),
                                 rows(before, r - 1, r) * sizeof(double)});
            }
            if (after) {
                sides.push_back({r + 1, rows(after, r, r + 1) * sizeof(double),
                                 rows(after, r + 1, r) * sizeof(double)});
            }
            const std::size_t before_side = 0, after_side = before ? 1 : 0;
            std::unique_ptr<DeviceHalo> halo = backend->open_device_halo(sides);
            if (backend->kind() == BackendKind::cpu) {
                EXPECT_EQ(halo, nullptr);
                EXPECT_EQ(backend->halo_path().find("GPU"), std::string::npos);
                return;
            }
            ASSERT_NE(halo, nullptr);
            EXPECT_NE(backend->halo_path().find("GPU to GPU"), std::string::npos)
                << backend->halo_path();
            // Six exchanges (each slot written more than once), by send and wait, by exchange,
            // and by exchange with the rows copied on, in turn; the rows sent change in place
            // after each, as a vector would.
            const auto sent = [](bool side, int from, int to, int k) {
                std::vector<double> values(side ? rows_between(from, to) : 0);
                for (std::size_t i = 0; i < values.size(); ++i)
                    values[i] = row_value(from, to, k, i);
                return values;
            };
            Array<double> to_before(backend, rows(before, r, r - 1));
            Array<double> to_after(backend, rows(after, r, r + 1));
            // Where the rows are copied on to (the wait's copy, as the multigrid windows take
            // them).
            Array<double> into_before(backend, rows(before, r - 1, r));
            Array<double> into_after(backend, rows(after, r + 1, r));
            // Ranks as threads share one CUDA context, where freeing memory waits for the
            // whole device: no rank may free while another's wait is on the GPU.
            communicator->barrier();
            for (int k = 1; k <= 6; ++k) {
                to_before.copy_from_host(sent(before, r, r - 1, k));
                to_after.copy_from_host(sent(after, r, r + 1, k));
                std::vector<const void*> to(sides.size());
                std::vector<void*> into(sides.size());
                if (before) {
                    to[before_side] = to_before.data();
                    into[before_side] = into_before.data();
                }
                if (after) {
                    to[after_side] = to_after.data();
                    into[after_side] = into_after.data();
                }
                if (k % 3 == 2) {
                    halo->exchange_sides(to, std::vector<void*>(sides.size(), nullptr));
                } else {
                    if (k % 3 == 1) {
                        halo->send_sides(to);
                        halo->wait_sides(into);
                    } else {
                        halo->exchange_sides(to, into);
                    }
                    EXPECT_EQ(into_before.to_host(), sent(before, r - 1, r, k)) << "exchange " << k;
                    EXPECT_EQ(into_after.to_host(), sent(after, r + 1, r, k)) << "exchange " << k;
                }
                const auto received = [&](bool side, const void* where, int from) {
                    std::vector<double> values(side ? rows_between(from, r) : 0);
                    if (side) {
                        EXPECT_NE(where, nullptr);
                        backend->copy_to_host(values.data(), where, values.size() * sizeof(double));
                    } else {
                        EXPECT_EQ(where, nullptr);
                    }
                    return values;
                };
                const auto received_on = [&](bool side, std::size_t index) {
                    return side ? halo->received(index) : nullptr;
                };
                EXPECT_EQ(received(before, received_on(before, before_side), r - 1),
                          sent(before, r - 1, r, k))
                    << "exchange " << k;
                EXPECT_EQ(received(after, received_on(after, after_side), r + 1),
                          sent(after, r + 1, r, k))
                    << "exchange " << k;
                // No barrier: a neighbour's next send goes into the other slot, and the one
                // after waits for this rank's next send, issued once it has read these.
            }
            // One exchange counted per send, with the bytes this rank sent.
            const CommunicationCost& cost = communicator->times().halo;
            EXPECT_EQ(cost.count, 6);
            std::size_t bytes = 0;
            for (const HaloSide& side : sides) bytes += side.to;
            EXPECT_EQ(cost.bytes_sent, 6.0 * static_cast<double>(bytes));
        });
    }
}

// A halo opened by sides, every rank a neighbour of every other (as the boxes of a process grid
// meet at a corner), with sizes that differ by pair and direction and one pair that exchanges
// nothing: every side's rows arrive at every exchange, by send and wait and by exchange.
TEST(DeviceHalo, EverySidesRowsArriveAtEveryExchange) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const HaloMode mode("device");
    const int count = 4;
    // Ranks 0 and 3 exchange nothing (their side takes no part); the others 3 + from + 2 to rows.
    const auto rows = [](int from, int to) -> std::size_t {
        return (from == 0 && to == 3) || (from == 3 && to == 0)
                   ? 0
                   : static_cast<std::size_t>(3 + from + 2 * to);
    };
    ThreadRanks ranks(count);
    ranks.run([&](std::shared_ptr<const Communicator> communicator) {
        const int r = communicator->rank();
        const auto backend = test_backend(communicator);
        std::vector<HaloSide> sides;
        for (int q = 0; q < count; ++q) {
            if (q != r)
                sides.push_back({q, rows(r, q) * sizeof(double), rows(q, r) * sizeof(double)});
        }
        std::unique_ptr<DeviceHalo> halo = backend->open_device_halo(sides);
        if (backend->kind() == BackendKind::cpu) {
            EXPECT_EQ(halo, nullptr);
            return;
        }
        ASSERT_NE(halo, nullptr);
        std::vector<Array<double>> to, into;
        for (const HaloSide& side : sides) {
            to.emplace_back(backend, side.to / sizeof(double));
            into.emplace_back(backend, side.from / sizeof(double));
        }
        communicator->barrier();
        for (int k = 1; k <= 5; ++k) {
            std::vector<const void*> sent;
            std::vector<void*> copied;
            for (std::size_t i = 0; i < sides.size(); ++i) {
                std::vector<double> values(to[i].size());
                for (std::size_t j = 0; j < values.size(); ++j) {
                    values[j] = row_value(r, sides[i].rank, k, j);
                }
                to[i].copy_from_host(values);
                sent.push_back(values.empty() ? nullptr : to[i].data());
                copied.push_back(into[i].size() > 0 ? into[i].data() : nullptr);
            }
            if (k % 2 == 1) {
                halo->send_sides(sent);
                halo->wait_sides(copied);
            } else {
                halo->exchange_sides(sent, copied);
            }
            for (std::size_t i = 0; i < sides.size(); ++i) {
                const int q = sides[i].rank;
                std::vector<double> expected(rows(q, r));
                for (std::size_t j = 0; j < expected.size(); ++j) {
                    expected[j] = row_value(q, r, k, j);
                }
                EXPECT_EQ(into[i].to_host(), expected) << "from rank " << q << ", exchange " << k;
                std::vector<double> where(expected.size());
                if (!where.empty()) {
                    ASSERT_NE(halo->received(i), nullptr);
                    backend->copy_to_host(where.data(), halo->received(i),
                                          where.size() * sizeof(double));
                } else {
                    EXPECT_EQ(halo->received(i), nullptr);
                }
                EXPECT_EQ(where, expected) << "from rank " << q << ", exchange " << k;
            }
        }
        communicator->barrier();
    });
}

// A solve of `a` x = b to 1e-10 as `request` asks over `grid` (rank r given block_of_rank(r))
// with its halos through the host and on the device (on the GPU): the same iterations, the same
// bits, the same halo exchanges.
template <typename BlockOfRank>
void expect_device_halo_bits(const testing::GridBoxes& grid, BlockOfRank&& block_of_rank,
                             const DiaData<double>& a, const std::vector<double>& b,
                             SolverRequest request) {
    request.ranks = grid.ranks();
    const SolverPlan plan = plan_solver(analyze(a), request);
    MethodParameters parameters;
    parameters.criteria.relative_tolerance = 1e-10;
    std::vector<std::vector<testing::RankSolve>> runs;
    for (const char* path : {"host", "device"}) {
        const HaloMode mode(path);
        auto& into = runs.emplace_back(static_cast<std::size_t>(grid.ranks()));
        testing::solve_blocks_over_ranks(block_of_rank, b, grid.firsts(), plan, parameters,
                                         [&](const testing::RankSolve& rank) {
                                             into[static_cast<std::size_t>(rank.rank)] = rank;
                                         });
    }
    const bool gpu = test_backend()->kind() == BackendKind::cuda;
    for (int r = 0; r < grid.ranks(); ++r) {
        const auto& host = runs[0][static_cast<std::size_t>(r)];
        const auto& device = runs[1][static_cast<std::size_t>(r)];
        EXPECT_EQ(device.halo_path.find("GPU to GPU") != std::string::npos, gpu)
            << device.halo_path;
        ASSERT_TRUE(host.report.converged());
        EXPECT_EQ(device.report.total_iterations(), host.report.total_iterations());
        EXPECT_EQ(device.x, host.x) << "rank " << r;
        EXPECT_EQ(device.report.communication.halo.count, host.report.communication.halo.count);
        EXPECT_EQ(device.report.communication.halo.bytes_sent,
                  host.report.communication.halo.bytes_sent);
    }
}

// CG + Jacobi over a 2x2 and a 2x1x2 process grid of boxes (every rank's neighbours beside it
// and at its corners, the rows sent gathered): its halo on the device gives the bits of its
// halo through the host, in the same iterations.
TEST(DeviceHalo, BoxesSolveGivesTheBitsOfHostStaging) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    for (const testing::GridBoxes& grid :
         {testing::GridBoxes{{21, 19, 1}, {2, 2, 1}}, testing::GridBoxes{{9, 8, 10}, {2, 1, 2}}}) {
        const int dimension = grid.points[2] > 1 ? 3 : 2;
        SCOPED_TRACE(std::to_string(dimension) + "D");
        // A 9- or 27-point operator: couplings to the boxes at the corners too.
        const auto steps = testing::grid_steps(dimension, true);
        const DiaData<double> a = testing::grid_matrix(grid, steps, [&](std::int64_t, int d) {
            const testing::GridStep& step = steps[static_cast<std::size_t>(d)];
            return step == testing::GridStep{0, 0, 0} ? static_cast<double>(steps.size()) : -1.0;
        });
        std::vector<double> b(static_cast<std::size_t>(a.n));
        for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::cos(0.3 * static_cast<double>(i));
        expect_device_halo_bits(
            grid, [&](int r) { return testing::box_block(a, grid, steps, r); }, a, b,
            SolverRequest::parse("cg", "jacobi", "dia"));
    }
}

// A side read and placed by index (a box's face strided in a vector), of floats and of doubles
// (a value one word or two): each value sent from its place arrives at the place its index
// names, and the other places keep their values.
template <typename V>
void indexed_sides_arrive() {
    const HaloMode mode("device");
    ThreadRanks ranks(2);
    ranks.run([&](std::shared_ptr<const Communicator> communicator) {
        const int r = communicator->rank();
        const auto backend = test_backend(communicator);
        // A vector of 40 values; 7 sent from every fourth place, placed at every fourth in
        // reverse order two places on (apart from those sent, as a halo is from a part).
        const std::size_t n = 40, count = 7;
        std::vector<std::int64_t> sent_at, placed_at;
        for (std::size_t k = 0; k < count; ++k) {
            sent_at.push_back(static_cast<std::int64_t>(4 * k));
            placed_at.push_back(static_cast<std::int64_t>(38 - 4 * k));
        }
        const std::vector<HaloSide> sides{{1 - r, count * sizeof(V), count * sizeof(V), sizeof(V)}};
        std::unique_ptr<DeviceHalo> halo = backend->open_device_halo(sides);
        if (backend->kind() == BackendKind::cpu) {
            EXPECT_EQ(halo, nullptr);
            return;
        }
        ASSERT_NE(halo, nullptr);
        const auto value = [](int rank, int k, std::size_t i) {
            return static_cast<V>(100 * rank + 10 * k) + static_cast<V>(i) / 64;
        };
        const auto sent_index = Array<std::int64_t>::from_host(backend, sent_at);
        const auto placed_index = Array<std::int64_t>::from_host(backend, placed_at);
        Array<V> x(backend, n);
        communicator->barrier();
        for (int k = 1; k <= 4; ++k) {
            std::vector<V> mine(n);
            for (std::size_t i = 0; i < n; ++i) mine[i] = value(r, k, i);
            x.copy_from_host(mine);
            const std::vector<SentValues> to{{x.data(), sent_index.data()}};
            const std::vector<PlacedValues> into{{x.data(), placed_index.data()}};
            if (k % 2 == 1) {
                halo->exchange_sides(to, into);
            } else {
                halo->send_sides(to);
                halo->wait_sides(into);
            }
            std::vector<V> expected = mine;
            for (std::size_t j = 0; j < count; ++j) {
                expected[static_cast<std::size_t>(placed_at[j])] =
                    value(1 - r, k, static_cast<std::size_t>(sent_at[j]));
            }
            EXPECT_EQ(x.to_host(), expected) << "exchange " << k;
            // Every rank has read its values before its neighbour's next send writes them.
            communicator->barrier();
        }
    });
}

TEST(DeviceHalo, IndexedSidesOfFloatsArrive) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    indexed_sides_arrive<float>();
}

TEST(DeviceHalo, IndexedSidesOfDoublesArrive) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    indexed_sides_arrive<double>();
}

// Two ranks' sides of 8 doubles each way (rank 0 has only a rank after, rank 1 only a rank
// before).
std::vector<HaloSide> two_rank_sides(int rank) {
    const std::size_t bytes = 8 * sizeof(double);
    return {{1 - rank, bytes, bytes}};
}

// A CUDA rank beside a CPU rank (a host without a GPU among hosts with one): both take the
// host's path, and neither waits for a collective the other never makes.
TEST(DeviceHalo, RanksOfDifferentBackEndsAgreeOnNone) {
    const HaloMode mode("device");
    ThreadRanks ranks(2);
    ranks.run([&](std::shared_ptr<const Communicator> communicator) {
        const int r = communicator->rank();
        auto backend = r == 0 ? test_backend(communicator) : nullptr;
        if (!backend) backend = make_cpu_backend(communicator);
        EXPECT_EQ(backend->open_device_halo(two_rank_sides(r)), nullptr);
    });
}

// A SIMRUN_HALO no back-end knows is refused on every rank (where a back-end reads it), never
// on some ranks while the others wait.
TEST(DeviceHalo, AnUnknownSettingIsRefusedOnEveryRank) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const HaloMode mode("sideways");
    ThreadRanks ranks(2);
    ranks.run([&](std::shared_ptr<const Communicator> communicator) {
        const int r = communicator->rank();
        const auto backend = test_backend(communicator);
        if (backend->kind() == BackendKind::cpu) {
            EXPECT_EQ(backend->open_device_halo(two_rank_sides(r)), nullptr);
        } else {
            EXPECT_THROW(backend->open_device_halo(two_rank_sides(r)), std::invalid_argument);
        }
    });
}

// CG with multigrid over 2 and 3 ranks, its halos and its gathered level on the device and
// through the host: the same iterations, the same bits (the same arithmetic on the same rows),
// and the same halo exchanges; with its levels split (a gathered level at the bottom) and
// with every level gathered (the finest too).
TEST(DeviceHalo, MultigridCgGivesTheBitsOfHostStaging) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const auto one = [](double, double, double) { return 1.0; };
    const DiaData<double> a = to_dia(testing::diffusion_matrix(63, 2, one));
    const GridBox box{2, {63, 63, 1}};
    std::vector<double> b(static_cast<std::size_t>(a.n));
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::cos(0.21 * static_cast<double>(i));
    SolverRequest request = SolverRequest::parse("cg", "multigrid", "dia");
    request.grid = box;
    MethodParameters parameters;
    parameters.criteria.relative_tolerance = 1e-10;
    // Its levels split (a GPU would gather them), or all gathered.
    for (const auto& [count, gather_size] :
         {std::pair{2, 0}, std::pair{3, 0}, std::pair{3, 65536}, std::pair{4, 65536}}) {
        SCOPED_TRACE(std::to_string(count) + " ranks, gather_size " + std::to_string(gather_size));
        request.multigrid.gather_size = gather_size;
        request.ranks = count;
        const SolverPlan plan = plan_solver(analyze(a), request);
        const std::vector<std::int64_t> first = testing::block_starts(a.n, count, box.points[0]);
        std::vector<testing::RankSolve> staged(static_cast<std::size_t>(count));
        std::vector<testing::RankSolve> on_device(static_cast<std::size_t>(count));
        for (const char* path : {"host", "device"}) {
            const HaloMode mode(path);
            auto& into = std::string(path) == "host" ? staged : on_device;
            testing::solve_over_ranks(a, b, first, plan, parameters, [&](const auto& rank) {
                into[static_cast<std::size_t>(rank.rank)] = rank;
            });
        }
        for (int r = 0; r < count; ++r) {
            const testing::RankSolve& host = staged[static_cast<std::size_t>(r)];
            const testing::RankSolve& device = on_device[static_cast<std::size_t>(r)];
            // The device run's halos were on the GPU (a fallback to the host would compare the
            // host with itself).
            const bool gpu = test_backend()->kind() == BackendKind::cuda;
            EXPECT_EQ(device.halo_path.find("GPU to GPU") != std::string::npos, gpu)
                << device.halo_path;
            EXPECT_EQ(host.halo_path.find("GPU to GPU"), std::string::npos) << host.halo_path;
            ASSERT_TRUE(host.report.converged());
            EXPECT_EQ(device.report.total_iterations(), host.report.total_iterations());
            EXPECT_EQ(device.x, host.x) << "rank " << r;
            EXPECT_EQ(device.report.communication.halo.count, host.report.communication.halo.count);
            EXPECT_GT(device.report.communication.halo.count, 0);
            EXPECT_EQ(device.report.communication.halo.bytes_sent,
                      host.report.communication.halo.bytes_sent);
            // On the GPUs each cycle's gather is counted as one (its exchanges not as halo
            // exchanges); through the host as its communicator counts it (here, as threads,
            // not at all).
            if (gpu) {
                EXPECT_GT(device.report.communication.gathers.count, 0);
            }
        }
    }
}

// CG with multigrid over boxes split along x (faces strided: sent and placed by index) and
// along both axes (faces, edges and corners), every level split: its halos on the device give
// the bits of its halos through the host, in the same iterations and exchanges.
TEST(DeviceHalo, MultigridOverBoxesGivesTheBitsOfHostStaging) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const auto one = [](double, double, double) { return 1.0; };
    for (const testing::GridBoxes& grid :
         {testing::GridBoxes{{63, 61, 1}, {2, 1, 1}}, testing::GridBoxes{{63, 61, 1}, {2, 2, 1}},
          testing::GridBoxes{{24, 22, 26}, {2, 1, 2}}}) {
        const int dimension = grid.points[2] > 1 ? 3 : 2;
        SCOPED_TRACE(std::to_string(grid.parts[0]) + "x" + std::to_string(grid.parts[1]) + "x" +
                     std::to_string(grid.parts[2]));
        const std::array<std::int32_t, 3> points{static_cast<std::int32_t>(grid.points[0]),
                                                 static_cast<std::int32_t>(grid.points[1]),
                                                 static_cast<std::int32_t>(grid.points[2])};
        const DiaData<double> a = to_dia(testing::box_diffusion_matrix(
            points, dimension, {0.05, 0.05, 0.04}, one, std::array<testing::Side, 6>{}));
        std::vector<double> b(static_cast<std::size_t>(a.n));
        for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::cos(0.21 * static_cast<double>(i));
        SolverRequest request = SolverRequest::parse("pcg", "multigrid", "dia");
        request.grid = GridBox{dimension, {points[0], points[1], points[2]}};
        request.multigrid.gather_size = 0;
        expect_device_halo_bits(
            grid, [&](int r) { return testing::part_rows(a, grid, dimension, r); }, a, b, request);
    }
}

}  // namespace
}  // namespace simrun::solvers
