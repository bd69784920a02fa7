// The disk cache of compiled programs: entries read back byte for byte, other keys miss, damaged
// or foreign files are never trusted and are rewritten, nothing another user could have changed
// is read (a link or FIFO at an entry's name, a directory or entry writable by others), a cache
// that cannot be written turns itself off without throwing, concurrent stores leave one valid
// entry, and stores remove the stale temporaries of killed ones.
#include "system/program_cache.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "support/run_simrun.hpp"

namespace simrun::solvers {
namespace {

namespace fs = std::filesystem;
using simrun::testing::TemporaryDirectory;

// Each test's cache is a directory the cache makes itself ("cache" in a temporary directory):
// a temporary directory made under a umask of 002 is writable by its group, which the cache
// refuses.

std::vector<char> random_bytes(std::size_t count, unsigned seed) {
    std::mt19937 generator(seed);
    std::uniform_int_distribution<int> byte(0, 255);
    std::vector<char> bytes(count);
    for (char& b : bytes) b = static_cast<char>(byte(generator));
    return bytes;
}

ProgramKey sample_key() {
    return {"extern \"C\" __global__ void k(double* x) { x[threadIdx.x] = 1.0; }\n",
            {"--gpu-architecture=sm_90", "--fmad=false", "--std=c++17"},
            "sm_90",
            "NVRTC 13.0"};
}

std::vector<char> read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& path, const std::vector<char>& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST(ProgramCache, StoredProgramReadsBackByteIdentical) {
    const TemporaryDirectory temporary;
    const ProgramCache cache(temporary.path() / "not" / "yet" / "made");
    const ProgramKey key = sample_key();
    const std::vector<char> program = random_bytes(5000, 1);
    EXPECT_FALSE(cache.load(key).has_value());
    ASSERT_TRUE(cache.store(key, program));
    EXPECT_TRUE(fs::is_regular_file(cache.entry_path(key)));
    EXPECT_EQ(cache.entry_path(key).parent_path(), cache.directory());
    EXPECT_EQ(cache.load(key), program);
    // A later store replaces the entry; an empty program is a program too.
    const std::vector<char> other = random_bytes(123, 2);
    ASSERT_TRUE(cache.store(key, other));
    EXPECT_EQ(cache.load(key), other);
    ASSERT_TRUE(cache.store(key, std::vector<char>{}));
    EXPECT_EQ(cache.load(key), std::vector<char>{});
    // Another cache object on the same directory (the next run) finds it.
    const ProgramCache next_run(cache.directory());
    EXPECT_EQ(next_run.load(key), std::vector<char>{});
}

TEST(ProgramCache, AnotherSourceArchitectureCompilerOrOptionsMisses) {
    const TemporaryDirectory temporary;
    const ProgramCache cache(temporary.path() / "cache");
    const ProgramKey key = sample_key();
    ASSERT_TRUE(cache.store(key, random_bytes(300, 3)));
    std::vector<ProgramKey> others(6, key);
    others[0].source += " ";
    others[1].architecture = "sm_80";
    others[2].compiler = "NVRTC 12.9";
    others[3].options.pop_back();
    others[4].options[1] = "--fmad=true";
    others[5].options = {"--gpu-architecture=sm_90", "--fmad=false--std=c++17", ""};
    for (const ProgramKey& other : others) {
        EXPECT_NE(program_key_bytes(other), program_key_bytes(key));
        EXPECT_NE(cache.entry_path(other), cache.entry_path(key));
        EXPECT_FALSE(cache.load(other).has_value()) << other.source << other.architecture;
    }
    EXPECT_TRUE(cache.load(key).has_value());
}

TEST(ProgramCache, AnEntryOfAnotherKeyAtThisKeysNameMisses) {
    // What a collision of the names' hashes would give: the key stored in full tells them apart.
    const TemporaryDirectory temporary;
    const ProgramCache cache(temporary.path() / "cache");
    const ProgramKey key = sample_key();
    ProgramKey other = key;
    other.source = "extern \"C\" __global__ void k(double* x) { x[threadIdx.x] = 2.0; }\n";
    ASSERT_TRUE(cache.store(other, random_bytes(700, 4)));
    fs::copy_file(cache.entry_path(other), cache.entry_path(key));
    EXPECT_FALSE(cache.load(key).has_value());
}

// Each damaged version of a valid entry is a miss, and a store afterwards makes it valid again.
void expect_ignored_then_rewritten(const ProgramCache& cache, const ProgramKey& key,
                                   const std::vector<char>& damaged, const std::string& what) {
    const std::vector<char> program = random_bytes(257, 5);
    write_file(cache.entry_path(key), damaged);
    EXPECT_FALSE(cache.load(key).has_value()) << what;
    ASSERT_TRUE(cache.store(key, program)) << what;
    EXPECT_EQ(cache.load(key), program) << what;
}

TEST(ProgramCache, TruncatedCorruptedOrForeignEntriesAreIgnoredAndRewritten) {
    const TemporaryDirectory temporary;
    const ProgramCache cache(temporary.path() / "cache");
    const ProgramKey key = sample_key();
    ASSERT_TRUE(cache.store(key, random_bytes(257, 5)));
    const std::vector<char> valid = read_file(cache.entry_path(key));
    ASSERT_EQ(valid.size(), 40 + program_key_bytes(key).size() + 257);
    // Every byte flipped in turn: header, key and program.
    for (std::size_t at = 0; at < valid.size(); ++at) {
        std::vector<char> flipped = valid;
        flipped[at] = static_cast<char>(flipped[at] ^ 0x10);
        expect_ignored_then_rewritten(cache, key, flipped, "byte " + std::to_string(at));
    }
    for (const std::size_t length : {std::size_t{0}, std::size_t{7}, std::size_t{39},
                                     std::size_t{40}, valid.size() / 2, valid.size() - 1}) {
        expect_ignored_then_rewritten(cache, key,
                                      std::vector<char>(valid.begin(), valid.begin() + length),
                                      "truncated to " + std::to_string(length));
    }
    std::vector<char> longer = valid;
    longer.push_back('\0');
    expect_ignored_then_rewritten(cache, key, longer, "a byte appended");
    for (unsigned seed = 10; seed < 20; ++seed) {
        expect_ignored_then_rewritten(cache, key, random_bytes(seed * 37, seed), "random bytes");
    }
    // A random file that starts as an entry does.
    std::vector<char> foreign(valid.begin(), valid.begin() + 16);
    const std::vector<char> rest = random_bytes(valid.size() - 16, 21);
    foreign.insert(foreign.end(), rest.begin(), rest.end());
    expect_ignored_then_rewritten(cache, key, foreign, "a foreign entry");
    // A directory where the entry should be: a miss.
    fs::remove(cache.entry_path(key));
    fs::create_directory(cache.entry_path(key));
    EXPECT_FALSE(cache.load(key).has_value());
}

TEST(ProgramCache, DirectoryFromTheEnvironment) {
    EXPECT_EQ(program_cache_directory("/scratch/c", "/xdg", "/home/u"), fs::path("/scratch/c"));
    EXPECT_EQ(program_cache_directory("relative", "/xdg", "/home/u"), fs::path("relative"));
    EXPECT_EQ(program_cache_directory("off", "/xdg", "/home/u"), fs::path());
    EXPECT_EQ(program_cache_directory("", "/xdg", "/home/u"), fs::path());
    EXPECT_EQ(program_cache_directory(nullptr, "/xdg", "/home/u"), fs::path("/xdg/simrun"));
    // XDG: a relative or empty XDG_CACHE_HOME is ignored.
    EXPECT_EQ(program_cache_directory(nullptr, "xdg", "/home/u"),
              fs::path("/home/u/.cache/simrun"));
    EXPECT_EQ(program_cache_directory(nullptr, "", "/home/u"), fs::path("/home/u/.cache/simrun"));
    EXPECT_EQ(program_cache_directory(nullptr, nullptr, "/home/u"),
              fs::path("/home/u/.cache/simrun"));
    EXPECT_EQ(program_cache_directory(nullptr, nullptr, ""), fs::path());
    EXPECT_EQ(program_cache_directory(nullptr, nullptr, nullptr), fs::path());
}

TEST(ProgramCache, NoDirectoryIsNoCache) {
    const ProgramCache cache(fs::path{});
    EXPECT_FALSE(cache.enabled());
    EXPECT_FALSE(cache.store(sample_key(), random_bytes(10, 6)));
    EXPECT_FALSE(cache.load(sample_key()).has_value());
}

TEST(ProgramCache, AnUnwritableDirectoryTurnsTheCacheOffWithoutThrowing) {
    const TemporaryDirectory temporary;
    // Under a regular file no directory can be made, whoever runs the test.
    const fs::path file = temporary.write("a_file", "text");
    const ProgramCache cache(file / "cache");
    EXPECT_TRUE(cache.enabled());
    bool stored = true;
    EXPECT_NO_THROW(stored = cache.store(sample_key(), random_bytes(10, 7)));
    EXPECT_FALSE(stored);
    EXPECT_FALSE(cache.enabled());
    EXPECT_FALSE(cache.load(sample_key()).has_value());
    EXPECT_FALSE(cache.store(sample_key(), random_bytes(10, 7)));

    // An entry's name taken by a directory: the rename fails, the cache turns off.
    const ProgramCache blocked(temporary.path() / "blocked");
    fs::create_directories(blocked.entry_path(sample_key()) / "inside");
    EXPECT_NO_THROW(stored = blocked.store(sample_key(), random_bytes(10, 7)));
    EXPECT_FALSE(stored);
    EXPECT_FALSE(blocked.enabled());
}

TEST(ProgramCache, AReadOnlyDirectoryTurnsTheCacheOffWithoutThrowing) {
    if (::geteuid() == 0) GTEST_SKIP() << "root writes into a read-only directory";
    const TemporaryDirectory temporary;
    bool stored = true;
    const fs::path read_only = temporary.path() / "read_only";
    fs::create_directory(read_only);
    fs::permissions(read_only, fs::perms::owner_read | fs::perms::owner_exec);
    const ProgramCache denied(read_only);
    EXPECT_NO_THROW(stored = denied.store(sample_key(), random_bytes(10, 7)));
    EXPECT_FALSE(stored);
    EXPECT_FALSE(denied.enabled());
    fs::permissions(read_only, fs::perms::owner_all);
}

// The permission bits of `path` (the link's own target followed).
fs::perms permissions_of(const fs::path& path) {
    return fs::status(path).permissions() & fs::perms::mask;
}

TEST(ProgramCache, TheDirectoryAndEntriesAreTheOwnersAloneWhateverTheUmask) {
    const TemporaryDirectory temporary;
    const ProgramCache cache(temporary.path() / "made" / "cache");
    const mode_t previous = ::umask(0);
    const bool stored = cache.store(sample_key(), random_bytes(100, 30));
    ::umask(previous);
    ASSERT_TRUE(stored);
    EXPECT_EQ(permissions_of(cache.directory()), fs::perms::owner_all);
    EXPECT_EQ(permissions_of(cache.entry_path(sample_key())),
              fs::perms::owner_read | fs::perms::owner_write);
    EXPECT_TRUE(cache.load(sample_key()).has_value());
}

TEST(ProgramCache, ASymlinkAtAnEntrysNameIsAMissAndIsReplaced) {
    const TemporaryDirectory temporary;
    const ProgramCache cache(temporary.path() / "cache");
    const ProgramKey key = sample_key();
    const std::vector<char> program = random_bytes(400, 31);
    ASSERT_TRUE(cache.store(key, program));
    // A valid entry elsewhere, linked at the entry's name: not followed.
    const fs::path elsewhere = temporary.path() / "elsewhere.bin";
    fs::rename(cache.entry_path(key), elsewhere);
    fs::create_symlink(elsewhere, cache.entry_path(key));
    EXPECT_FALSE(cache.load(key).has_value());
    EXPECT_TRUE(cache.enabled());
    // A store replaces the link, not the file it names.
    const std::vector<char> other = random_bytes(90, 32);
    ASSERT_TRUE(cache.store(key, other));
    EXPECT_FALSE(fs::is_symlink(cache.entry_path(key)));
    EXPECT_EQ(cache.load(key), other);
    EXPECT_EQ(read_file(elsewhere).size(), 40 + program_key_bytes(key).size() + program.size());
}

TEST(ProgramCache, AFifoAtAnEntrysNameIsAMissAndDoesNotBlock) {
    const TemporaryDirectory temporary;
    const ProgramCache cache(temporary.path() / "cache");
    const ProgramKey key = sample_key();
    ASSERT_TRUE(cache.store(key, random_bytes(50, 33)));
    const fs::path entry = cache.entry_path(key);
    fs::remove(entry);
    ASSERT_EQ(::mkfifo(entry.c_str(), 0600), 0);
    auto loaded = std::async(std::launch::async, [&] { return cache.load(key); });
    if (loaded.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
        // Free the blocked reader (a writer opens the FIFO), so that the test can end.
        const int writer = ::open(entry.c_str(), O_WRONLY | O_NONBLOCK);
        if (writer >= 0) ::close(writer);
        FAIL() << "loading an entry that is a FIFO blocked";
    }
    EXPECT_FALSE(loaded.get().has_value());
    const std::vector<char> program = random_bytes(60, 34);
    ASSERT_TRUE(cache.store(key, program));
    EXPECT_EQ(cache.load(key), program);
}

TEST(ProgramCache, AnEntryWritableByGroupOrOthersIsAMiss) {
    const TemporaryDirectory temporary;
    const ProgramCache cache(temporary.path() / "cache");
    const ProgramKey key = sample_key();
    ASSERT_TRUE(cache.store(key, random_bytes(70, 35)));
    for (const fs::perms writable : {fs::perms::group_write, fs::perms::others_write}) {
        fs::permissions(cache.entry_path(key), writable, fs::perm_options::add);
        EXPECT_FALSE(cache.load(key).has_value());
        fs::permissions(cache.entry_path(key), writable, fs::perm_options::remove);
        EXPECT_TRUE(cache.load(key).has_value());
    }
}

TEST(ProgramCache, ADirectoryWritableByGroupOrOthersTurnsTheCacheOff) {
    for (const fs::perms writable : {fs::perms::group_write, fs::perms::others_write}) {
        const TemporaryDirectory temporary;
        const fs::path directory = temporary.path() / "cache";
        ASSERT_TRUE(ProgramCache(directory).store(sample_key(), random_bytes(80, 36)));
        fs::permissions(directory, writable, fs::perm_options::add);
        // A valid entry there is not read, and nothing is stored.
        const ProgramCache loading(directory);
        EXPECT_FALSE(loading.load(sample_key()).has_value());
        EXPECT_FALSE(loading.enabled());
        const ProgramCache storing(directory);
        EXPECT_FALSE(storing.store(sample_key(), random_bytes(80, 37)));
        EXPECT_FALSE(storing.enabled());
    }
}

TEST(ProgramCache, ADirectoryOfAnotherUserTurnsTheCacheOff) {
    if (::geteuid() != 0) GTEST_SKIP() << "only root can give a directory to another user";
    const TemporaryDirectory temporary;
    const fs::path directory = temporary.path() / "cache";
    ASSERT_TRUE(ProgramCache(directory).store(sample_key(), random_bytes(80, 38)));
    ASSERT_EQ(::chown(directory.c_str(), 65534, 65534), 0);  // nobody
    const ProgramCache cache(directory);
    EXPECT_FALSE(cache.load(sample_key()).has_value());
    EXPECT_FALSE(cache.enabled());
}

TEST(ProgramCache, AStoreRemovesTheStaleTemporariesOfKilledStores) {
    const TemporaryDirectory temporary;
    const ProgramCache cache(temporary.path() / "cache");
    ASSERT_TRUE(cache.store(sample_key(), random_bytes(10, 39)));
    const fs::path& directory = cache.directory();
    const std::string temporary_name = ".program-0123456789abcdef.bin.fedcba9876543210.tmp";
    const fs::path stale = directory / temporary_name;
    const fs::path recent = directory / ".program-0123456789abcdef.bin.0000000000000001.tmp";
    const fs::path foreign = directory / ".notes.txt.fedcba9876543210.tmp";  // not the cache's
    for (const fs::path& path : {stale, recent, foreign}) write_file(path, {'x'});
    const auto two_hours_ago = fs::file_time_type::clock::now() - std::chrono::hours(2);
    fs::last_write_time(stale, two_hours_ago);
    fs::last_write_time(foreign, two_hours_ago);
    ProgramKey other = sample_key();
    other.architecture = "sm_80";
    ASSERT_TRUE(cache.store(other, random_bytes(10, 40)));
    EXPECT_FALSE(fs::exists(stale));
    EXPECT_TRUE(fs::exists(recent));  // perhaps a store in progress
    EXPECT_TRUE(fs::exists(foreign));
    EXPECT_TRUE(cache.load(sample_key()).has_value());
    EXPECT_TRUE(cache.load(other).has_value());
}

TEST(ProgramCache, ConcurrentStoresOfOneKeyLeaveAValidEntry) {
    const TemporaryDirectory temporary;
    const ProgramKey key = sample_key();
    const std::vector<char> program = random_bytes(200000, 8);
    std::atomic<bool> storing{true};
    std::atomic<int> torn{0};
    std::atomic<int> stored{0};
    // Separate cache objects, as separate processes (the ranks of a node) would have.
    std::thread reader([&] {
        const ProgramCache cache(temporary.path() / "cache");
        while (storing.load()) {
            const auto loaded = cache.load(key);
            if (loaded && *loaded != program) ++torn;
        }
    });
    std::vector<std::thread> writers;
    for (int w = 0; w < 4; ++w) {
        writers.emplace_back([&] {
            const ProgramCache cache(temporary.path() / "cache");
            for (int n = 0; n < 20; ++n) stored += cache.store(key, program) ? 1 : 0;
        });
    }
    for (std::thread& writer : writers) writer.join();
    storing = false;
    reader.join();
    EXPECT_EQ(stored.load(), 80);
    EXPECT_EQ(torn.load(), 0);
    const ProgramCache cache(temporary.path() / "cache");
    EXPECT_EQ(cache.load(key), program);
    // No temporary file is left behind.
    const auto entries =
        std::distance(fs::directory_iterator(temporary.path() / "cache"), fs::directory_iterator{});
    EXPECT_EQ(entries, 1);
}

}  // namespace
}  // namespace simrun::solvers
