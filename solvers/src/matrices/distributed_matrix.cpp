#include "simrun/solvers/matrices/distributed_matrix.hpp"

#include <algorithm>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/kernel_table.hpp"

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
        typename NeighbourCouplings<T>::Run run;
        run.row = first;
        bool any = false;
        for (std::int64_t i = first; i < last; ++i) {
            T& entry = block.at(d, i);
            any = any || entry != T(0);
            run.values.push_back(entry);
            entry = T(0);
        }
        if (!any) continue;
        // The halo row of row `first`'s column: before, counted back from the neighbour's end
        // (fixed below, once the width is known); after, from its start.
        NeighbourCouplings<T>& side = o < 0 ? split.before : split.after;
        run.halo_row = o < 0 ? first + o : first + o - n;
        side.width = std::max(side.width, o < 0 ? -o : o);
        side.runs.push_back(std::move(run));
    }
    for (auto& run : split.before.runs) run.halo_row += split.before.width;
    // The inner matrix keeps the block's storage: a diagonal reaching past the whole block (a
    // block of one grid plane) holds no entry of it and is dropped.
    block.keep_diagonals([&](int d) {
        const std::int64_t o = block.offsets[static_cast<std::size_t>(d)];
        return o > -n && o < n;
    });
    split.inner = std::move(block);
    return split;
}

template <typename T>
struct DistributedMatrix<T>::Halo {
    const Backend& backend;
    const Communicator& ranks;
    // Rows sent to the rank before (this block's first `send_before`) and after (its last).
    std::int64_t send_before = 0, send_after = 0;
    NeighbourCouplings<T> before, after;
    std::unique_ptr<DeviceHalo> device;                       // where the halo stays on GPUs
    Array<T> received_before, received_after;                 // else the halo copied back
    Array<T> values;                                          // every run's values, runs in order
    std::vector<std::int64_t> before_offsets, after_offsets;  // of each run in `values`
    T* staging = nullptr;  // pinned host: send before, send after, receive before, after
    std::size_t staged = 0;

    Halo(const std::shared_ptr<const Backend>& on, NeighbourCouplings<T> b, NeighbourCouplings<T> a)
        : backend(*on), ranks(on->communicator()), before(std::move(b)), after(std::move(a)) {}
    ~Halo() {
        if (staging != nullptr) backend.release_host(staging);
    }
    T* send_before_buffer() const { return staging; }
    T* send_after_buffer() const { return staging + send_before; }
    T* receive_before_buffer() const { return staging + send_before + send_after; }
    T* receive_after_buffer() const { return staging + send_before + send_after + before.width; }
};

namespace {

struct BlockShape {
    std::int64_t rows, before, after;
};

template <typename T>
std::size_t bytes_of(std::int64_t rows) {
    return static_cast<std::size_t>(rows) * sizeof(T);
}

}  // namespace

template <typename T>
DistributedMatrix<T>::DistributedMatrix(std::unique_ptr<LinearOperator<T>> inner,
                                        NeighbourCouplings<T> before, NeighbourCouplings<T> after)
    : inner_(std::move(inner)) {
    halo_ = std::make_unique<Halo>(inner_->backend(), std::move(before), std::move(after));
    Halo& h = *halo_;
    const Communicator& ranks = h.ranks;
    const int rank = ranks.rank(), count = ranks.size();
    // Every rank learns every block's size and reach, and so finds the same faults.
    const BlockShape mine{static_cast<std::int64_t>(inner_->size()), h.before.width, h.after.width};
    const auto gathered = ranks.all_gather(std::as_bytes(std::span(&mine, 1)));
    std::vector<BlockShape> blocks(gathered.size());
    for (std::size_t r = 0; r < gathered.size(); ++r) {
        std::memcpy(&blocks[r], gathered[r].data(), sizeof(BlockShape));
    }
    for (int r = 0; r < count; ++r) {
        const BlockShape& b = blocks[static_cast<std::size_t>(r)];
        const std::string who =
            "the rows of rank " + std::to_string(r) + " (" + std::to_string(b.rows) + " rows)";
        if ((r == 0 && b.before > 0) || (r == count - 1 && b.after > 0)) {
            throw std::invalid_argument(who + " couple to columns outside the matrix");
        }
        if (r > 0 && b.before > blocks[static_cast<std::size_t>(r - 1)].rows) {
            throw std::invalid_argument(who + " reach " + std::to_string(b.before) +
                                        " rows back, further than rank " + std::to_string(r - 1) +
                                        "'s block: use fewer ranks");
        }
        if (r + 1 < count && b.after > blocks[static_cast<std::size_t>(r + 1)].rows) {
            throw std::invalid_argument(who + " reach " + std::to_string(b.after) +
                                        " rows ahead, further than rank " + std::to_string(r + 1) +
                                        "'s block: use fewer ranks");
        }
    }
    if (rank > 0) h.send_before = blocks[static_cast<std::size_t>(rank - 1)].after;
    if (rank + 1 < count) h.send_after = blocks[static_cast<std::size_t>(rank + 1)].before;

    const std::shared_ptr<const Backend>& backend = inner_->backend();
    h.device = backend->open_device_halo({bytes_of<T>(h.send_before), bytes_of<T>(h.before.width),
                                          bytes_of<T>(h.send_after), bytes_of<T>(h.after.width)});
    std::vector<T> values;
    for (auto* side : {&h.before, &h.after}) {
        auto& offsets = side == &h.before ? h.before_offsets : h.after_offsets;
        for (const auto& run : side->runs) {
            offsets.push_back(static_cast<std::int64_t>(values.size()));
            values.insert(values.end(), run.values.begin(), run.values.end());
        }
    }
    // Every rank learns whether another's memory ran out (its products would wait for it).
    all_or_none(ranks, [&] {
        h.values = Array<T>::from_host(backend, values);
        if (h.device) return;
        h.received_before = Array<T>(backend, static_cast<std::size_t>(h.before.width));
        h.received_after = Array<T>(backend, static_cast<std::size_t>(h.after.width));
        h.staged = static_cast<std::size_t>(h.send_before + h.send_after + h.before.width +
                                            h.after.width);
        if (h.staged > 0) h.staging = static_cast<T*>(backend->allocate_host(h.staged * sizeof(T)));
    });
}

