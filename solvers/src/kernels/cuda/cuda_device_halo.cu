// Halo exchanges that stay on the GPUs (device_halo.hpp): each rank exports one buffer of its
// device memory through CUDA IPC and maps its neighbours'. A send is one kernel whose threads
// write the rows a neighbour reads straight into its buffer (over NVLink between GPUs of one
// host) and whose last block then raises the neighbour's flag for that exchange; a wait is one
// kernel that polls this rank's flags on the GPU and copies the rows on to where the caller
// reads them. Both run in the stream's order: the host never waits, and nothing passes through
// host memory.
//
// A buffer: two flags (the exchange number last received from the rank before, and from the
// rank after) and the send's count of finished blocks, then two slots, each holding the rows
// from before and the rows from after. Exchange k writes slot k mod 2. A rank reaches exchange
// k + 2 only once its neighbour has sent exchange k + 1, which the neighbour issued after all
// its work that read exchange k's rows: so the slot is free again, with no acknowledgement.
#include <cuda/atomic>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cuda_backend.hpp"
#include "simrun/solvers/base/communication_times.hpp"
#include "cuda_check.hpp"

namespace simrun::solvers::cuda {
namespace {

using Flag = unsigned long long;

constexpr std::size_t alignment = 256;
constexpr std::size_t flags_bytes = alignment;  // the two flags and the count, padded
// A wait that lasts this long is taken for a neighbour that stopped (its process failed before
// the exchange) rather than one that is late: the kernel traps, and the run ends with an error
// instead of hanging. Generous, since the clock starts when the wait starts on this GPU, which
// may be long before the neighbour's host reaches the exchange.
constexpr Flag wait_limit_ns = 300ull * 1000 * 1000 * 1000;

constexpr std::size_t aligned(std::size_t bytes) {
    return (bytes + alignment - 1) / alignment * alignment;
}

// The flags' and slots' places in a buffer made for `from_before` and `from_after` bytes.
struct Layout {
    std::size_t from_before = 0, from_after = 0;
    std::size_t slot_bytes() const { return aligned(from_before) + aligned(from_after); }
    std::size_t total() const { return flags_bytes + 2 * slot_bytes(); }
    std::size_t before_rows(std::uint64_t slot) const { return flags_bytes + slot * slot_bytes(); }
    std::size_t after_rows(std::uint64_t slot) const {
        return before_rows(slot) + aligned(from_before);
    }
};

// What a rank tells each neighbour when an exchange is opened.
struct Card {
    cudaIpcMemHandle_t handle{};
    // The process (a random token: process ids repeat across containers) and the buffer's
    // address in it: a neighbour in this same process on the same GPU (ranks as threads, as
    // the tests run them) is reached at that address, without IPC.
    std::uint64_t process = 0, address = 0;
    std::uint64_t from_before = 0, from_after = 0;
    char device_uuid[16]{};
    int exported = 0;
};

using SystemFlag = ::cuda::atomic_ref<Flag, ::cuda::thread_scope_system>;

// The halo's rows move as 4-byte words (floats and doubles alike); a side of a launch is
// blockIdx.y (0: the rank before, 1: the rank after).
struct WordCopy {
    const unsigned* from = nullptr;
    unsigned* to = nullptr;
    std::size_t words = 0;
};

__device__ void copy_words(const WordCopy& c) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
         i < c.words; i += stride) {
        c.to[i] = c.from[i];
    }
}

struct Put {
    WordCopy side[2];
    Flag* peer_flag[2] = {nullptr, nullptr};  // the neighbours' flags for this rank's rows
    unsigned* arrivals = nullptr;             // blocks done (zero between launches)
    Flag exchange = 0;
    std::size_t words() const { return std::max(side[0].words, side[1].words); }
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
    for (Flag* flag : p.peer_flag) {
        if (flag != nullptr) SystemFlag(*flag).store(p.exchange, ::cuda::memory_order_release);
    }
}

__global__ void put_rows(Put p) { put_share(p); }

struct Arrival {
    Flag* flag[2] = {nullptr, nullptr};  // this rank's flags for the sides waited for
    WordCopy side[2];                    // the rows received, copied where the caller reads them
    Flag exchange = 0;
    Flag* waited = nullptr;              // nanoseconds waited, summed
    std::size_t words() const { return std::max(side[0].words, side[1].words); }
};

