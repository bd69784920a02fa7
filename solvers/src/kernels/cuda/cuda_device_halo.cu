// Halo exchanges that stay on the GPUs (device_halo.hpp): each rank exports one buffer of its
// device memory through CUDA IPC and maps its neighbours'. A send is one kernel whose threads
// write the rows each neighbour reads straight into its buffer (over NVLink between GPUs of one
// host; gathered by index where they are strided in the vector) and whose last block then
// raises the neighbours' flags for that exchange; a wait is one kernel that polls this rank's
// flags on the GPU and copies the rows on to where the caller reads them (scattered by index
// where asked). Both run in the stream's order: the host never waits, and nothing passes through
// host memory.
//
// A buffer: a flag per side (the exchange number last received from that neighbour) and the
// send's count of finished blocks, then two slots, each holding every side's rows received,
// side by side. Exchange k writes slot k mod 2. A rank reaches exchange k + 2 only once its
// neighbour has sent exchange k + 1, which the neighbour issued after all its work that read
// exchange k's rows: so the slot is free again, with no acknowledgement.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <cuda/atomic>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cuda_backend.hpp"
#include "cuda_check.hpp"
#include "simrun/solvers/base/communication_times.hpp"

namespace simrun::solvers::cuda {
namespace {

using Flag = unsigned long long;

constexpr std::size_t alignment = 256;
// The sides a halo may have: a box of a 3D process grid and its 26 neighbours.
constexpr int most_sides = static_cast<int>(DeviceHalo::most_sides);
constexpr std::size_t flags_bytes = alignment;  // a flag a side and the count, padded
static_assert((most_sides + 1) * sizeof(Flag) <= flags_bytes);
// A wait that lasts this long is taken for a neighbour that stopped (its process failed before
// the exchange) rather than one that is late: the kernel traps, and the run ends with an error
// instead of hanging. Generous, since the clock starts when the wait starts on this GPU, which
// may be long before the neighbour's host reaches the exchange.
constexpr Flag wait_limit_ns = 300ull * 1000 * 1000 * 1000;

constexpr std::size_t aligned(std::size_t bytes) {
    return (bytes + alignment - 1) / alignment * alignment;
}

// A slot's place in a buffer, and each side's rows' place in a slot.
struct Layout {
    std::vector<std::size_t> segment;  // per side, from the slot's start
    std::size_t slot_bytes = 0;
    explicit Layout(std::span<const HaloSide> sides = {}) {
        for (const HaloSide& side : sides) {
            segment.push_back(slot_bytes);
            slot_bytes += aligned(side.from);
        }
    }
    std::size_t total() const { return flags_bytes + 2 * slot_bytes; }
    std::size_t rows(std::uint64_t slot, std::size_t side) const {
        return flags_bytes + slot * slot_bytes + segment[side];
    }
};

// What a rank tells each neighbour when an exchange is opened: its buffer, and where in it the
// neighbour's rows and flag go.
struct Card {
    cudaIpcMemHandle_t handle{};
    // The process (a random token: process ids repeat across containers) and the buffer's
    // address in it: a neighbour in this same process on the same GPU (ranks as threads, as
    // the tests run them) is reached at that address, without IPC.
    std::uint64_t process = 0, address = 0;
    std::uint64_t expected = 0;  // the bytes this rank receives from the neighbour
    std::uint64_t side = 0;      // the neighbour's side here: its flag's index
    std::uint64_t segment = 0;   // where its rows go in a slot
    std::uint64_t slot_bytes = 0;
    char device_uuid[16]{};
    int exported = 0;
};

using SystemFlag = ::cuda::atomic_ref<Flag, ::cuda::thread_scope_system>;

// The halo's rows move as 4-byte words (floats and doubles alike); a side of a launch is
// blockIdx.y. A side's values may be read or written through an index of values (a box's face
// strided in a vector), `value_words` words a value.
struct WordCopy {
    const unsigned* from = nullptr;
    unsigned* to = nullptr;
    std::size_t words = 0;
    const std::int64_t* from_index = nullptr;
    const std::int64_t* to_index = nullptr;
    unsigned value_words = 1;
};

// Bytes: the words read and written once, and 8 per value an index gives (read by each of the
// value's words' threads, through the cache).
__device__ void copy_words(const WordCopy& c) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    const bool indexed = c.from_index != nullptr || c.to_index != nullptr;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
         i < c.words; i += stride) {
        std::size_t from = i, to = i;
        if (indexed) {
            const std::size_t value = i / c.value_words, word = i - value * c.value_words;
            if (c.from_index != nullptr) {
                from = static_cast<std::size_t>(c.from_index[value]) * c.value_words + word;
            }
            if (c.to_index != nullptr) {
                to = static_cast<std::size_t>(c.to_index[value]) * c.value_words + word;
            }
        }
        c.to[to] = c.from[from];
    }
}

