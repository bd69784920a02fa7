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
#include "simrun/solvers/base/device_halo.hpp"
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
    // A rank this block exchanges rows with: the rows of x it sends there, and the rows it
    // receives from there with the couplings that read them.
    struct Neighbour {
        int rank = 0;
        std::int64_t send_offset = 0, send_count = 0;        // in the gathered rows
        std::int64_t send_first = -1;                        // consecutive rows sent: the first
        std::int64_t receive_offset = 0, receive_count = 0;  // in the halo
        std::size_t coupled_rows = 0;
        Array<std::int64_t> rows, starts;  // the rows coupled, and where each one's entries start
        Array<std::int32_t> slots;         // each entry's row among those received
        Array<T> values;
    };
    std::vector<Neighbour> neighbours;  // in rank order
    std::int64_t sent = 0, received = 0;
    Array<std::int64_t> send_rows;       // the rows sent, neighbours in order, where some are not
    Array<T> send_buffer;                // consecutive: then gathered here
    std::unique_ptr<DeviceHalo> device;  // where the halo stays on GPUs: a side a neighbour
    std::vector<const void*> device_sends;  // the rows sent to each side, at each product
    Array<T> halo;                          // else received here, through host staging:
    T* staging = nullptr;                   // pinned host, the rows sent then those received

    Halo(const std::shared_ptr<const Backend>& on) : backend(*on), ranks(on->communicator()) {}
    ~Halo() {
        if (staging != nullptr) backend.release_host(staging);
    }
    // The rows sent to a neighbour, on the back-end, once gathered.
    const T* sent_rows(const Neighbour& to, const Array<T>& x) const {
        return to.send_first >= 0 ? x.data() + to.send_first : send_buffer.data() + to.send_offset;
    }
};

