#pragma once
// Whether a large allocation can succeed, asked before it is made: an input that asks for more
// than the machine has (a 700^3 grid, a matrix header declaring 2^31 rows, a crafted restart
// file, a huge image) is refused with the figure and what is available, instead of being
// killed by the out-of-memory killer with no message.
#include <cstdint>
#include <optional>
#include <string>

namespace simrun::solvers {

// The host memory this process can still get without swapping: the kernel's MemAvailable,
// bounded by the control group's limit (memory.max less memory.current) where one is set.
// Nothing where neither is known.
std::optional<double> available_host_memory();

// Nothing when `bytes` (an estimate, so a double: it may exceed any integer type) fits in the
// available host memory, or when that is unknown; otherwise the reason, e.g. "needs about
// 23.5 GB of memory, the machine has 12.1 GB available".
std::optional<std::string> memory_problem(double bytes);

// "23.5 GB", "512 MB", "4.0 kB".
std::string format_bytes(double bytes);

}  // namespace simrun::solvers