struct Put {
    WordCopy side[most_sides];
    Flag* peer_flag[most_sides] = {};  // the neighbours' flags for this rank's rows
    int sides = 0;
    unsigned* arrivals = nullptr;  // blocks done (zero between launches)
    Flag exchange = 0;
    std::size_t words() const {
        std::size_t most = 0;
        for (int i = 0; i < sides; ++i) most = std::max(most, side[i].words);
        return most;
    }
};

// A block's share of the rows sent, written into the neighbours' memory by the SMs (over
// NVLink between GPUs); the last block to finish raises the neighbours' flags to the
// exchange's number. Bytes: the rows once (read here, written there), 8 a flag.
__device__ void put_share(const Put& p) {
    copy_words(p.side[blockIdx.y]);
    __threadfence_system();  // this thread's rows visible everywhere before the count below
    __syncthreads();
    if (threadIdx.x != 0) return;
    const unsigned blocks = gridDim.x * gridDim.y;
    if (atomicAdd(p.arrivals, 1u) != blocks - 1) return;
    *p.arrivals = 0;
    __threadfence_system();
    for (int i = 0; i < p.sides; ++i) {
        if (p.peer_flag[i] != nullptr) {
            SystemFlag(*p.peer_flag[i]).store(p.exchange, ::cuda::memory_order_release);
        }
    }
}

__global__ void put_rows(Put p) { put_share(p); }

struct Arrival {
    Flag* flag[most_sides] = {};  // this rank's flags for the sides waited for
    WordCopy side[most_sides];    // the rows received, copied where the caller reads them
    int sides = 0;
    Flag exchange = 0;
    Flag* waited = nullptr;  // nanoseconds waited, summed
    std::size_t words() const {
        std::size_t most = 0;
        for (int i = 0; i < sides; ++i) most = std::max(most, side[i].words);
        return most;
    }
};

// Each block waits until the flags reach the exchange's number (its first thread polls), then
// copies its share of the rows received; past wait_limit_ns it traps. Bytes: 8 per flag and
// poll; the rows copied, read and written once.
__device__ void wait_share(const Arrival& w) {
    if (threadIdx.x == 0) {
        const auto arrived = [&w]() {
            for (int i = 0; i < w.sides; ++i) {
                if (w.flag[i] != nullptr &&
                    SystemFlag(*w.flag[i]).load(::cuda::memory_order_acquire) < w.exchange) {
                    return false;
                }
            }
            return true;
        };
        Flag start = 0, now = 0;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
        unsigned sleep = 32;
        while (!arrived()) {
            __nanosleep(sleep);
            if (sleep < 256) sleep *= 2;
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
            if (now - start > wait_limit_ns) __trap();
        }
        if (blockIdx.x == 0 && blockIdx.y == 0) {
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
            atomicAdd(w.waited, now - start);
        }
    }
    __syncthreads();
    if (static_cast<int>(blockIdx.y) < w.sides) copy_words(w.side[blockIdx.y]);
}

__global__ void wait_for_rows(Arrival w) { wait_share(w); }

// A send and its wait in one kernel (one launch less per exchange where nothing runs between
// them): each block puts its share, then waits and copies its share of the rows received. A
// block waits only once its own rows are sent, and the neighbour's flag needs all of the
// neighbour's blocks to have run their put: so every block of the grid must be resident at
// once: the grid is at most what the GPU holds (occupancy), and the kernel is used between
// GPUs only, each of its own (CudaDeviceHalo::exchange_sides). Bytes: those of put_rows and
// wait_for_rows.
__global__ void exchange_rows(Put p, Arrival w) {
    put_share(p);
    wait_share(w);
}

