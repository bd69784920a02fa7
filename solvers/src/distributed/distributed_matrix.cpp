#include "simrun/solvers/distributed/distributed_matrix.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "base/kernel_table.hpp"
#include "distributed/halo_exchange.hpp"
#include "simrun/solvers/matrices/conversions.hpp"

namespace simrun::solvers {

template <typename T>
SplitBlock<T> split_block(DiaData<T> block) {
    SplitBlock<T> split;
    const std::int64_t n = block.n;
    // Per diagonal, the rows whose column leaves the block: rows [0, -o) before it for o < 0,
    // rows [n - o, n) after it for o > 0.
    for (int d = 0; d < block.num_diagonals(); ++d) {
        const std::int64_t o = block.offsets[static_cast<std::size_t>(d)];
        if (o == 0) continue;
        const std::int64_t first = o < 0 ? 0 : std::max<std::int64_t>(0, n - o);
        const std::int64_t last = o < 0 ? std::min(n, -o) : n;
        for (std::int64_t i = first; i < last; ++i) {
            T& entry = block.at(d, i);
            if (entry != T(0)) split.outside.add(i, i + o, entry);
            entry = T(0);
        }
    }
    // The inner matrix keeps the block's storage: a diagonal reaching past the whole block (a
    // block of one grid plane) holds no entry of it and is dropped.
    block.keep_diagonals([&](int d) {
        const std::int64_t o = block.offsets[static_cast<std::size_t>(d)];
        return o > -n && o < n;
    });
    split.inner = std::move(block);
    return split;
}

namespace {

template <typename T>
std::size_t bytes_of(std::int64_t values) {
    return static_cast<std::size_t>(values) * sizeof(T);
}

template <typename V>
std::span<const std::byte> bytes_of_vector(const std::vector<V>& values) {
    return std::as_bytes(std::span(values));
}

template <typename V>
std::vector<V> vector_of_bytes(const std::vector<std::byte>& bytes) {
    std::vector<V> values(bytes.size() / sizeof(V));
    if (!values.empty()) std::memcpy(values.data(), bytes.data(), values.size() * sizeof(V));
    return values;
}

// Where the ranks' blocks lie in the whole matrix: every rank's first row, the last entry the
// whole matrix's rows (collective).
std::vector<std::int64_t> block_firsts(const Communicator& ranks, std::int64_t rows) {
    const std::vector<std::int64_t> mine{rows};
    std::vector<std::int64_t> firsts{0};
    for (const auto& bytes : ranks.all_gather(bytes_of_vector(mine))) {
        firsts.push_back(firsts.back() + vector_of_bytes<std::int64_t>(bytes).at(0));
    }
    return firsts;
}

// Each coupling outside a block placed: the rank holding its column and the column in that
// rank's block.
struct Placed {
    std::vector<int> owner;
    std::vector<std::int64_t> column;
};

// Places this rank's couplings outside its block of `rows` rows (firsts: block_firsts). Every
// rank learns of the first rank's fault, and throws it alike (collective).
template <typename T>
Placed place_couplings(const Communicator& ranks, const std::vector<std::int64_t>& firsts,
                       const OutsideCouplings<T>& outside, const char* what) {
    const int rank = ranks.rank();
    const std::int64_t first = firsts[static_cast<std::size_t>(rank)];
    const std::int64_t rows = firsts[static_cast<std::size_t>(rank) + 1] - first;
    const std::int64_t whole = firsts.back();
    Placed placed;
    placed.owner.resize(outside.size());
    placed.column.resize(outside.size());
    std::string fault;
    if (outside.rows.size() != outside.size() || outside.columns.size() != outside.size()) {
        fault = std::to_string(outside.rows.size()) + " rows, " +
                std::to_string(outside.columns.size()) + " columns and " +
                std::to_string(outside.size()) + " values of couplings outside its block";
    }
    for (std::size_t k = 0; k < outside.size() && fault.empty(); ++k) {
        const std::int64_t row = outside.rows[k], column = outside.columns[k];
        const std::int64_t global = first + column;
        const std::string entry =
            "its row " + std::to_string(row) + " couples to column " + std::to_string(global);
        if (row < 0 || row >= rows) {
            fault = "a coupling outside its block names row " + std::to_string(row) +
                    ", not one of its " + std::to_string(rows) + " rows";
        } else if (global < 0 || global >= whole) {
            fault = entry + ", outside the matrix of " + std::to_string(whole) + " rows";
        } else if (column >= 0 && column < rows) {
            fault = entry + ", inside its own block, among its couplings outside it";
        } else {
            const auto owner = std::upper_bound(firsts.begin(), firsts.end(), global) - 1;
            placed.owner[k] = static_cast<int>(owner - firsts.begin());
            placed.column[k] = global - *owner;
        }
    }
    std::string first_fault;
    const auto faults = ranks.all_gather(std::as_bytes(std::span(fault)));
    for (std::size_t r = 0; r < faults.size() && first_fault.empty(); ++r) {
        if (faults[r].empty()) continue;
        first_fault =
            std::string(what) + ": rank " + std::to_string(r) + "'s block (" +
            std::to_string(firsts[r + 1] - firsts[r]) + " rows): " +
            std::string(reinterpret_cast<const char*>(faults[r].data()), faults[r].size());
    }
    if (!first_fault.empty()) throw std::invalid_argument(first_fault);
    return placed;
}

// Sends each rank in `to` its values and receives from each rank in `from` theirs (counts
// agreed beforehand; ranks of no values take no part), and waits for them.
template <typename V>
void exchange_lists(const Communicator& ranks, std::vector<std::pair<int, std::vector<V>>>& to,
                    std::vector<std::pair<int, std::vector<V>>>& from) {
    static_assert(std::is_trivially_copyable_v<V>);
    std::vector<Message> sends, receives;
    for (auto& [rank, values] : to) {
        if (!values.empty()) sends.push_back({rank, std::as_writable_bytes(std::span(values))});
    }
    for (auto& [rank, values] : from) {
        if (!values.empty()) receives.push_back({rank, std::as_writable_bytes(std::span(values))});
    }
    ranks.start_exchange(sends, receives)->finish();
}

// How many values each rank sends each other rank: counts[r][q] from each rank's own row of
// them (collective).
std::vector<std::vector<std::int64_t>> all_counts(const Communicator& ranks,
                                                  const std::vector<std::int64_t>& mine) {
    std::vector<std::vector<std::int64_t>> counts;
    for (const auto& bytes : ranks.all_gather(bytes_of_vector(mine))) {
        counts.push_back(vector_of_bytes<std::int64_t>(bytes));
    }
    return counts;
}

}  // namespace

template <typename T>
SplitBlock<T> transpose_block(const Communicator& ranks, const SplitBlock<T>& block) {
    const int rank = ranks.rank(), count = ranks.size();
    const std::vector<std::int64_t> firsts = block_firsts(ranks, block.inner.n);
    const Placed placed = place_couplings(ranks, firsts, block.outside, "transpose over ranks");
    // A(first + i, first_q + c) = v is A^T(first_q + c, first + i) = v: row c of rank q's
    // block, its column first + i counted from first_q.
    struct Entry {
        std::int64_t row, column;
        T value;
    };
    std::vector<std::pair<int, std::vector<Entry>>> to(static_cast<std::size_t>(count));
    std::vector<std::int64_t> counts(static_cast<std::size_t>(count), 0);
    const std::int64_t first = firsts[static_cast<std::size_t>(rank)];
    for (std::size_t k = 0; k < block.outside.size(); ++k) {
        const int q = placed.owner[k];
        to[static_cast<std::size_t>(q)].second.push_back(
            {placed.column[k], first + block.outside.rows[k] - firsts[static_cast<std::size_t>(q)],
             block.outside.values[k]});
        ++counts[static_cast<std::size_t>(q)];
    }
    const auto all = all_counts(ranks, counts);
    std::vector<std::pair<int, std::vector<Entry>>> from(static_cast<std::size_t>(count));
    for (int r = 0; r < count; ++r) {
        to[static_cast<std::size_t>(r)].first = r;
        from[static_cast<std::size_t>(r)] = {
            r, std::vector<Entry>(static_cast<std::size_t>(
                   all[static_cast<std::size_t>(r)][static_cast<std::size_t>(rank)]))};
    }
    exchange_lists(ranks, to, from);
    SplitBlock<T> transposed{transpose(block.inner), {}};
    for (const auto& [r, entries] : from) {
        for (const Entry& e : entries) transposed.outside.add(e.row, e.column, e.value);
    }
    return transposed;
}

template <typename T>
struct DistributedMatrix<T>::Halo {
    const Backend& backend;
    const Communicator& ranks;
    // A rank this block exchanges rows with: the couplings that read the rows received from it.
    struct Neighbour {
        int rank = 0;
        std::size_t coupled_rows = 0;
        Array<std::int64_t> rows, starts;  // the rows coupled, and where each one's entries start
        Array<std::int32_t> slots;         // each entry's row among those received
        Array<T> values;
    };
    std::vector<Neighbour> neighbours;          // in rank order, the exchange's
    std::unique_ptr<HaloExchange<T>> exchange;  // the rows read: sent, kept where received

