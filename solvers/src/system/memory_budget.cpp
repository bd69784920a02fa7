#include "simrun/solvers/system/memory_budget.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace simrun::solvers {
namespace {

// The first number in the file, or nothing ("max" for no limit, or no such file).
std::optional<double> read_number(const char* path) {
    std::ifstream in(path);
    double value = 0;
    if (in >> value) return value;
    return std::nullopt;
}

}  // namespace

std::optional<double> available_host_memory() {
    std::optional<double> available;
    std::ifstream meminfo("/proc/meminfo");
    std::string line;
    while (std::getline(meminfo, line)) {
        if (line.rfind("MemAvailable:", 0) == 0) {
            std::istringstream fields(line.substr(13));
            double kilobytes = 0;
            if (fields >> kilobytes) available = kilobytes * 1024.0;
            break;
        }
    }
    const auto limit = read_number("/sys/fs/cgroup/memory.max");
    const auto used = read_number("/sys/fs/cgroup/memory.current");
    if (limit && used) {
        const double left = std::max(0.0, *limit - *used);
        available = available ? std::min(*available, left) : left;
    }
    return available;
}

std::string format_bytes(double bytes) {
    const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
    int unit = 0;
    while (bytes >= 1000.0 && unit < 5) {
        bytes /= 1000.0;
        ++unit;
    }
    char text[32];
    std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
    return text;
}

std::optional<std::string> memory_problem(double bytes) {
    const auto available = available_host_memory();
    if (!available || bytes <= *available) return std::nullopt;
    return "needs about " + format_bytes(bytes) + " of memory, the machine has " +
           format_bytes(*available) + " available";
}

}  // namespace simrun::solvers
