#pragma once
// Ranks as threads of one process, for testing what runs over ranks without MPI: K
// communicators sharing one hub, each used by its own thread (ThreadRanks::run). Collectives
// meet at a barrier; a message is copied into the receiver's mailbox when sent and taken when
// the exchange finishes.
#include <barrier>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "simrun/solvers/base/communicator.hpp"

namespace simrun::testing {

class ThreadRanks {
public:
    explicit ThreadRanks(int count) : count_(count), meeting_(count), slots_(count) {}

    // Runs work(communicator of rank r) on K threads, one per rank, and waits for them.
    void run(const std::function<void(std::shared_ptr<const solvers::Communicator>)>& work) {
        std::vector<std::thread> threads;
        for (int r = 0; r < count_; ++r) {
            threads.emplace_back(
                [this, r, &work] { work(std::make_shared<const Rank>(*this, r)); });
        }
        for (auto& thread : threads) thread.join();
    }

private:
    class Rank final : public solvers::Communicator {
    public:
        Rank(ThreadRanks& hub, int rank) : hub_(hub), rank_(rank) {
            checks_collectives_ = solvers::collective_checks_asked();
        }
        int rank() const override { return rank_; }
        int size() const override { return hub_.count_; }
        int host_rank() const override { return rank_; }
        void reduce_sum(std::span<double> values) const override {
            const auto all = gather_bytes(std::as_bytes(values));
            for (std::size_t i = 0; i < values.size(); ++i) {
                double total = 0;
                for (std::size_t r = 0; r < all.size(); ++r) {
                    double v;
                    std::memcpy(&v, all[r].data() + i * sizeof(double), sizeof v);
                    total = r == 0 ? v : total + v;
                }
                values[i] = total;
            }
        }
        double reduce_min(double value) const override {
            const auto all = gather_bytes(std::as_bytes(std::span(&value, 1)));
            for (const auto& bytes : all) {
                double v;
                std::memcpy(&v, bytes.data(), sizeof v);
                value = std::min(value, v);
            }
            return value;
        }
        std::vector<std::vector<std::byte>> gather_bytes(
            std::span<const std::byte> bytes) const override {
            hub_.slots_[static_cast<std::size_t>(rank_)].assign(bytes.begin(), bytes.end());
            hub_.meeting_.arrive_and_wait();
            std::vector<std::vector<std::byte>> all = hub_.slots_;
            hub_.meeting_.arrive_and_wait();
            return all;
        }
        std::vector<double> gather_values(std::span<const double> values, int root) const override {
            std::vector<double> whole;
            for (const auto& bytes : gather_bytes(std::as_bytes(values))) {
                const auto* first = reinterpret_cast<const double*>(bytes.data());
                whole.insert(whole.end(), first, first + bytes.size() / sizeof(double));
            }
            return rank_ == root ? whole : std::vector<double>{};
        }
        std::unique_ptr<solvers::PendingExchange> start_exchange(
            std::span<const solvers::Message> sends,
            std::span<const solvers::Message> receives) const override {
            {
                std::lock_guard lock(hub_.mail_);
                for (const auto& m : sends) {
                    hub_.mailbox_[{rank_, m.rank}].emplace_back(m.bytes.begin(), m.bytes.end());
                }
            }
            hub_.arrived_.notify_all();
            struct Receiving final : solvers::PendingExchange {
                ThreadRanks& hub;
                int rank;
                std::vector<solvers::Message> receives;
                Receiving(ThreadRanks& h, int r, std::span<const solvers::Message> m)
                    : hub(h), rank(r), receives(m.begin(), m.end()) {}
                void finish() override {
                    for (const auto& m : receives) {
                        std::unique_lock lock(hub.mail_);
                        auto& queue = hub.mailbox_[{m.rank, rank}];
                        hub.arrived_.wait(lock, [&] { return !queue.empty(); });
                        if (queue.front().size() != m.bytes.size()) std::abort();
                        std::memcpy(m.bytes.data(), queue.front().data(), m.bytes.size());
                        queue.pop_front();
                    }
                }
            };
            return std::make_unique<Receiving>(hub_, rank_, receives);
        }
        void meet() const override { hub_.meeting_.arrive_and_wait(); }
        [[noreturn]] void abort(int) const override { std::abort(); }
        std::string describe() const override { return "test threads"; }
        std::shared_ptr<const solvers::Communicator> make_duplicate() const override {
            throw std::logic_error("test threads share one channel: no duplicate");
        }

    private:
        ThreadRanks& hub_;
        int rank_;
    };

    int count_;
    std::barrier<> meeting_;
    std::vector<std::vector<std::byte>> slots_;
    std::mutex mail_;
    std::condition_variable arrived_;
    std::map<std::pair<int, int>, std::deque<std::vector<std::byte>>> mailbox_;  // (from, to)
};

}  // namespace simrun::testing