template <typename T>
DistributedMatrix<T>::DistributedMatrix(std::unique_ptr<LinearOperator<T>> inner,
                                        OutsideCouplings<T> outside)
    : inner_(std::move(inner)) {
    const std::shared_ptr<const Backend>& backend = inner_->backend();
    halo_ = std::make_unique<Halo>(backend);
    Halo& h = *halo_;
    const Communicator& ranks = h.ranks;
    const int rank = ranks.rank(), count = ranks.size();
    const auto n = static_cast<std::int64_t>(inner_->size());
    const std::vector<std::int64_t> firsts = block_firsts(ranks, n);
    const Placed placed = place_couplings(ranks, firsts, outside, "distributed matrix");

    // The rows this block reads of each rank, in order: its slots there.
    std::vector<std::vector<std::int64_t>> reads(static_cast<std::size_t>(count));
    for (std::size_t k = 0; k < outside.size(); ++k) {
        reads[static_cast<std::size_t>(placed.owner[k])].push_back(placed.column[k]);
    }
    std::vector<std::int64_t> read_counts(static_cast<std::size_t>(count));
    for (int q = 0; q < count; ++q) {
        auto& rows = reads[static_cast<std::size_t>(q)];
        std::sort(rows.begin(), rows.end());
        rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
        read_counts[static_cast<std::size_t>(q)] = static_cast<std::int64_t>(rows.size());
    }
    // Every rank learns which ranks read how many of its rows, then which rows.
    const auto all = all_counts(ranks, read_counts);
    std::vector<std::pair<int, std::vector<std::int64_t>>> asked, asking;
    for (int q = 0; q < count; ++q) {
        asked.emplace_back(q, reads[static_cast<std::size_t>(q)]);
        asking.emplace_back(q,
                            std::vector<std::int64_t>(static_cast<std::size_t>(
                                all[static_cast<std::size_t>(q)][static_cast<std::size_t>(rank)])));
    }
    exchange_lists(ranks, asked, asking);

    std::vector<std::int64_t> send_rows;
    bool consecutive = true;
    for (int q = 0; q < count; ++q) {
        const auto& sends = asking[static_cast<std::size_t>(q)].second;
        const auto& receives = reads[static_cast<std::size_t>(q)];
        if (sends.empty() && receives.empty()) continue;
        typename Halo::Neighbour& to = h.neighbours.emplace_back();
        to.rank = q;
        to.send_offset = static_cast<std::int64_t>(send_rows.size());
        to.send_count = static_cast<std::int64_t>(sends.size());
        if (!sends.empty() && sends.back() - sends.front() + 1 == to.send_count) {
            to.send_first = sends.front();
        } else if (!sends.empty()) {
            consecutive = false;
        }
        send_rows.insert(send_rows.end(), sends.begin(), sends.end());
        to.receive_offset = h.received;
        to.receive_count = static_cast<std::int64_t>(receives.size());
        h.received += to.receive_count;
    }
    h.sent = static_cast<std::int64_t>(send_rows.size());

    // Each neighbour's couplings by row (a row's entries in the order given): its rows, where
    // each one's entries start, and each entry's slot and value.
    struct Coupling {
        std::int64_t row;
        std::int32_t slot;
        T value;
    };
    std::vector<std::vector<Coupling>> couplings(h.neighbours.size());
    for (std::size_t k = 0; k < outside.size(); ++k) {
        const int q = placed.owner[k];
        const auto& rows = reads[static_cast<std::size_t>(q)];
        const auto slot =
            std::lower_bound(rows.begin(), rows.end(), placed.column[k]) - rows.begin();
        const auto at = std::find_if(h.neighbours.begin(), h.neighbours.end(),
                                     [&](const auto& to) { return to.rank == q; }) -
                        h.neighbours.begin();
        couplings[static_cast<std::size_t>(at)].push_back(
            {outside.rows[k], static_cast<std::int32_t>(slot), outside.values[k]});
    }

    // On the GPUs the halo stays there where every rank's GPU reaches its neighbours' (a side
    // a neighbour, collective).
    std::vector<HaloSide> sides;
    for (const auto& to : h.neighbours) {
        sides.push_back({to.rank, bytes_of<T>(to.send_count), bytes_of<T>(to.receive_count)});
    }
    h.device = backend->open_device_halo(sides);
    h.device_sends.resize(h.neighbours.size());
    // Every rank learns whether another's memory ran out (its products would wait for it).
    all_or_none(ranks, [&] {
        for (std::size_t i = 0; i < h.neighbours.size(); ++i) {
            auto& entries = couplings[i];
            std::stable_sort(entries.begin(), entries.end(),
                             [](const Coupling& a, const Coupling& b) { return a.row < b.row; });
            std::vector<std::int64_t> rows, starts;
            std::vector<std::int32_t> slots;
            std::vector<T> values;
            for (std::size_t e = 0; e < entries.size(); ++e) {
                if (e == 0 || entries[e].row != entries[e - 1].row) {
                    rows.push_back(entries[e].row);
                    starts.push_back(static_cast<std::int64_t>(e));
                }
                slots.push_back(entries[e].slot);
                values.push_back(entries[e].value);
            }
            starts.push_back(static_cast<std::int64_t>(entries.size()));
            auto& to = h.neighbours[i];
            to.coupled_rows = rows.size();
            to.rows = Array<std::int64_t>::from_host(backend, rows);
            to.starts = Array<std::int64_t>::from_host(backend, starts);
            to.slots = Array<std::int32_t>::from_host(backend, slots);
            to.values = Array<T>::from_host(backend, values);
        }
        if (!consecutive) {
            h.send_rows = Array<std::int64_t>::from_host(backend, send_rows);
            h.send_buffer = Array<T>(backend, static_cast<std::size_t>(h.sent));
        }
        if (h.device) return;
        h.halo = Array<T>(backend, static_cast<std::size_t>(h.received));
        const auto staged = static_cast<std::size_t>(h.sent + h.received);
        if (staged > 0) h.staging = static_cast<T*>(backend->allocate_host(staged * sizeof(T)));
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
    if (h.send_rows.size() > 0) {
        k.gather(backend, h.send_rows.size(), h.send_rows.data(), x.data(), h.send_buffer.data());
    }
    // y_i += A_ij halo_j for the couplings to each neighbour's rows.
    const auto add = [&](const typename Halo::Neighbour& from, const T* halo) {
        if (from.coupled_rows == 0) return;
        k.add_couplings(backend, from.coupled_rows, from.rows.data(), from.starts.data(),
                        from.slots.data(), from.values.data(), halo, y.data());
    };
    if (h.device) {
        // The rows sent go straight into the neighbours' memory; the block's own rows run
        // while the neighbours' travel, and the couplings wait for them on the device (kernels
        // around the block's product, no host wait).
        for (std::size_t i = 0; i < h.neighbours.size(); ++i) {
            const auto& to = h.neighbours[i];
            h.device_sends[i] = to.send_count > 0 ? h.sent_rows(to, x) : nullptr;
        }
        h.device->send_sides(h.device_sends);
        inner_->apply(x, y);
        h.device->wait_sides({});
        for (std::size_t i = 0; i < h.neighbours.size(); ++i) {
            add(h.neighbours[i], static_cast<const T*>(h.device->received(i)));
        }
        return;
    }
    CommunicationCost& halo_cost = h.ranks.times().halo;
    // The rows the neighbours read, staged on the host after x's work (gathered: one copy, the
    // staging laid out as the gathered rows; else each neighbour's run from x): one wait for
    // them all (it also frees the buffers of the halo received last time, whose copy it waits
    // for).
    if (h.send_rows.size() > 0) {
        backend.copy_to_host_async(h.staging, h.send_buffer.data(), bytes_of<T>(h.sent));
    } else {
        for (const auto& to : h.neighbours) {
            if (to.send_count == 0) continue;
            backend.copy_to_host_async(h.staging + to.send_offset, h.sent_rows(to, x),
                                       bytes_of<T>(to.send_count));
        }
    }
    backend.synchronize();
    std::unique_ptr<PendingExchange> exchange;
    {
        const CommunicationTimer timer(halo_cost, static_cast<double>(bytes_of<T>(h.sent)));
        std::vector<Message> sends, receives;
        for (const auto& to : h.neighbours) {
            if (to.send_count > 0) {
                sends.push_back(
                    {to.rank, std::span(reinterpret_cast<std::byte*>(h.staging + to.send_offset),
                                        bytes_of<T>(to.send_count))});
            }
            if (to.receive_count > 0) {
                receives.push_back({to.rank, std::span(reinterpret_cast<std::byte*>(
                                                           h.staging + h.sent + to.receive_offset),
                                                       bytes_of<T>(to.receive_count))});
            }
        }
        exchange = h.ranks.start_exchange(sends, receives);
    }
    // The block's own rows while the halo travels (issued asynchronously on a GPU).
    inner_->apply(x, y);
    {
        const CommunicationTimer timer(halo_cost, 0.0, 0);
        exchange->finish();
        // The halo onto the back-end, in order with the couplings' products below (no wait).
        if (h.received > 0) {
            backend.copy_from_host_async(h.halo.data(), h.staging + h.sent,
                                         bytes_of<T>(h.received));
        }
    }
    for (const auto& from : h.neighbours) add(from, h.halo.data() + from.receive_offset);
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
