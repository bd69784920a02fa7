#include "verify_command.hpp"

#include <cstdio>
#include <optional>

#include "simrun/framework/distributed/agreement.hpp"
#include "simrun/framework/run/verification.hpp"

namespace simrun::app {

CLI::App* add_verify_command(CLI::App& app, VerifyArguments& arguments) {
    CLI::App* verify = app.add_subcommand(
        "verify", "Convergence study against the problem's exact solution (observed orders)");
    verify->add_option("file", arguments.input.file, "Input file (TOML) with `exact`")
        ->required()
        ->check(plain_path);
    verify->add_option("--levels", arguments.levels, "Number of grid levels (>= 2; 3)");
    verify->add_flag("--json", arguments.json, "Print one JSON object");
    add_word_option(*verify, "--backend", arguments.input.backend, "Back-end");
    add_process_grid_option(*verify, arguments.input.process_grid);
    verify->add_option("--set", arguments.input.overrides, "Override an input key")
        ->allow_extra_args(false);
    return verify;
}

int run_verify(const VerifyArguments& arguments) {
    const InputArguments& input = arguments.input;
    const auto& ranks = input.ranks;
    const framework::VerificationReport report = framework::agreeing(*ranks, [&] {
        return framework::verify(
            [&] { return load(input); }, arguments.levels, input.backend, ranks,
            input.process_grid.empty() ? std::nullopt : parse_process_grid(input.process_grid));
    });
    if (ranks->rank() != 0) return 0;
    std::printf("%s", arguments.json ? (framework::format_json(report) + "\n").c_str()
                                     : framework::format_table(report).c_str());
    return 0;
}

}  // namespace simrun::app
