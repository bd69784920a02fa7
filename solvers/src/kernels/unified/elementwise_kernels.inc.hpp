// Element-wise kernels, written once as host-device lambdas. This file is included inside the
// namespace of each back-end (cpu, cuda), whose parallel_for(backend, n, f) runs f(i) for
// i = 0 .. n-1: an OpenMP loop on the CPU, a grid-stride kernel on the GPU.
// (No include guard: it is meant to be included once per back-end.)

template <typename T>
void fill(const Backend& backend, std::size_t n, T value, T* x) {
    parallel_for(backend, n, [=] SIMRUN_HOST_DEVICE(std::size_t i) { x[i] = value; });
}

// d_i = A(i, i), A's entry on its diagonal `main` (offset 0). Traffic: n values (or n masks)
// read, n written.
template <typename T>
void dia_diagonal(const Backend& backend, const DiaView<T>& a, int main, T* d) {
    parallel_for(backend, static_cast<std::size_t>(a.n), [=] SIMRUN_HOST_DEVICE(std::size_t i) {
        d[i] = dia_entry(a, main, static_cast<std::int64_t>(i));
    });
}

template <typename T>
void copy_to_other(const Backend& backend, std::size_t n, const T* x, OtherPrecision<T>* y) {
    parallel_for(backend, n, [=] SIMRUN_HOST_DEVICE(std::size_t i) {
        y[i] = static_cast<OtherPrecision<T>>(x[i]);
    });
}

template <typename T>
void copy_part_to_other(const Backend& backend, BoxShape window, BoxRange part, bool into_window,
                        const T* from, OtherPrecision<T>* to) {
    if (part.size() == 0) return;
    if (part.size() > std::int64_t{0xffffffff}) {
        throw std::invalid_argument("copy_part_to_other: a part of " + std::to_string(part.size()) +
                                    " points, 2^32 or more");
    }
    // 32-bit arithmetic for a point's coordinates in the part (fewer than 2^32 points).
    const auto nx = static_cast<std::uint32_t>(part.upper[0] - part.lower[0]);
    const auto ny = static_cast<std::uint32_t>(part.upper[1] - part.lower[1]);
    const std::int64_t wx = window.points[0], wy = window.points[1];
    const std::int64_t first = part.lower[0] + wx * (part.lower[1] + wy * part.lower[2]);
    parallel_for(backend, static_cast<std::size_t>(part.size()),
                 [=] SIMRUN_HOST_DEVICE(std::size_t p) {
                     const auto q = static_cast<std::uint32_t>(p);
                     const std::uint32_t line = q / nx, i = q - line * nx;
                     const std::uint32_t k = line / ny, j = line - k * ny;
                     const std::int64_t w = first + i + wx * (j + wy * std::int64_t{k});
                     if (into_window) {
                         to[w] = static_cast<OtherPrecision<T>>(from[p]);
                     } else {
                         to[p] = static_cast<OtherPrecision<T>>(from[w]);
                     }
                 });
}

template <typename T>
void axpy(const Backend& backend, std::size_t n, T alpha, const T* x, T* y) {
    parallel_for(backend, n, [=] SIMRUN_HOST_DEVICE(std::size_t i) { y[i] += alpha * x[i]; });
}

template <typename T>
void xpby(const Backend& backend, std::size_t n, const T* x, T beta, T* y) {
    parallel_for(backend, n, [=] SIMRUN_HOST_DEVICE(std::size_t i) { y[i] = x[i] + beta * y[i]; });
}

template <typename T>
void multiply(const Backend& backend, std::size_t n, const T* x, const T* y, T* z) {
    parallel_for(backend, n, [=] SIMRUN_HOST_DEVICE(std::size_t i) { z[i] = x[i] * y[i]; });
}

// p = z + beta p
template <typename T>
void cg_step_1(const Backend& backend, std::size_t n, T beta, const T* z, T* p) {
    parallel_for(backend, n, [=] SIMRUN_HOST_DEVICE(std::size_t i) { p[i] = z[i] + beta * p[i]; });
}

// x = x + alpha p; r = r - alpha q
template <typename T>
void cg_step_2(const Backend& backend, std::size_t n, T alpha, const T* p, const T* q, T* x, T* r) {
    parallel_for(backend, n, [=] SIMRUN_HOST_DEVICE(std::size_t i) {
        x[i] += alpha * p[i];
        r[i] -= alpha * q[i];
    });
}

// x = x + alpha d .* r
template <typename T>
void scaled_axpy(const Backend& backend, std::size_t n, T alpha, const T* d, const T* r, T* x) {
    parallel_for(backend, n,
                 [=] SIMRUN_HOST_DEVICE(std::size_t i) { x[i] += alpha * d[i] * r[i]; });
}

template <typename T>
void gather(const Backend& backend, std::size_t n, const std::int64_t* index, const T* x, T* out) {
    parallel_for(backend, n, [=] SIMRUN_HOST_DEVICE(std::size_t i) { out[i] = x[index[i]]; });
}

template <typename T>
void scatter(const Backend& backend, std::size_t n, const std::int64_t* index, const T* x, T* out) {
    parallel_for(backend, n, [=] SIMRUN_HOST_DEVICE(std::size_t i) { out[index[i]] = x[i]; });
}

template <typename T>
void add_couplings(const Backend& backend, std::size_t n, const std::int64_t* rows,
                   const std::int64_t* starts, const std::int32_t* slots, const T* values,
                   const T* halo, T* y) {
    parallel_for(backend, n, [=] SIMRUN_HOST_DEVICE(std::size_t i) {
        T sum = y[rows[i]];
        for (std::int64_t k = starts[i]; k < starts[i + 1]; ++k) sum += values[k] * halo[slots[k]];
        y[rows[i]] = sum;
    });
}

// p = r + beta (p - omega v)
template <typename T>
void bicgstab_p(const Backend& backend, std::size_t n, T beta, T omega, const T* r, const T* v,
                T* p) {
    parallel_for(backend, n, [=] SIMRUN_HOST_DEVICE(std::size_t i) {
        p[i] = r[i] + beta * (p[i] - omega * v[i]);
    });
}

// x = x + alpha p_hat + omega s_hat; r = s - omega t
template <typename T>
void bicgstab_update(const Backend& backend, std::size_t n, T alpha, T omega, const T* p_hat,
                     const T* s_hat, const T* s, const T* t, T* x, T* r) {
    parallel_for(backend, n, [=] SIMRUN_HOST_DEVICE(std::size_t i) {
        x[i] += alpha * p_hat[i] + omega * s_hat[i];
        r[i] = s[i] - omega * t[i];
    });
}

// out = beta w + sum_{j < k} c_j v_j, the vectors' terms added in order. Traffic: k n reads
// (+ n for w when beta != 0) + n writes.
template <typename T>
void basis_combine(const Backend& backend, std::size_t n, int k, const KrylovBasis<T>& basis,
                   const KrylovCoefficients<T>& c, T beta, const T* w, T* out) {
    parallel_for(backend, n, [=] SIMRUN_HOST_DEVICE(std::size_t i) {
        T sum = beta != T(0) ? beta * w[i] : T(0);
        for (int j = 0; j < k; ++j) sum += c.values[j] * basis.vectors[j][i];
        out[i] = sum;
    });
}
