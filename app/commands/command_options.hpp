#pragma once
// What several commands' options share: the words of an enum as an option, paths, the process
// grid, and the input file with its --set overrides.
#include <CLI/CLI.hpp>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "simrun/framework/config/config.hpp"
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/base/communicator.hpp"
#include "simrun/solvers/base/enum_names.hpp"

namespace simrun::app {

// An input file and how to run it: the run's options (`simrun FILE.toml ...`), check's and
// verify's.
struct InputArguments {
    std::shared_ptr<const solvers::Communicator> ranks = solvers::single_process();
    std::string file;
    solvers::BackendChoice backend = solvers::BackendChoice::automatic;
    std::vector<std::string> overrides;
    std::string output;
    std::string restart;
    std::string process_grid;
    bool quiet = false;
};

// The input file read strictly with each --set applied.
framework::Config load(const InputArguments& arguments);

// "2x2" or "2x1x2": the parts of a process grid along x, y (and z); nullopt for other text.
std::optional<std::array<std::int64_t, 3>> parse_process_grid(const std::string& text);

// --process-grid PxQ[xR], checked as it is parsed.
void add_process_grid_option(CLI::App& app, std::string& process_grid);

// A path given on the command line: a control character in it (a pasted newline) is a mistake
// (CLI11's check: the message, or empty).
std::string plain_path(const std::string& text);

// The words of an option, for its help: "auto|cpu|cuda".
std::string joined(const std::vector<std::string>& words);

// An option taking one of the enum's words (its one list, enum_names), stored as the value.
template <typename E>
CLI::Option* add_word_option(CLI::App& app, const std::string& name, E& value,
                             const std::string& help) {
    const std::vector<std::string> words = solvers::enum_name_strings<E>();
    return app
        .add_option_function<std::string>(
            name,
            [&value, name](const std::string& word) { value = solvers::parse_enum<E>(word, name); },
            help)
        ->check(CLI::IsMember(words))
        ->option_text(joined(words));
}

}  // namespace simrun::app