    Halo(const std::shared_ptr<const Backend>& on) : backend(*on), ranks(on->communicator()) {}
};

namespace {

// Which rows this block reads of each rank (in order, once each: its slots there) and which
// of its rows each rank reads (collective).
struct ReadPattern {
    std::vector<std::vector<std::int64_t>> reads, read_here;
};
ReadPattern learn_reads(const Communicator& ranks, const Placed& placed) {
    const int rank = ranks.rank(), count = ranks.size();
    ReadPattern pattern;
    pattern.reads.resize(static_cast<std::size_t>(count));
    for (std::size_t k = 0; k < placed.owner.size(); ++k) {
        pattern.reads[static_cast<std::size_t>(placed.owner[k])].push_back(placed.column[k]);
    }
    std::vector<std::int64_t> read_counts(static_cast<std::size_t>(count));
    for (int q = 0; q < count; ++q) {
        auto& rows = pattern.reads[static_cast<std::size_t>(q)];
        std::sort(rows.begin(), rows.end());
        rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
        read_counts[static_cast<std::size_t>(q)] = static_cast<std::int64_t>(rows.size());
    }
    // Every rank learns which ranks read how many of its rows, then which rows.
    const auto all = all_counts(ranks, read_counts);
    std::vector<std::pair<int, std::vector<std::int64_t>>> asked, asking;
    for (int q = 0; q < count; ++q) {
        asked.emplace_back(q, pattern.reads[static_cast<std::size_t>(q)]);
        asking.emplace_back(q,
                            std::vector<std::int64_t>(static_cast<std::size_t>(
                                all[static_cast<std::size_t>(q)][static_cast<std::size_t>(rank)])));
    }
    exchange_lists(ranks, asked, asking);
    for (auto& [q, rows] : asking) pattern.read_here.push_back(std::move(rows));
    return pattern;
}

// The exchange's plan: per neighbour the rows it reads here (as runs: a run of them is sent
// straight from x, else they are gathered) and the slots of the halo its rows fill here.
HaloPlan halo_plan_of(const ReadPattern& pattern) {
    HaloPlan plan;
    std::int64_t slots = 0;
    for (std::size_t q = 0; q < pattern.reads.size(); ++q) {
        const auto& sends = pattern.read_here[q];
        const auto received = static_cast<std::int64_t>(pattern.reads[q].size());
        if (sends.empty() && received == 0) continue;
        HaloPlan::Neighbour& to = plan.neighbours.emplace_back();
        to.rank = static_cast<int>(q);
        for (const std::int64_t row : sends) add_index(to.sent, row);
        if (received > 0) to.received.push_back({slots, received});
        slots += received;
    }
    return plan;
}

// A neighbour's couplings by row (a row's entries in the order given): its rows, where each
// one's entries start, and each entry's slot and value.
template <typename T>
struct RowCouplings {
    std::vector<std::int64_t> rows, starts;
    std::vector<std::int32_t> slots;
    std::vector<T> values;
};
template <typename T>
std::vector<RowCouplings<T>> couplings_by_neighbour(const OutsideCouplings<T>& outside,
                                                    const Placed& placed,
                                                    const ReadPattern& pattern,
                                                    const HaloPlan& plan) {
    struct Coupling {
        std::int64_t row;
        std::int32_t slot;
        T value;
    };
    std::vector<std::vector<Coupling>> entries(plan.neighbours.size());
    for (std::size_t k = 0; k < outside.size(); ++k) {
        const int q = placed.owner[k];
        const auto& rows = pattern.reads[static_cast<std::size_t>(q)];
        const auto slot =
            std::lower_bound(rows.begin(), rows.end(), placed.column[k]) - rows.begin();
        const auto at = std::find_if(plan.neighbours.begin(), plan.neighbours.end(),
                                     [&](const auto& n) { return n.rank == q; }) -
                        plan.neighbours.begin();
        entries[static_cast<std::size_t>(at)].push_back(
            {outside.rows[k], static_cast<std::int32_t>(slot), outside.values[k]});
    }
    std::vector<RowCouplings<T>> couplings(plan.neighbours.size());
    for (std::size_t i = 0; i < entries.size(); ++i) {
        auto& mine = entries[i];
        std::stable_sort(mine.begin(), mine.end(),
                         [](const Coupling& a, const Coupling& b) { return a.row < b.row; });
        RowCouplings<T>& c = couplings[i];
        for (std::size_t e = 0; e < mine.size(); ++e) {
            if (e == 0 || mine[e].row != mine[e - 1].row) {
                c.rows.push_back(mine[e].row);
                c.starts.push_back(static_cast<std::int64_t>(e));
            }
            c.slots.push_back(mine[e].slot);
            c.values.push_back(mine[e].value);
        }
        c.starts.push_back(static_cast<std::int64_t>(mine.size()));
    }
    return couplings;
}

}  // namespace

template <typename T>
DistributedMatrix<T>::DistributedMatrix(std::unique_ptr<LinearOperator<T>> inner,
                                        OutsideCouplings<T> outside)
    : inner_(std::move(inner)) {
    const std::shared_ptr<const Backend>& backend = inner_->backend();
    halo_ = std::make_unique<Halo>(backend);
    Halo& h = *halo_;
    const Communicator& ranks = h.ranks;
    const auto n = static_cast<std::int64_t>(inner_->size());
    const std::vector<std::int64_t> firsts = block_firsts(ranks, n);
    const Placed placed = place_couplings(ranks, firsts, outside, "distributed matrix");
    const ReadPattern pattern = learn_reads(ranks, placed);
    HaloPlan plan = halo_plan_of(pattern);
    std::vector<RowCouplings<T>> couplings = couplings_by_neighbour(outside, placed, pattern, plan);
    for (const HaloPlan::Neighbour& to : plan.neighbours)
        h.neighbours.emplace_back().rank = to.rank;
    // On the GPUs the halo stays there where every rank's GPU reaches its neighbours' (a side
    // a neighbour, collective); the rows received are read where they arrive.
    h.exchange =
        std::make_unique<HaloExchange<T>>(backend, std::move(plan), HaloExchange<T>::Arrival::kept);
    // Every rank learns whether another's memory ran out (its products would wait for it).
    all_or_none(ranks, [&] {
        for (std::size_t i = 0; i < h.neighbours.size(); ++i) {
            auto& to = h.neighbours[i];
            const RowCouplings<T>& c = couplings[i];
            to.coupled_rows = c.rows.size();
            to.rows = Array<std::int64_t>::from_host(backend, c.rows);
            to.starts = Array<std::int64_t>::from_host(backend, c.starts);
            to.slots = Array<std::int32_t>::from_host(backend, c.slots);
            to.values = Array<T>::from_host(backend, c.values);
        }
    });
}

template <typename T>
DistributedMatrix<T>::~DistributedMatrix() = default;

template <typename T>
std::vector<int> DistributedMatrix<T>::neighbours() const {
    std::vector<int> ranks;
    for (const auto& to : halo_->neighbours) ranks.push_back(to.rank);
    return ranks;
}

template <typename T>
void DistributedMatrix<T>::apply(const Array<T>& x, Array<T>& y) const {
    Halo& h = *halo_;
    const std::int64_t n = static_cast<std::int64_t>(size());
    if (x.size() != size() || y.size() != size()) {
        throw DimensionMismatch("distributed product: " + std::to_string(x.size()) + " and " +
                                std::to_string(y.size()) + " values for a block of " +
                                std::to_string(n) + " rows");
    }
    const Backend& backend = h.backend;
    const KernelTable<T>& k = backend.kernels<T>();
    // The rows the neighbours read sent (HaloExchange: straight from x where consecutive, else
    // gathered; on the GPUs into the neighbours' memory, else staged through the host with one
    // wait), the block's own rows while they travel (issued asynchronously on a GPU), then the
    // couplings once they are there (on the GPUs waited for on the device, no host wait).
    h.exchange->begin(x.data());
    inner_->apply(x, y);
    h.exchange->end(nullptr);
    // y_i += A_ij halo_j for the couplings to each neighbour's rows.
    for (std::size_t i = 0; i < h.neighbours.size(); ++i) {
        const typename Halo::Neighbour& from = h.neighbours[i];
        if (from.coupled_rows == 0) continue;
        k.add_couplings(backend, from.coupled_rows, from.rows.data(), from.starts.data(),
                        from.slots.data(), from.values.data(), h.exchange->received(i), y.data());
    }
}

template struct SplitBlock<float>;
template struct SplitBlock<double>;
template SplitBlock<float> split_block(DiaData<float>);
template SplitBlock<double> split_block(DiaData<double>);
template SplitBlock<float> transpose_block(const Communicator&, const SplitBlock<float>&);
template SplitBlock<double> transpose_block(const Communicator&, const SplitBlock<double>&);
template class DistributedMatrix<float>;
template class DistributedMatrix<double>;

}  // namespace simrun::solvers