template <typename T>
DiaData<T> transpose_block(const Communicator& ranks, const DiaData<T>& given) {
    const int rank = ranks.rank(), count = ranks.size();
    // Every rank's row count and offsets: the blocks go on the union of the ranks' diagonals
    // (so that every rank sends its neighbours the same shape), and every rank finds the same
    // faults.
    std::vector<std::int64_t> mine{given.n};
    mine.insert(mine.end(), given.offsets.begin(), given.offsets.end());
    const auto gathered = ranks.all_gather(std::as_bytes(std::span(mine)));
    std::vector<int> offsets;
    for (const auto& bytes : gathered) {
        std::vector<std::int64_t> theirs(bytes.size() / sizeof(std::int64_t));
        std::memcpy(theirs.data(), bytes.data(), bytes.size());
        offsets.insert(offsets.end(), theirs.begin() + 1, theirs.end());
    }
    std::sort(offsets.begin(), offsets.end());
    offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
    std::int64_t width = 0;
    for (const int o : offsets) width = std::max<std::int64_t>(width, o < 0 ? -o : o);
    for (int r = 0; r < count; ++r) {
        std::int64_t rows;
        std::memcpy(&rows, gathered[static_cast<std::size_t>(r)].data(), sizeof rows);
        if (count > 1 && rows < width) {
            throw std::invalid_argument("the transpose over ranks reads " + std::to_string(width) +
                                        " rows of each neighbour, but rank " + std::to_string(r) +
                                        " holds " + std::to_string(rows) + ": use fewer ranks");
        }
    }
    DiaData<T> block{given.n, offsets, std::vector<T>(offsets.size() * given.n, T(0))};
    for (int d = 0; d < given.num_diagonals(); ++d) {
        std::copy_n(given.values.begin() + d * given.n, given.n,
                    block.values.begin() +
                        block.find_diagonal(given.offsets[static_cast<std::size_t>(d)]) * given.n);
    }
    // The neighbours' rows the transpose reads: the last `width` of the rank before, the first
    // `width` of the rank after (every diagonal's values).
    const std::int64_t n = block.n;
    const auto diagonals = static_cast<std::size_t>(block.num_diagonals());
    const auto pack = [&](std::int64_t first) {
        std::vector<T> values(diagonals * static_cast<std::size_t>(width));
        for (std::size_t d = 0; d < diagonals; ++d) {
            std::copy_n(block.values.begin() + static_cast<std::int64_t>(d) * n + first, width,
                        values.begin() + static_cast<std::int64_t>(d) * width);
        }
        return values;
    };
    const bool before = rank > 0, after = rank + 1 < count;
    std::vector<T> to_before = before ? pack(0) : std::vector<T>{};
    std::vector<T> to_after = after ? pack(n - width) : std::vector<T>{};
    std::vector<T> from_before(to_before.size()), from_after(to_after.size());
    const auto bytes = [](std::vector<T>& v) { return std::as_writable_bytes(std::span(v)); };
    exchange_with_neighbours(ranks, bytes(to_before), bytes(from_before), bytes(to_after),
                             bytes(from_after));
    // (A^T)_{i, i - o} = A_{i - o, i}: diagonal -o at row i holds A's diagonal o at row i - o.
    // The transpose's diagonals ascending: A's in reverse order (DiaData keeps them ascending).
    DiaData<T> transposed{n, {}, std::vector<T>(diagonals * static_cast<std::size_t>(n), T(0))};
    std::vector<std::size_t> order(diagonals);
    for (std::size_t d = 0; d < diagonals; ++d) order[d] = d;
    std::sort(order.begin(), order.end(),
              [&](std::size_t x, std::size_t y) { return block.offsets[x] > block.offsets[y]; });
    for (std::size_t t = 0; t < diagonals; ++t) {
        const std::size_t d = order[t];
        const std::int64_t o = block.offsets[d];
        transposed.offsets.push_back(static_cast<int>(-o));
        const auto di = static_cast<std::int64_t>(d);
        for (std::int64_t i = 0; i < n; ++i) {
            const std::int64_t j = i - o;  // A's row, in this block's numbering
            T value = T(0);
            if (j >= 0 && j < n) {
                value = block.at(static_cast<int>(d), j);
            } else if (j < 0 && before && j >= -width) {
                value = from_before[static_cast<std::size_t>(di * width + width + j)];
            } else if (j >= n && after && j < n + width) {
                value = from_after[static_cast<std::size_t>(di * width + j - n)];
            }
            transposed.at(static_cast<int>(t), i) = value;
        }
    }
    return transposed;
}

