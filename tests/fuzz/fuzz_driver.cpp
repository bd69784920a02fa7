// A standalone driver for libFuzzer-style targets (LLVMFuzzerTestOneInput), for compilers
// without -fsanitize=fuzzer (GCC): it runs every seed, then mutates seeds (bit flips, byte
// insertions, deletions and repeats, splices of two seeds, tokens of the input's language)
// for a bounded time, each input once through the target. The target refuses bad input with
// its own errors and returns; a crash, a sanitizer report or an exception the target lets out
// is a finding: the input is written to FINDING_DIR and the driver exits 1.
//   fuzz_target SECONDS FINDING_DIR SEED_DIR...
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

// Tokens the target's language is made of (defined by each target).
extern const std::vector<std::string> fuzz_tokens;

namespace {

std::filesystem::path finding_dir;
std::vector<std::uint8_t> current;

void save_current(const char* why) {
    std::filesystem::create_directories(finding_dir);
    const auto path = finding_dir / "finding.bin";
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(current.data()),
               static_cast<std::streamsize>(current.size()));
    std::fprintf(stderr, "fuzz: %s; the input is in %s\n", why, path.c_str());
}

void run_one(const std::vector<std::uint8_t>& input) {
    current = input;
    try {
        LLVMFuzzerTestOneInput(input.data(), input.size());
    } catch (const std::exception& e) {
        save_current((std::string("an exception escaped the target: ") + e.what()).c_str());
        std::exit(1);
    } catch (...) {
        save_current("an unknown exception escaped the target");
        std::exit(1);
    }
}

std::vector<std::uint8_t> mutate(std::vector<std::uint8_t> input,
                                 const std::vector<std::vector<std::uint8_t>>& seeds,
                                 std::mt19937_64& random) {
    const auto pick = [&](std::size_t n) {
        return n == 0 ? std::size_t{0} : static_cast<std::size_t>(random() % n);
    };
    const int rounds = 1 + static_cast<int>(random() % 4);
    for (int round = 0; round < rounds; ++round) {
        const std::size_t at = pick(input.size() + 1);
        switch (random() % 7) {
            case 0:  // flip a bit
                if (!input.empty()) input[pick(input.size())] ^= std::uint8_t(1u << (random() % 8));
                break;
            case 1:  // set a byte to an interesting value
                if (!input.empty()) {
                    const std::uint8_t values[] = {0,   0xff, '\n', '"', '[',
                                                   ']', '=',  '.',  '-', '9'};
                    input[pick(input.size())] = values[pick(sizeof values)];
                }
                break;
            case 2:  // delete a run
                if (!input.empty()) {
                    const std::size_t from = pick(input.size());
                    const std::size_t count = std::min(input.size() - from, 1 + pick(16));
                    input.erase(input.begin() + static_cast<std::ptrdiff_t>(from),
                                input.begin() + static_cast<std::ptrdiff_t>(from + count));
                }
                break;
            case 3: {  // insert a token
                const std::string& token = fuzz_tokens[pick(fuzz_tokens.size())];
                input.insert(input.begin() + static_cast<std::ptrdiff_t>(at), token.begin(),
                             token.end());
                break;
            }
            case 4: {  // repeat a run (deep nesting, long numbers)
                if (input.empty()) break;
                const std::size_t from = pick(input.size());
                const std::size_t count = std::min(input.size() - from, 1 + pick(8));
                const std::vector<std::uint8_t> run(
                    input.begin() + static_cast<std::ptrdiff_t>(from),
                    input.begin() + static_cast<std::ptrdiff_t>(from + count));
                for (std::size_t r = 1 + pick(64); r > 0; --r) {
                    input.insert(input.begin() + static_cast<std::ptrdiff_t>(from), run.begin(),
                                 run.end());
                }
                break;
            }
            case 5: {  // splice in part of another seed
                const auto& other = seeds[pick(seeds.size())];
                if (other.empty()) break;
                const std::size_t from = pick(other.size());
                const std::size_t count = std::min(other.size() - from, 1 + pick(64));
                input.insert(input.begin() + static_cast<std::ptrdiff_t>(at),
                             other.begin() + static_cast<std::ptrdiff_t>(from),
                             other.begin() + static_cast<std::ptrdiff_t>(from + count));
                break;
            }
            default:  // replace a digit run's neighbourhood with a random number
                if (!input.empty()) {
                    const std::string number = std::to_string(static_cast<std::int64_t>(random()));
                    input.insert(input.begin() + static_cast<std::ptrdiff_t>(at), number.begin(),
                                 number.end());
                }
        }
        if (input.size() > (1u << 16)) input.resize(1u << 16);
    }
    return input;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s SECONDS FINDING_DIR SEED_DIR...\n", argv[0]);
        return 2;
    }
    const double seconds = std::atof(argv[1]);
    finding_dir = argv[2];
    std::vector<std::vector<std::uint8_t>> seeds;
    for (int a = 3; a < argc; ++a) {
        for (const auto& entry : std::filesystem::recursive_directory_iterator(argv[a])) {
            if (!entry.is_regular_file() || entry.file_size() > (1u << 20)) continue;
            std::ifstream in(entry.path(), std::ios::binary);
            seeds.emplace_back(std::istreambuf_iterator<char>(in),
                               std::istreambuf_iterator<char>());
        }
    }
    if (seeds.empty()) {
        std::fprintf(stderr, "fuzz: no seeds found\n");
        return 2;
    }
    for (const auto& seed : seeds) run_one(seed);
    std::mt19937_64 random(20261123);  // fixed: a finding can be replayed from the log
    const auto start = std::chrono::steady_clock::now();
    std::size_t runs = seeds.size();
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
           seconds) {
        run_one(mutate(seeds[random() % seeds.size()], seeds, random));
        ++runs;
    }
    std::printf("fuzz: %zu inputs (%zu seeds), no finding\n", runs, seeds.size());
    return 0;
}
