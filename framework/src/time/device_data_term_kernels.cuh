// The data term's kernels (device_data_term.cpp), compiled at run time by NVRTC: this file,
// embedded in the library at build time, follows the run's generated functions
// source_value(x, y, z, t) and side_value(side, x, y, z, t) in the source text. Each thread one
// node (one boundary node, one boundary row); bytes per free node: reads u, S, the fixed byte
// (and L u), writes rhs: 25 (33) bytes, the floor of forming it (17 for the steady solve's,
// which reads no u). Parameters is laid out as
// device_data_term.cpp's.

typedef long long i64;
typedef unsigned long long u64;
struct Parameters {
    const double* u; const double* lu; double* rhs; const double* scale;
    const unsigned char* fixed;
    double lower[3]; double spacing[3]; i64 points[3]; i64 n;
    double t_now; double t_next; double theta; double dt; double lu_weight;
    const i64* dirichlet_nodes; const i64* dirichlet_sides; i64 dirichlet_count;
    double* dirichlet_values;
    const i64* boundary_rows; const i64* row_terms; const i64* term_index;
    const double* term_weight; i64 boundary_row_count;
    u64* first_bad;
    const double* agreement_points; double* agreement_values; i64 agreement_count;
    i64 function_count;
};
enum { source_now, ghost_now, source_next, ghost_next, dirichlet_next };

__device__ i64 thread_index() { return blockIdx.x * (i64)blockDim.x + threadIdx.x; }

// As Grid::coordinate: lower + i h per axis, x fastest.
__device__ void coordinates(const Parameters& p, i64 node, double& x, double& y, double& z) {
    const i64 i = node % p.points[0];
    const i64 rest = node / p.points[0];
    const i64 j = rest % p.points[1];
    const i64 k = rest / p.points[1];
    x = p.lower[0] + (double)i * p.spacing[0];
    y = p.lower[1] + (double)j * p.spacing[1];
    z = p.lower[2] + (double)k * p.spacing[2];
}

__device__ void record(const Parameters& p, int kind, i64 node) {
    atomicMin(p.first_bad + kind, (u64)node);
}

// g^{n+1} at each Dirichlet node, into rhs and the list the couplings read.
extern "C" __global__ void dirichlet_values(Parameters p) {
    const i64 k = thread_index();
    if (k >= p.dirichlet_count) return;
    const i64 node = p.dirichlet_nodes[k];
    double x, y, z;
    coordinates(p, node, x, y, z);
    const double g = side_value(p.dirichlet_sides[k], x, y, z, p.t_next);
    if (!isfinite(g)) record(p, dirichlet_next, node);
    p.dirichlet_values[k] = g;
    p.rhs[node] = g;
}

// rhs = S (u + (1 - theta) dt L u) + S dt (theta f^{n+1} + (1 - theta) f^n) at free nodes
// (without u, the steady solve's S f: u and L u null read nothing).
extern "C" __global__ void free_nodes(Parameters p) {
    const i64 i = thread_index();
    if (i >= p.n || p.fixed[i]) return;
    double x, y, z;
    coordinates(p, i, x, y, z);
    const double f_next = source_value(x, y, z, p.t_next);
    if (!isfinite(f_next)) record(p, source_next, i);
    double data = p.theta * f_next;
    if (p.theta < 1) {
        const double f_now = source_value(x, y, z, p.t_now);
        if (!isfinite(f_now)) record(p, source_now, i);
        data = data + (1 - p.theta) * f_now;
    }
    double state = p.u ? p.u[i] : 0.0;
    if (p.lu) state = state + p.lu_weight * p.lu[i];
    p.rhs[i] = p.scale[i] * state + p.scale[i] * p.dt * data;
}

// rhs += S dt (theta (B + L G)^{n+1} + (1 - theta) B^n) at the rows with boundary terms.
extern "C" __global__ void boundary_rows(Parameters p) {
    const i64 k = thread_index();
    if (k >= p.boundary_row_count) return;
    const i64 row = p.boundary_rows[k];
    double x, y, z;
    coordinates(p, row, x, y, z);
    double next = 0.0, now = 0.0;
    for (i64 term = p.row_terms[k]; term < p.row_terms[k + 1]; ++term) {
        const i64 index = p.term_index[term];
        const double w = p.term_weight[term];
        if (index >= 0) {
            next = next + w * p.dirichlet_values[index];
            continue;
        }
        const double g_next = side_value(-1 - index, x, y, z, p.t_next);
        if (!isfinite(g_next)) record(p, ghost_next, row);
        next = next + w * g_next;
        if (p.theta < 1) {
            const double g_now = side_value(-1 - index, x, y, z, p.t_now);
            if (!isfinite(g_now)) record(p, ghost_now, row);
            now = now + w * g_now;
        }
    }
    p.rhs[row] = p.rhs[row] + p.scale[row] * p.dt * (p.theta * next + (1 - p.theta) * now);
}

// Function f (0 the source, 1 + s side s) at each agreement point.
extern "C" __global__ void agreement(Parameters p) {
    const i64 k = thread_index();
    if (k >= p.agreement_count * p.function_count) return;
    const i64 f = k / p.agreement_count;
    const double* c = p.agreement_points + 4 * (k % p.agreement_count);
    p.agreement_values[k] = f == 0 ? source_value(c[0], c[1], c[2], c[3])
                                   : side_value(f - 1, c[0], c[1], c[2], c[3]);
}