template <typename T>
DistributedMatrix<T>::~DistributedMatrix() = default;

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
    // y_i += A_ij halo_j for each run of couplings to a neighbour's rows.
    const auto add = [&](const NeighbourCouplings<T>& side,
                         const std::vector<std::int64_t>& offsets, const T* halo) {
        for (std::size_t r = 0; r < side.runs.size(); ++r) {
            const auto& run = side.runs[r];
            k.scaled_axpy(backend, run.values.size(), T(1), h.values.data() + offsets[r],
                          halo + run.halo_row, y.data() + run.row);
        }
    };
    if (h.device) {
        // The rows sent go straight into the neighbours' memory; the block's own rows run
        // while the neighbours' travel, and the couplings wait for them on the device (two
        // kernels around the block's product, no host wait).
        h.device->send(h.send_before > 0 ? x.data() : nullptr,
                       h.send_after > 0 ? x.data() + (n - h.send_after) : nullptr);
        inner_->apply(x, y);
        h.device->wait();
        add(h.before, h.before_offsets, static_cast<const T*>(h.device->received_before()));
        add(h.after, h.after_offsets, static_cast<const T*>(h.device->received_after()));
        return;
    }
    const int rank = h.ranks.rank();
    CommunicationCost& halo_cost = h.ranks.times().halo;
    // The rows the neighbours reach, staged on the host after x's work: one wait for both (it
    // also frees the buffers of the halo received last time, whose copy it waits for).
    if (h.send_before > 0) {
        backend.copy_to_host_async(h.send_before_buffer(), x.data(), bytes_of<T>(h.send_before));
    }
    if (h.send_after > 0) {
        backend.copy_to_host_async(h.send_after_buffer(), x.data() + (n - h.send_after),
                                   bytes_of<T>(h.send_after));
    }
    backend.synchronize();
    std::unique_ptr<PendingExchange> exchange;
    {
        const CommunicationTimer timer(
            halo_cost, static_cast<double>(bytes_of<T>(h.send_before + h.send_after)));
        const auto message = [](int to, T* buffer, std::int64_t rows) {
            return Message{to, std::span(reinterpret_cast<std::byte*>(buffer), bytes_of<T>(rows))};
        };
        std::vector<Message> sends, receives;
        if (h.send_before > 0)
            sends.push_back(message(rank - 1, h.send_before_buffer(), h.send_before));
        if (h.send_after > 0)
            sends.push_back(message(rank + 1, h.send_after_buffer(), h.send_after));
        if (h.before.width > 0) {
            receives.push_back(message(rank - 1, h.receive_before_buffer(), h.before.width));
        }
        if (h.after.width > 0) {
            receives.push_back(message(rank + 1, h.receive_after_buffer(), h.after.width));
        }
        exchange = h.ranks.start_exchange(sends, receives);
    }
    // The block's own rows while the halo travels (issued asynchronously on a GPU).
    inner_->apply(x, y);
    {
        const CommunicationTimer timer(halo_cost, 0.0, 0);
        exchange->finish();
        // The halo onto the back-end, in order with the couplings' products below (no wait).
        if (h.before.width > 0) {
            backend.copy_from_host_async(h.received_before.data(), h.receive_before_buffer(),
                                         bytes_of<T>(h.before.width));
        }
        if (h.after.width > 0) {
            backend.copy_from_host_async(h.received_after.data(), h.receive_after_buffer(),
                                         bytes_of<T>(h.after.width));
        }
    }
    add(h.before, h.before_offsets, h.received_before.data());
    add(h.after, h.after_offsets, h.received_after.data());
}

template struct SplitBlock<float>;
template struct SplitBlock<double>;
template SplitBlock<float> split_block(DiaData<float>);
template SplitBlock<double> split_block(DiaData<double>);
template DiaData<float> transpose_block(const Communicator&, const DiaData<float>&);
template DiaData<double> transpose_block(const Communicator&, const DiaData<double>&);
template class DistributedMatrix<float>;
template class DistributedMatrix<double>;

}  // namespace simrun::solvers
