// The CUDA back-end's classification of points by their sets of values (kernel_table.hpp's
// classify_points): a 64-bit hash of each point's values, sorted and made unique (CUB); where
// they are max_value_classes or fewer, a point's class is its hash's rank among them, and every
// point is compared with its class's first point value by value, so a collision of hashes makes
// the classification fail rather than be trusted.
#include <algorithm>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <vector>

#include "cuda_backend.hpp"
#include "cuda_check.hpp"
#include "cuda_sparse_kernels.cuh"

namespace simrun::solvers::cuda {
namespace {

// Device memory of the back-end for the classification's work, released on every path.
template <typename T>
class Scratch {
public:
    Scratch(const Backend& backend, std::size_t n)
        : backend_(backend),
          data_(static_cast<T*>(n > 0 ? backend.allocate(n * sizeof(T)) : nullptr)) {}
    ~Scratch() { backend_.release(data_); }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    T* get() const { return data_; }

private:
    const Backend& backend_;
    T* data_;
};

constexpr int block = 256;

unsigned grid_of(std::int64_t n) { return static_cast<unsigned>((n + block - 1) / block); }

__device__ inline std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 29);
}

template <typename T>
__device__ inline std::uint64_t bits_of(T value) {
    if (value == T(0)) return 0;  // 0 and -0 compare equal: one hash
    if constexpr (sizeof(T) == 8) {
        return static_cast<std::uint64_t>(__double_as_longlong(static_cast<double>(value)));
    } else {
        return static_cast<std::uint64_t>(__float_as_uint(static_cast<float>(value)));
    }
}

// Traffic: the values read once, a hash written per point.
template <typename T>
__global__ void hash_points(const T* values, std::int64_t points, int slots, std::uint64_t* hash) {
    const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
    if (i >= points) return;
    std::uint64_t h = 0x2545f4914f6cdd1dull;
    for (int s = 0; s < slots; ++s) h = mix(h, bits_of(values[s * points + i]));
    hash[i] = h;
}

// A point's class: its hash's rank among the sorted distinct hashes; the class's first point.
__global__ void name_points(const std::uint64_t* hash, std::int64_t points,
                            const std::uint64_t* distinct, int count, std::uint8_t* of_point,
                            unsigned long long* first) {
    const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
    if (i >= points) return;
    const std::uint64_t h = hash[i];
    int low = 0, high = count - 1;
    while (low < high) {
        const int middle = (low + high) / 2;
        if (distinct[middle] < h) {
            low = middle + 1;
        } else {
            high = middle;
        }
    }
    of_point[i] = static_cast<std::uint8_t>(low);
    atomicMin(first + low, static_cast<unsigned long long>(i));
}

// Class c's values, from its first point.
template <typename T>
__global__ void gather_table(const T* values, std::int64_t points, int slots, int count,
                             const unsigned long long* first, T* table) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count * slots) return;
    const int c = k / slots, s = k - c * slots;
    table[k] = values[s * points + static_cast<std::int64_t>(first[c])];
}

// Every point against its class's values. Traffic: the values read again, a byte per point.
template <typename T>
__global__ void check_points(const T* values, std::int64_t points, int slots,
                             const std::uint8_t* of_point, const T* table, int* mismatch) {
    const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
    if (i >= points) return;
    const T* own = table + of_point[i] * slots;
    for (int s = 0; s < slots; ++s) {
        if (!(values[s * points + i] == own[s])) {
            *mismatch = 1;
            return;
        }
    }
}

}  // namespace

template <typename T>
bool classify_points(const Backend& backend, const T* values, std::int64_t points, int slots,
                     std::uint8_t* of_point, std::vector<T>& table) {
    table.clear();
    if (points == 0) return true;
    const cudaStream_t stream = as_cuda(backend).stream();
    if (slots == 0) {  // every point's set is the empty one: one class, as on the CPU
        SIMRUN_CUDA_CHECK(cudaMemsetAsync(of_point, 0, static_cast<std::size_t>(points), stream));
        return true;
    }
    const auto n = static_cast<std::size_t>(points);
    Scratch<std::uint64_t> hash(backend, n), sorted(backend, n), distinct(backend, n);
    Scratch<std::int64_t> count_on_device(backend, 1);
    hash_points<<<grid_of(points), block, 0, stream>>>(values, points, slots, hash.get());
    SIMRUN_CUDA_CHECK_LAUNCH(hash_points);
    // The sort's and the selection's work space, the larger of the two.
    std::size_t sort_bytes = 0, unique_bytes = 0;
    SIMRUN_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, sort_bytes, hash.get(), sorted.get(),
                                                     points, 0, 64, stream));
    SIMRUN_CUDA_CHECK(cub::DeviceSelect::Unique(nullptr, unique_bytes, sorted.get(), distinct.get(),
                                                count_on_device.get(), points, stream));
    Scratch<unsigned char> work(backend, std::max(sort_bytes, unique_bytes));
    SIMRUN_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(work.get(), sort_bytes, hash.get(),
                                                     sorted.get(), points, 0, 64, stream));
    SIMRUN_CUDA_CHECK(cub::DeviceSelect::Unique(work.get(), unique_bytes, sorted.get(),
                                                distinct.get(), count_on_device.get(), points,
                                                stream));
    std::int64_t count = 0;
    backend.copy_to_host(&count, count_on_device.get(), sizeof count);
    if (count > max_value_classes) return false;
    const int classes = static_cast<int>(count);
    Scratch<unsigned long long> first(backend, static_cast<std::size_t>(classes));
    SIMRUN_CUDA_CHECK(
        cudaMemsetAsync(first.get(), 0xff, classes * sizeof(unsigned long long), stream));
    name_points<<<grid_of(points), block, 0, stream>>>(hash.get(), points, distinct.get(), classes,
                                                       of_point, first.get());
    SIMRUN_CUDA_CHECK_LAUNCH(name_points);
    const int entries = classes * slots;
    Scratch<T> table_on_device(backend, static_cast<std::size_t>(entries));
    gather_table<<<grid_of(entries), block, 0, stream>>>(values, points, slots, classes,
                                                         first.get(), table_on_device.get());
    SIMRUN_CUDA_CHECK_LAUNCH(gather_table);
    Scratch<int> mismatch(backend, 1);
    SIMRUN_CUDA_CHECK(cudaMemsetAsync(mismatch.get(), 0, sizeof(int), stream));
    check_points<<<grid_of(points), block, 0, stream>>>(values, points, slots, of_point,
                                                        table_on_device.get(), mismatch.get());
    SIMRUN_CUDA_CHECK_LAUNCH(check_points);
    int mismatched = 0;
    backend.copy_to_host(&mismatched, mismatch.get(), sizeof mismatched);
    if (mismatched != 0) return false;
    table.resize(static_cast<std::size_t>(entries));
    backend.copy_to_host(table.data(), table_on_device.get(), entries * sizeof(T));
    return true;
}

template bool classify_points(const Backend&, const float*, std::int64_t, int, std::uint8_t*,
                              std::vector<float>&);
template bool classify_points(const Backend&, const double*, std::int64_t, int, std::uint8_t*,
                              std::vector<double>&);

}  // namespace simrun::solvers::cuda