constexpr unsigned copy_threads = 256;
constexpr std::size_t most_copy_blocks = 132;
// Where a neighbour shares this GPU (ranks as threads of one process, or processes sharing it,
// with SIMRUN_HALO=device): few blocks a copy, so that the neighbours' waiting kernels never
// fill it.
constexpr std::size_t shared_gpu_blocks = 4;

// Blocks a side for `words` words at most, at most `most`.
unsigned copy_blocks(std::size_t words, std::size_t most) {
    const std::size_t blocks = (words + copy_threads - 1) / copy_threads;
    return static_cast<unsigned>(std::max<std::size_t>(1, std::min(blocks, most)));
}

// This process, told apart from every other (process ids repeat across containers).
std::uint64_t process_token() {
    static const std::uint64_t token = [] {
        std::random_device source;
        return (static_cast<std::uint64_t>(source()) << 32) ^ source();
    }();
    return token;
}

class CudaDeviceHalo final : public DeviceHalo {
public:
    CudaDeviceHalo(const CudaBackend& backend, std::span<const HaloSide> sides)
        : backend_(backend),
          sides_(sides.begin(), sides.end()),
          layout_(sides),
          peers_(sides.size()) {}
    ~CudaDeviceHalo() override {
        // This rank's last writes into its neighbours' buffers are done once its stream is;
        // its own buffer goes with the back-end, when the neighbours have closed theirs.
        cudaStreamSynchronize(backend_.stream());
        for (const Peer& peer : peers_) {
            if (peer.imported) cudaIpcCloseMemHandle(peer.buffer);
        }
        if (own_ != nullptr) backend_.retire_halo_buffer(own_);
    }
    CudaDeviceHalo(const CudaDeviceHalo&) = delete;
    CudaDeviceHalo& operator=(const CudaDeviceHalo&) = delete;

