#pragma once
// The simrun command line (SPEC §7): `simrun FILE.toml [options]`, `simrun check FILE.toml`.
// Exit codes: 0 success; 1 the computation failed (a solve did not converge, I/O failure);
// 2 usage or input error (nothing is written then).

namespace simrun::app {

int run_command_line(int argc, char** argv);

}  // namespace simrun::app
