// Fuzz target: an input file as the command line reads it. The TOML parser, the strict key
// checks and every section's validation (expressions through muParser included) run; a
// refusal is an InputError (or std::invalid_argument from a value check). Nothing is solved
// or written.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "simrun/framework/config/config.hpp"
#include "simrun/framework/config/input_error.hpp"
#include "simrun/framework/problem/run_spec.hpp"

extern const std::vector<std::string> fuzz_tokens = {"[problem]\n",
                                                     "[grid]\n",
                                                     "[boundary]\n",
                                                     "[time]\n",
                                                     "[solver]\n",
                                                     "[output]\n",
                                                     "type = \"heat\"\n",
                                                     "type = \"poisson\"\n",
                                                     "type = \"convection_diffusion\"\n",
                                                     "nx = ",
                                                     "nz = ",
                                                     "x = [0.0, 1.0]\n",
                                                     "all = ",
                                                     "left = { type = \"neumann\", value = \"",
                                                     "{ type = \"robin\", coefficient = ",
                                                     "scheme = \"explicit_euler\"\n",
                                                     "dt = ",
                                                     "end = ",
                                                     "rtol = ",
                                                     "method = \"sor\"\n",
                                                     "format = \"dense\"\n",
                                                     "basename = \"",
                                                     "\"sin(pi*x)\"",
                                                     "exp(",
                                                     "log(",
                                                     "sqrt(",
                                                     "x > 0.5 ? ",
                                                     " : ",
                                                     "1/0",
                                                     "1e308",
                                                     "-1e-320",
                                                     "nan",
                                                     "inf",
                                                     "\"\"\"",
                                                     "'''",
                                                     "\\u0000",
                                                     "{",
                                                     "}",
                                                     "[[",
                                                     "]]",
                                                     ",",
                                                     "\n",
                                                     "t",
                                                     "^",
                                                     "_pi",
                                                     "#"};

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        const simrun::framework::Config config =
            simrun::framework::Config::from_string(text, "fuzz.toml");
        const simrun::framework::RunSpec spec = simrun::framework::parse_run_spec(config);
        (void)spec;
    } catch (const simrun::framework::InputError&) {
    } catch (const std::invalid_argument&) {
    }
    return 0;
}