    // This rank's buffer, exported: false where CUDA refuses.
    bool allocate() {
        if (cudaMalloc(&own_, layout_.total()) != cudaSuccess) {
            own_ = nullptr;
            cudaGetLastError();
            return false;
        }
        // The flags zero before any neighbour can raise them (it maps this buffer only after
        // the cards are exchanged).
        if (cudaMemsetAsync(own_, 0, flags_bytes, backend_.stream()) != cudaSuccess ||
            cudaStreamSynchronize(backend_.stream()) != cudaSuccess ||
            cudaIpcGetMemHandle(&handle_, own_) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        return true;
    }
    // The card for the neighbour on `side`.
    Card card(std::size_t side, int exported, const char (&uuid)[16]) const {
        Card c;
        c.exported = exported;
        c.handle = handle_;
        c.process = process_token();
        c.address = reinterpret_cast<std::uintptr_t>(own_);
        c.expected = sides_[side].from;
        c.side = side;
        c.segment = layout_.segment[side];
        c.slot_bytes = layout_.slot_bytes;
        std::memcpy(c.device_uuid, uuid, sizeof c.device_uuid);
        return c;
    }

    // Maps the buffer of the neighbour on `side`; false where CUDA refuses.
    bool map(std::size_t side, const Card& card) {
        Peer& peer = peers_[side];
        void* mapped = nullptr;
        if (card.process == process_token()) {
            mapped = reinterpret_cast<void*>(static_cast<std::uintptr_t>(card.address));
        } else if (cudaIpcOpenMemHandle(&mapped, card.handle, cudaIpcMemLazyEnablePeerAccess) ==
                   cudaSuccess) {
            peer.imported = true;
        } else {
            cudaGetLastError();
            return false;
        }
        peer.buffer = static_cast<std::byte*>(mapped);
        peer.flag = static_cast<std::size_t>(card.side);
        peer.segment = static_cast<std::size_t>(card.segment);
        peer.slot_bytes = static_cast<std::size_t>(card.slot_bytes);
        return true;
    }

    // One kernel: the rows into the neighbours' memory, then their flags (put_rows).
    void send_sides(std::span<const SentValues> to) override {
        const Put put = start_send(to);
        put_rows<<<dim3(copy_blocks(put.words(), most_blocks()), launch_sides()), copy_threads, 0,
                   backend_.stream()>>>(put);
        SIMRUN_CUDA_CHECK(cudaGetLastError());
    }
    // One kernel: the wait on the GPU, and the rows received copied on where asked
    // (wait_for_rows).
    void wait_sides(std::span<const PlacedValues> into) override {
        const Arrival arrival = start_wait(into);
        const std::size_t words = arrival.words();
        const dim3 grid(words > 0 ? copy_blocks(words, most_blocks()) : 1,
                        words > 0 ? launch_sides() : 1);
        const unsigned threads = words > 0 ? copy_threads : 32;
        wait_for_rows<<<grid, threads, 0, backend_.stream()>>>(arrival);
        SIMRUN_CUDA_CHECK(cudaGetLastError());
    }
    // Both in one kernel (exchange_rows), between GPUs. Where a neighbour shares this GPU (a
    // testing arrangement), a send and a wait: there the GPU test suite, ranks as threads on
    // one H100, once hung in the merged kernel after other tests had run (2026-11-27; each test
    // alone passed). The likely cause is a kernel's first launch waiting for a neighbour's
    // waiting kernel (lazy loading: load_halo_kernels); the two kernels stay on a shared GPU
    // until a GPU run shows the merged one passes there too.
    void exchange_sides(std::span<const SentValues> to,
                        std::span<const PlacedValues> into) override {
        // Every block resident at once (exchange_rows): at most what the GPU holds.
        const std::size_t most = std::min(most_copy_blocks, resident_blocks_ / launch_sides());
        if (shared_gpu_ || most < 1) {
            send_sides(to);
            wait_sides(into);
            return;
        }
        const Put put = start_send(to);
        const Arrival arrival = start_wait(into);
        const dim3 grid(copy_blocks(std::max(put.words(), arrival.words()), most), launch_sides());
        exchange_rows<<<grid, copy_threads, 0, backend_.stream()>>>(put, arrival);
        SIMRUN_CUDA_CHECK(cudaGetLastError());
    }
    const void* received(std::size_t side) const override {
        return side < received_.size() ? received_[side] : nullptr;
    }

    // A neighbour on this same GPU (where asked for: SIMRUN_HALO=device).
    void set_shared_gpu() { shared_gpu_ = true; }
    // How many blocks of exchange_rows this GPU holds at once.
    void set_resident_blocks(std::size_t blocks) { resident_blocks_ = blocks; }

private:
    // A neighbour's buffer as mapped here, and where this rank's rows and flag go in it.
    struct Peer {
        std::byte* buffer = nullptr;
        bool imported = false;  // through IPC: closed at the end
        std::size_t flag = 0, segment = 0, slot_bytes = 0;
    };

    // Blocks a side: up to most_copy_blocks, and where a neighbour shares this GPU few in all
    // (every block of a wait spins), so that its ranks' waiting kernels never fill it.
    std::size_t most_blocks() const {
        return shared_gpu_ ? std::max<std::size_t>(1, 2 * shared_gpu_blocks / launch_sides())
                           : most_copy_blocks;
    }
    unsigned value_words(std::size_t side) const {
        return static_cast<unsigned>(std::max<std::size_t>(1, sides_[side].value_bytes / 4));
    }
    unsigned launch_sides() const {
        return static_cast<unsigned>(std::max<std::size_t>(1, sides_.size()));
    }

    // A send's checks, its exchange number and slot, and its rows' copies.
    Put start_send(std::span<const SentValues> to) {
        if (sent_unwaited_)
            throw std::logic_error("device halo: a send before the last one's wait");
        for (std::size_t i = 0; i < sides_.size(); ++i) {
            if (sides_[i].to > 0 && (i >= to.size() || to[i].at == nullptr)) {
                throw std::logic_error(
                    "device halo: no rows to send to a neighbour that reads some");
            }
        }
        sent_unwaited_ = true;
        const std::uint64_t slot = ++exchanges_ % 2;
        std::size_t bytes = 0;
        for (const HaloSide& side : sides_) bytes += side.to;
        const CommunicationTimer timer(backend_.communicator().times().halo,
                                       static_cast<double>(bytes));
        Put put;
        put.exchange = exchanges_;
        put.sides = static_cast<int>(sides_.size());
        put.arrivals = reinterpret_cast<unsigned*>(reinterpret_cast<Flag*>(own_) + most_sides);
        received_.assign(sides_.size(), nullptr);
        for (std::size_t i = 0; i < sides_.size(); ++i) {
            const Peer& peer = peers_[i];
            if (peer.buffer == nullptr) continue;  // a side taking no part
            put.side[i] = {static_cast<const unsigned*>(sides_[i].to > 0 ? to[i].at : nullptr),
                           reinterpret_cast<unsigned*>(peer.buffer + flags_bytes +
                                                       slot * peer.slot_bytes + peer.segment),
                           sides_[i].to / 4,
                           sides_[i].to > 0 ? to[i].index : nullptr,
                           nullptr,
                           value_words(i)};
            put.peer_flag[i] = reinterpret_cast<Flag*>(peer.buffer) + peer.flag;
            if (sides_[i].from > 0) received_[i] = own_ + layout_.rows(slot, i);
        }
        return put;
    }

    // A wait's checks, its flags, and the copies on of the rows received.
    Arrival start_wait(std::span<const PlacedValues> into) {
        if (!sent_unwaited_) throw std::logic_error("device halo: a wait without a send");
        sent_unwaited_ = false;
        Arrival arrival;
        arrival.exchange = exchanges_;
        arrival.waited = backend_.halo_waited_ns();
        arrival.sides = static_cast<int>(sides_.size());
        Flag* own_flags = reinterpret_cast<Flag*>(own_);
        for (std::size_t i = 0; i < sides_.size(); ++i) {
            if (peers_[i].buffer != nullptr) arrival.flag[i] = own_flags + i;
            if (i < into.size() && into[i].at != nullptr && received_[i] != nullptr) {
                arrival.side[i] = {reinterpret_cast<const unsigned*>(received_[i]),
                                   static_cast<unsigned*>(into[i].at),
                                   sides_[i].from / 4,
                                   nullptr,
                                   into[i].index,
                                   value_words(i)};
            }
        }
        return arrival;
    }

    const CudaBackend& backend_;
    std::vector<HaloSide> sides_;
    bool shared_gpu_ = false;
    std::size_t resident_blocks_ = 0;
    Layout layout_;
    std::vector<Peer> peers_;
    std::byte* own_ = nullptr;
    cudaIpcMemHandle_t handle_{};
    bool sent_unwaited_ = false;  // send and wait alternate (the slots' argument needs it)
    std::uint64_t exchanges_ = 0;
    std::vector<const std::byte*> received_;
};

enum class HaloMode { automatic, host, device };

// SIMRUN_HALO: "host" stages every halo through host memory; "device" keeps it on the GPUs
// also where two ranks share one (processes time-sliced on it, or threads of one process as the
// tests run them: for tests); unset or "auto", on the GPUs where every neighbour is another GPU
// this one can reach.
HaloMode halo_mode() {
    const char* text = std::getenv("SIMRUN_HALO");
    const std::string_view value = text == nullptr ? "auto" : text;
    if (value == "auto" || value.empty()) return HaloMode::automatic;
    if (value == "host") return HaloMode::host;
    if (value == "device") return HaloMode::device;
    throw std::invalid_argument("environment variable SIMRUN_HALO is '" + std::string(value) +
                                "': expected auto, host or device");
}

// The UUIDs of the devices this process sees, by ordinal (read once: cudaGetDeviceProperties
// is slow, and every halo opened asks); a device whose properties cannot be read has none.
using Uuid = std::array<char, 16>;
const std::vector<std::optional<Uuid>>& device_uuids() {
    static const std::vector<std::optional<Uuid>> uuids = [] {
        int count = 0;
        if (cudaGetDeviceCount(&count) != cudaSuccess) {
            cudaGetLastError();
            count = 0;
        }
        std::vector<std::optional<Uuid>> found(static_cast<std::size_t>(count));
        for (int d = 0; d < count; ++d) {
            cudaDeviceProp properties{};
            if (cudaGetDeviceProperties(&properties, d) == cudaSuccess) {
                Uuid uuid;
                std::memcpy(uuid.data(), properties.uuid.bytes, uuid.size());
                found[static_cast<std::size_t>(d)] = uuid;
            } else {
                cudaGetLastError();
            }
        }
        return found;
    }();
    return uuids;
}

// Copies the UUID of this process's device `device` into `uuid`; false where it has none.
bool uuid_of(int device, char (&uuid)[16]) {
    const auto& uuids = device_uuids();
    const auto d = static_cast<std::size_t>(device);
    if (d >= uuids.size() || !uuids[d]) return false;
    std::memcpy(uuid, uuids[d]->data(), sizeof uuid);
    return true;
}

// Whether the sides that take part (some bytes either way) name distinct ranks other than this
// one, among `ranks`.
bool names_distinct_others(std::span<const HaloSide> sides, const Communicator& ranks) {
    std::vector<int> named;
    for (const HaloSide& side : sides) {
        if (side.to > 0 || side.from > 0) named.push_back(side.rank);
    }
    std::sort(named.begin(), named.end());
    return std::adjacent_find(named.begin(), named.end()) == named.end() &&
           std::none_of(named.begin(), named.end(),
                        [&](int q) { return q == ranks.rank() || q < 0 || q >= ranks.size(); });
}

// Whether a device halo can take `sides`: at most most_sides, each in whole 4-byte words.
bool fits_device_halo(std::span<const HaloSide> sides) {
    if (sides.size() > static_cast<std::size_t>(most_sides)) return false;
    return std::all_of(sides.begin(), sides.end(), [](const HaloSide& side) {
        return side.to % 4 == 0 && side.from % 4 == 0 && side.value_bytes % 4 == 0 &&
               side.value_bytes > 0;
    });
}

// This process's ordinal of the device with `uuid`, or -1 where it does not see it.
int device_with_uuid(const char (&uuid)[16]) {
    const auto& uuids = device_uuids();
    for (std::size_t d = 0; d < uuids.size(); ++d) {
        if (uuids[d] && std::memcmp(uuids[d]->data(), uuid, sizeof uuid) == 0) {
            return static_cast<int>(d);
        }
    }
    return -1;
}

// The halo's kernels loaded now (for this thread's current device): under lazy loading (CUDA's
// default) a kernel's first launch may wait for the kernels running in the context, and a
// first send while a neighbour of this process (ranks as threads sharing the GPU) waits on the
// GPU for it would never start. (Other kernels first launched between exchanges can do the
// same there: the GPU tests run with CUDA_MODULE_LOADING=EAGER, tools/gpu-check.)
// Returns how many blocks of exchange_rows `device` holds at once (0 where CUDA cannot say).
std::size_t load_halo_kernels(int device) {
    cudaFuncAttributes attributes{};
    for (const void* kernel :
         {reinterpret_cast<const void*>(&put_rows), reinterpret_cast<const void*>(&wait_for_rows),
          reinterpret_cast<const void*>(&exchange_rows)}) {
        if (cudaFuncGetAttributes(&attributes, kernel) != cudaSuccess) cudaGetLastError();
    }
    int per_sm = 0, sms = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, exchange_rows, static_cast<int>(copy_threads), 0) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return static_cast<std::size_t>(std::max(0, per_sm * sms));
}

}  // namespace

