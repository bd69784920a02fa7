// Fuzz target: a Matrix Market file as `simrun solve` reads it (matrix and vector readers, the
// conversion to CSR). A refusal is a MatrixMarketError naming the line.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/matrices/matrix_market.hpp"

extern const std::vector<std::string> fuzz_tokens = {
    "%%MatrixMarket matrix coordinate real general\n",
    "%%MatrixMarket matrix coordinate real symmetric\n",
    "%%MatrixMarket matrix coordinate pattern skew-symmetric\n",
    "%%MatrixMarket matrix array real general\n",
    "%%MatrixMarket matrix coordinate integer",
    " ",
    "\n",
    "%",
    "1 1 ",
    "2147483647",
    "-1",
    "0",
    "1e308",
    "nan",
    "+",
    "4294967296",
    "3 3 9\n"};

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // The readers take a path: one file per process, rewritten for each input.
    static const std::filesystem::path path =
        std::filesystem::temp_directory_path() /
        ("simrun-fuzz-" + std::to_string(::getpid()) + ".mtx");
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    try {
        const auto csr = simrun::solvers::to_csr(simrun::solvers::read_matrix_market(path));
        (void)csr;
    } catch (const simrun::solvers::MatrixMarketError&) {
    }
    try {
        (void)simrun::solvers::read_matrix_market_vector(path);
    } catch (const simrun::solvers::MatrixMarketError&) {
    }
    return 0;
}
