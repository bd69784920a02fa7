#include "simrun/solvers/system/build_info.hpp"

#include <array>
#include <utility>

namespace simrun::solvers {
namespace {

std::string describe_architecture(std::string_view entry) {
    const auto dash = entry.find('-');
    const std::string_view number = entry.substr(0, dash);
    const std::string_view kind = dash == std::string_view::npos ? "" : entry.substr(dash + 1);
    if (number.empty() || number.find_first_not_of("0123456789") != std::string_view::npos) {
        return std::string(entry);
    }
    const std::string sm = "sm_" + std::string(number);
    const std::string ptx = "compute_" + std::string(number) + " PTX";
    if (kind.empty()) return sm + " + " + ptx;
    if (kind == "real") return sm;
    if (kind == "virtual") return ptx;
    return std::string(entry);
}

}  // namespace

std::string describe_cuda_architectures(std::string_view cmake_architectures) {
    std::string described;
    while (!cmake_architectures.empty()) {
        const auto separator = cmake_architectures.find_first_of(";,");
        const std::string_view entry = cmake_architectures.substr(0, separator);
        if (!entry.empty()) {
            if (!described.empty()) described += ", ";
            described += describe_architecture(entry);
        }
        if (separator == std::string_view::npos) break;
        cmake_architectures.remove_prefix(separator + 1);
    }
    return described;
}

std::string describe_openmp_version(long openmp_date) {
    static constexpr std::array<std::pair<long, const char*>, 7> specifications{{{200505, "2.5"},
                                                                                 {200805, "3.0"},
                                                                                 {201107, "3.1"},
                                                                                 {201307, "4.0"},
                                                                                 {201511, "4.5"},
                                                                                 {201811, "5.0"},
                                                                                 {202011, "5.1"}}};
    for (const auto& [date, number] : specifications) {
        if (date == openmp_date) return std::string(number) + " (" + std::to_string(date) + ")";
    }
    return std::to_string(openmp_date);
}

SolverBuildInfo solver_build_info() {
    SolverBuildInfo info;
#if defined(SIMRUN_CUDA_ARCHITECTURES) && defined(SIMRUN_CUDA_TOOLKIT_VERSION)
    info.cuda = describe_cuda_architectures(SIMRUN_CUDA_ARCHITECTURES) + ", CUDA " +
                SIMRUN_CUDA_TOOLKIT_VERSION;
#endif
#ifdef _OPENMP
    info.openmp = describe_openmp_version(_OPENMP);
#endif
    return info;
}

}  // namespace simrun::solvers