Backend::DeviceHaloReadiness CudaBackend::device_halo_readiness() const {
    try {
        return halo_mode() == HaloMode::host ? DeviceHaloReadiness::unable
                                             : DeviceHaloReadiness::able;
    } catch (const std::invalid_argument&) {
        return DeviceHaloReadiness::bad_setting;
    }
}

std::unique_ptr<DeviceHalo> CudaBackend::make_device_halo(std::span<const HaloSide> given) const {
    const std::size_t resident = load_halo_kernels(device_);
    const Communicator& ranks = communicator();
    // A side of no bytes takes no part (a rank holding none of a level split over fewer ranks
    // has none, and goes through the collectives only): no card, flag or rows.
    const std::span<const HaloSide> sides = given;
    const auto active = [&](std::size_t i) { return sides[i].to > 0 || sides[i].from > 0; };
    std::size_t taking_part = 0;
    for (std::size_t i = 0; i < sides.size(); ++i) taking_part += active(i) ? 1 : 0;
    // Every rank goes through the same collectives, whatever it finds: a failure here only
    // turns device halos off, on every rank (the agreement below).
    const HaloMode mode = halo_mode();  // valid: open_device_halo agreed on it
    // The sides taking part name distinct other ranks, on every rank, before any card goes
    // out (a card to a rank that expects none would never be received).
    if (ranks.min(names_distinct_others(sides, ranks) ? 1.0 : 0.0) < 0.5) {
        device_halos_ = 0;
        return nullptr;
    }
    bool wanted = fits_device_halo(sides);
    if (wanted && halo_waited_ns_ == nullptr) {
        if (cudaMalloc(&halo_waited_ns_, sizeof(Flag)) != cudaSuccess ||
            cudaMemsetAsync(halo_waited_ns_, 0, sizeof(Flag), stream_) != cudaSuccess) {
            cudaGetLastError();
            cudaFree(halo_waited_ns_);
            halo_waited_ns_ = nullptr;
            wanted = false;
        }
    }
    auto halo = std::make_unique<CudaDeviceHalo>(*this, sides);
    halo->set_resident_blocks(resident);
    int exported = taking_part > 0 && wanted && halo->allocate() ? 1 : 0;
    char uuid[16]{};
    if (!uuid_of(device_, uuid)) exported = 0;
    // A card to each neighbour that takes part, and one from each.
    std::vector<Card> mine(sides.size()), theirs(sides.size());
    {
        std::vector<Message> sends, receives;
        for (std::size_t i = 0; i < sides.size(); ++i) {
            if (!active(i)) continue;
            mine[i] = halo->card(i, exported, uuid);
            sends.push_back({sides[i].rank, std::as_writable_bytes(std::span(&mine[i], 1))});
            receives.push_back({sides[i].rank, std::as_writable_bytes(std::span(&theirs[i], 1))});
        }
        ranks.start_exchange(sends, receives)->finish();
    }
    // A neighbour is reached where it exported its buffer, expects what this rank sends, and is
    // a GPU this one may map: another GPU with peer access, or this GPU where asked for
    // (SIMRUN_HALO=device). A neighbour in this same process must be on this GPU (its buffer
    // is used at its address, without IPC's peer mapping).
    const auto reachable = [&](const Card& card, std::size_t sends) {
        if (card.exported == 0 || card.expected != sends) return false;
        const int device = device_with_uuid(card.device_uuid);
        if (device == device_) {
            halo->set_shared_gpu();
            return mode == HaloMode::device;
        }
        if (card.process == process_token()) return false;
        int can = 0;
        return device >= 0 && cudaDeviceCanAccessPeer(&can, device_, device) == cudaSuccess &&
               can != 0;
    };
    // A rank with no side taking part holds nothing back.
    bool ok = taking_part == 0 || exported != 0;
    for (std::size_t i = 0; ok && i < sides.size(); ++i) {
        ok = !active(i) || (reachable(theirs[i], sides[i].to) && halo->map(i, theirs[i]));
    }
    const bool agreed = ranks.min(ok ? 1.0 : 0.0) > 0.5;
    device_halos_ = agreed ? 1 : 0;
    // Where the ranks did not agree, the halo goes (its mappings closed, its buffer kept with
    // the back-end).
    if (!agreed || taking_part == 0) return nullptr;
    return halo;
}

std::string CudaBackend::halo_path() const {
    return device_halos_ == 1
               ? "GPU to GPU: peer copies into the neighbours' memory (CUDA IPC), waited for on "
                 "the GPU"
               : "staged through pinned host memory, MPI messages between";
}

void CudaBackend::collect_device_halo_times() const {
    if (halo_waited_ns_ == nullptr) return;
    Flag waited = 0;
    copy_to_host(&waited, halo_waited_ns_, sizeof waited);
    communicator().times().halo.seconds += 1e-9 * static_cast<double>(waited - halo_collected_ns_);
    halo_collected_ns_ = waited;
}

}  // namespace simrun::solvers::cuda