// Each block waits until the flags reach the exchange's number (its first thread polls), then
// copies its share of the rows received; past wait_limit_ns it traps. Bytes: 8 per flag and
// poll; the rows copied, read and written once.
__device__ void wait_share(const Arrival& w) {
    if (threadIdx.x == 0) {
        const auto arrived = [&w](const Flag* flag) {
            return flag == nullptr ||
                   SystemFlag(*const_cast<Flag*>(flag)).load(::cuda::memory_order_acquire) >=
                       w.exchange;
        };
        Flag start = 0, now = 0;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
        unsigned sleep = 32;
        while (!arrived(w.flag[0]) || !arrived(w.flag[1])) {
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
    copy_words(w.side[blockIdx.y]);
}

__global__ void wait_for_rows(Arrival w) { wait_share(w); }

// A send and its wait in one kernel (one launch less per exchange where nothing runs between
// them): each block puts its share, then waits and copies its share of the rows received. A
// block waits only once its own rows are sent, and the neighbour's flag needs all of the
// neighbour's blocks to have run their put: so every block of the grid must be resident at
// once: the grid is at most what the GPU holds (occupancy), and the kernel is used between
// GPUs only, each of its own (CudaDeviceHalo::exchange). Bytes: those of put_rows and
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
    CudaDeviceHalo(const CudaBackend& backend, const HaloBytes& bytes, bool before, bool after)
        : backend_(backend), bytes_(bytes), before_(before), after_(after),
          layout_{bytes.from_before, bytes.from_after} {}
    ~CudaDeviceHalo() override {
        // This rank's last writes into its neighbours' buffers are done once its stream is;
        // its own buffer goes with the back-end, when the neighbours have closed theirs.
        cudaStreamSynchronize(backend_.stream());
        if (before_imported_) cudaIpcCloseMemHandle(before_peer_);
        if (after_imported_) cudaIpcCloseMemHandle(after_peer_);
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
    const cudaIpcMemHandle_t& handle() const { return handle_; }
    const std::byte* own() const { return own_; }

    // Maps a neighbour's buffer (`before`: the rank before); false where CUDA refuses.
    bool map(bool before, const Card& card) {
        void* mapped = nullptr;
        if (card.process == process_token()) {
            mapped = reinterpret_cast<void*>(static_cast<std::uintptr_t>(card.address));
        } else if (cudaIpcOpenMemHandle(&mapped, card.handle, cudaIpcMemLazyEnablePeerAccess) ==
                   cudaSuccess) {
            (before ? before_imported_ : after_imported_) = true;
        } else {
            cudaGetLastError();
            return false;
        }
        (before ? before_peer_ : after_peer_) = static_cast<std::byte*>(mapped);
        (before ? before_layout_ : after_layout_) = Layout{card.from_before, card.from_after};
        return true;
    }

    // One kernel: the rows into the neighbours' memory, then their flags (put_rows).
    void send(const void* to_before, const void* to_after) override {
        const Put put = start_send(to_before, to_after);
        put_rows<<<dim3(copy_blocks(put.words(), most_blocks()), 2), copy_threads, 0,
                   backend_.stream()>>>(put);
        SIMRUN_CUDA_CHECK(cudaGetLastError());
    }
    // One kernel: the wait on the GPU, and the rows received copied to `into_before` and
    // `into_after` where given (wait_for_rows).
    void wait(void* into_before, void* into_after) override {
        const Arrival arrival = start_wait(into_before, into_after);
        const std::size_t words = arrival.words();
        const dim3 grid(words > 0 ? copy_blocks(words, most_blocks()) : 1, words > 0 ? 2 : 1);
        wait_for_rows<<<grid, words > 0 ? copy_threads : 32, 0, backend_.stream()>>>(arrival);
        SIMRUN_CUDA_CHECK(cudaGetLastError());
    }
    // Both in one kernel (exchange_rows), between GPUs. Where a neighbour shares this GPU (a
    // testing arrangement), a send and a wait: there the GPU test suite, ranks as threads on
    // one H100, once hung in the merged kernel after other tests had run (2026-11-27; each test
    // alone passed). The likely cause is a kernel's first launch waiting for a neighbour's
    // waiting kernel (lazy loading: load_halo_kernels); the two kernels stay on a shared GPU
    // until a GPU run shows the merged one passes there too.
    using DeviceHalo::exchange;
    void exchange(const void* to_before, const void* to_after, void* into_before,
                  void* into_after) override {
        if (shared_gpu_ || resident_blocks_ < 2) {
            send(to_before, to_after);
            wait(into_before, into_after);
            return;
        }
        const Put put = start_send(to_before, to_after);
        const Arrival arrival = start_wait(into_before, into_after);
        // Every block resident at once (exchange_rows): at most what the GPU holds.
        const std::size_t most = std::min(most_copy_blocks, resident_blocks_ / 2);
        const dim3 grid(copy_blocks(std::max(put.words(), arrival.words()), most), 2);
        exchange_rows<<<grid, copy_threads, 0, backend_.stream()>>>(put, arrival);
        SIMRUN_CUDA_CHECK(cudaGetLastError());
    }
    const void* received_before() const override { return received_before_; }
    const void* received_after() const override { return received_after_; }

    // A neighbour on this same GPU (where asked for: SIMRUN_HALO=device).
    void set_shared_gpu() { shared_gpu_ = true; }
    // How many blocks of exchange_rows this GPU holds at once.
    void set_resident_blocks(std::size_t blocks) { resident_blocks_ = blocks; }

private:
    std::size_t most_blocks() const { return shared_gpu_ ? shared_gpu_blocks : most_copy_blocks; }

    // A send's checks, its exchange number and slot, and its rows' copies.
    Put start_send(const void* to_before, const void* to_after) {
        if (sent_unwaited_) throw std::logic_error("device halo: a send before the last one's wait");
        if ((before_ && bytes_.to_before > 0 && to_before == nullptr) ||
            (after_ && bytes_.to_after > 0 && to_after == nullptr)) {
            throw std::logic_error("device halo: no rows to send to a neighbour that reads some");
        }
        sent_unwaited_ = true;
        const std::uint64_t slot = ++exchanges_ % 2;
        const CommunicationTimer timer(
            backend_.communicator().times().halo,
            static_cast<double>((before_ ? bytes_.to_before : 0) + (after_ ? bytes_.to_after : 0)));
        Put put;
        put.exchange = exchanges_;
        put.arrivals = reinterpret_cast<unsigned*>(reinterpret_cast<Flag*>(own_) + 2);
        // Into the rank before: its rows from after (flag 1); into the rank after: its rows
        // from before (flag 0).
        if (before_) {
            put.side[0] = {static_cast<const unsigned*>(to_before),
                           reinterpret_cast<unsigned*>(before_peer_ + before_layout_.after_rows(slot)),
                           bytes_.to_before / 4};
            put.peer_flag[0] = reinterpret_cast<Flag*>(before_peer_) + 1;
        }
        if (after_) {
            put.side[1] = {static_cast<const unsigned*>(to_after),
                           reinterpret_cast<unsigned*>(after_peer_ + after_layout_.before_rows(slot)),
                           bytes_.to_after / 4};
            put.peer_flag[1] = reinterpret_cast<Flag*>(after_peer_);
        }
        received_before_ =
            before_ && bytes_.from_before > 0 ? own_ + layout_.before_rows(slot) : nullptr;
        received_after_ =
            after_ && bytes_.from_after > 0 ? own_ + layout_.after_rows(slot) : nullptr;
        return put;
    }

    // A wait's checks, its flags, and the copies on of the rows received.
    Arrival start_wait(void* into_before, void* into_after) {
        if (!sent_unwaited_) throw std::logic_error("device halo: a wait without a send");
        sent_unwaited_ = false;
        Arrival arrival;
        arrival.exchange = exchanges_;
        arrival.waited = backend_.halo_waited_ns();
        Flag* own_flags = reinterpret_cast<Flag*>(own_);
        if (before_) arrival.flag[0] = own_flags;
        if (after_) arrival.flag[1] = own_flags + 1;
        if (into_before != nullptr && received_before_ != nullptr) {
            arrival.side[0] = {reinterpret_cast<const unsigned*>(received_before_),
                               static_cast<unsigned*>(into_before), bytes_.from_before / 4};
        }
        if (into_after != nullptr && received_after_ != nullptr) {
            arrival.side[1] = {reinterpret_cast<const unsigned*>(received_after_),
                               static_cast<unsigned*>(into_after), bytes_.from_after / 4};
        }
        return arrival;
    }

    const CudaBackend& backend_;
    HaloBytes bytes_;
    bool before_, after_;
    bool shared_gpu_ = false;
    std::size_t resident_blocks_ = 0;
    Layout layout_, before_layout_, after_layout_;
    std::byte* own_ = nullptr;
    cudaIpcMemHandle_t handle_{};
    std::byte* before_peer_ = nullptr;
    std::byte* after_peer_ = nullptr;
    bool before_imported_ = false, after_imported_ = false;  // through IPC: closed at the end
    bool sent_unwaited_ = false;  // send and wait alternate (the slots' argument needs it)
    std::uint64_t exchanges_ = 0;
    const std::byte* received_before_ = nullptr;
    const std::byte* received_after_ = nullptr;
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
    for (const void* kernel : {reinterpret_cast<const void*>(&put_rows),
                               reinterpret_cast<const void*>(&wait_for_rows),
                               reinterpret_cast<const void*>(&exchange_rows)}) {
        if (cudaFuncGetAttributes(&attributes, kernel) != cudaSuccess) cudaGetLastError();
    }
    int per_sm = 0, sms = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, exchange_rows,
                                                      static_cast<int>(copy_threads), 0) !=
            cudaSuccess ||
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

std::unique_ptr<DeviceHalo> CudaBackend::make_device_halo(const HaloBytes& bytes) const {
    const std::size_t resident = load_halo_kernels(device_);
    const Communicator& ranks = communicator();
    const int rank = ranks.rank();
    // A side of no bytes takes no part (a rank holding none of a level split over fewer ranks
    // has neither, and goes through the collectives only).
    const bool before = rank > 0 && (bytes.to_before > 0 || bytes.from_before > 0);
    const bool after = rank + 1 < ranks.size() && (bytes.to_after > 0 || bytes.from_after > 0);
    const bool sides = before || after;
    // Every rank goes through the same collectives, whatever it finds: a failure here only
    // turns device halos off, on every rank (the agreement below).
    const HaloMode mode = halo_mode();  // valid: open_device_halo agreed on it
    bool wanted = bytes.to_before % 4 == 0 && bytes.from_before % 4 == 0 &&
                  bytes.to_after % 4 == 0 && bytes.from_after % 4 == 0;
    if (wanted && halo_waited_ns_ == nullptr) {
        if (cudaMalloc(&halo_waited_ns_, sizeof(Flag)) != cudaSuccess ||
            cudaMemsetAsync(halo_waited_ns_, 0, sizeof(Flag), stream_) != cudaSuccess) {
            cudaGetLastError();
            cudaFree(halo_waited_ns_);
            halo_waited_ns_ = nullptr;
            wanted = false;
        }
    }
    auto halo = std::make_unique<CudaDeviceHalo>(*this, bytes, before, after);
    halo->set_resident_blocks(resident);
    Card mine;
    mine.exported = sides && wanted && halo->allocate() ? 1 : 0;
    mine.handle = halo->handle();
    mine.process = process_token();
    mine.address = reinterpret_cast<std::uintptr_t>(halo->own());
    mine.from_before = bytes.from_before;
    mine.from_after = bytes.from_after;
    const auto& uuids = device_uuids();
    if (static_cast<std::size_t>(device_) < uuids.size() && uuids[static_cast<std::size_t>(device_)]) {
        std::memcpy(mine.device_uuid, uuids[static_cast<std::size_t>(device_)]->data(),
                    sizeof mine.device_uuid);
    } else {
        mine.exported = 0;
    }
    Card from_before, from_after;
    const auto card = [](Card& c, bool side) {
        return side ? std::as_writable_bytes(std::span(&c, 1)) : std::span<std::byte>();
    };
    exchange_with_neighbours(ranks, card(mine, before), card(from_before, before),
                             card(mine, after), card(from_after, after));
    // A neighbour is reached where it exported its buffer, sends what this rank expects, and
    // is a GPU this one may map: another GPU with peer access, or this GPU where asked for
    // (SIMRUN_HALO=device). A neighbour in this same process must be on this GPU (its buffer
    // is used at its address, without IPC's peer mapping).
    const auto reachable = [&](const Card& theirs, std::uint64_t sends, std::uint64_t expected) {
        if (theirs.exported == 0 || sends != expected) return false;
        const int device = device_with_uuid(theirs.device_uuid);
        if (device == device_) {
            halo->set_shared_gpu();
            return mode == HaloMode::device;
        }
        if (theirs.process == process_token()) return false;
        int can = 0;
        return device >= 0 && cudaDeviceCanAccessPeer(&can, device_, device) == cudaSuccess &&
               can != 0;
    };
    bool ok = !sides || mine.exported != 0;
    if (ok && before) {
        ok = reachable(from_before, from_before.from_after, bytes.to_before) &&
             halo->map(true, from_before);
    }
    if (ok && after) {
        ok = reachable(from_after, from_after.from_before, bytes.to_after) &&
             halo->map(false, from_after);
    }
    const bool agreed = ranks.min(ok ? 1.0 : 0.0) > 0.5;
    device_halos_ = agreed ? 1 : 0;
    // Where the ranks did not agree, the halo goes (its mappings closed, its buffer kept with
    // the back-end).
    if (!agreed || !sides) return nullptr;
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
