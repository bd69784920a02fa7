#include "simrun/framework/config/config.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>

namespace simrun::framework {
namespace {

// The message of the InputError `action` throws; fails the test when it throws nothing.
std::string input_error(const std::function<void()>& action) {
    try {
        action();
    } catch (const InputError& error) {
        return error.what();
    }
    ADD_FAILURE() << "no InputError was thrown";
    return {};
}

TEST(Config, SyntaxErrorNamesFileLineAndColumn) {
    const std::string message =
        input_error([] { Config::from_string("[grid]\nnx = 64\nny = = 3\n", "in.toml"); });
    EXPECT_EQ(message.rfind("in.toml:3:", 0), 0u) << message;
    EXPECT_NE(message.find("TOML syntax error"), std::string::npos) << message;
}

TEST(Config, MissingFileNamesThePath) {
    const std::filesystem::path path = "/nonexistent-simrun-dir/input.toml";
    const std::string message = input_error([&] { Config::from_file(path); });
    EXPECT_NE(message.find("/nonexistent-simrun-dir/input.toml"), std::string::npos) << message;
    EXPECT_NE(message.find("no such file"), std::string::npos) << message;
}

TEST(Config, FromFileKeepsTextAndPlacesErrorsInTheFile) {
    const std::filesystem::path path =
        std::filesystem::temp_directory_path() / "simrun_config_test_input.toml";
    const std::string text = "# a comment\n[grid]\nnx = 'many'\n";
    std::ofstream(path) << text;
    Config config = Config::from_file(path);
    std::filesystem::remove(path);
    EXPECT_EQ(config.text(), text);
    const std::string message =
        input_error([&] { config.section("grid").require<std::int64_t>("nx"); });
    EXPECT_EQ(message, path.string() + ":3:6: key 'grid.nx': expected an integer, got a string");
}

// A string value with a control character (a NUL would cut an expression or a path short) is
// refused where it is read, placed and keyed, from the file and from --set; tab and newline
// stay (an expression may span lines) except in a path, which takes none and must not be empty.
TEST(Config, ControlCharactersInStringsAreRefusedAndPathsTakeNone) {
    Config config = Config::from_string(
        "[problem]\nsource = \"x\\u0000+1\"\nlong = \"\"\"x +\n1\"\"\"\nbell = \"a\\u0007\"\n"
        "[output]\ndirectory = \"out\\tdir\"\nempty = \"\"\nplain = \"out/a b\"\n",
        "in.toml");
    const ConfigSection problem = config.section("problem");
    EXPECT_EQ(input_error([&] { problem.require<std::string>("source"); }),
              "in.toml:2:10: key 'problem.source': holds the control character U+0000 at position "
              "1 (plain text expected; tab and newline aside)");
    EXPECT_EQ(problem.get<std::string>("long", ""), "x +\n1");
    EXPECT_NE(input_error([&] { problem.get<std::string>("bell", ""); }).find("U+0007"),
              std::string::npos);
    const ConfigSection output = config.section("output");
    EXPECT_EQ(output.get<std::string>("directory", ""), "out\tdir");
    EXPECT_EQ(input_error([&] { output.path("directory"); }),
              "in.toml:7:13: key 'output.directory': holds the control character U+0009 at "
              "position 3 (plain text expected)");
    EXPECT_EQ(input_error([&] { output.path("empty"); }),
              "in.toml:8:9: key 'output.empty': must not be empty (a path expected)");
    EXPECT_EQ(output.path("plain"), std::filesystem::path("out/a b"));
    EXPECT_EQ(output.path("absent", "default/dir"), std::filesystem::path("default/dir"));
    config.apply_override("output.plain=\"a\\u0000b\"");
    EXPECT_EQ(input_error([&] { output.path("plain"); }),
              "--set output.plain=\"a\\u0000b\": key 'output.plain': holds the control character "
              "U+0000 at position 1 (plain text expected; tab and newline aside)");
    EXPECT_EQ(control_character_problem("a\nb", true), std::nullopt);
    EXPECT_EQ(control_character_problem("plain text", false), std::nullopt);
}

TEST(Config, UnknownKeySuggestsTheNearestKnownKey) {
    Config config = Config::from_string("[grid]\nny = 8\nnxx = 64\n", "in.toml");
    ConfigSection grid = config.section("grid");
    EXPECT_EQ(grid.get<std::int64_t>("nx", 32), 32);
    EXPECT_EQ(grid.get<std::int64_t>("ny", 32), 8);
    EXPECT_EQ(input_error([&] { config.check_all_used(); }),
              "in.toml:3:1: key 'grid.nxx': unknown key in [grid]; did you mean 'nx'?");
}

TEST(Config, UnknownKeysAreReportedInFileOrderWithoutFarSuggestions) {
    Config config = Config::from_string("[time]\nzeta = 1\n[grid]\nnx = 8\nalpha = 2\n", "in.toml");
    config.section("grid").get<std::int64_t>("nx", 3);
    config.section("time").get<double>("dt", 0.1);
    // 'zeta' (line 2) comes before 'alpha' (line 5) although toml++ sorts keys by name.
    EXPECT_EQ(input_error([&] { config.check_all_used(); }),
              "in.toml:2:1: key 'time.zeta': unknown key in [time]");
}

TEST(Config, UnknownSectionIsReported) {
    Config config = Config::from_string("[grid]\nnx = 8\n\n[solverr]\nmethod = 'cg'\n", "in.toml");
    config.section("grid").get<std::int64_t>("nx", 3);
    config.section("solver").get<std::string>("method", "auto");
    EXPECT_EQ(input_error([&] { config.check_all_used(); }),
              "in.toml:4:2: key 'solverr': unknown section [solverr]; did you mean 'solver'?");
}

TEST(Config, WrongTypeNamesKeyAndPosition) {
    Config config = Config::from_string("[grid]\nnx = 2.5\nperiodic = 1\n", "in.toml");
    ConfigSection grid = config.section("grid");
    EXPECT_EQ(input_error([&] { grid.require<std::int64_t>("nx"); }),
              "in.toml:2:6: key 'grid.nx': expected an integer, got a floating-point number");
    EXPECT_EQ(input_error([&] { grid.get<bool>("periodic", false); }),
              "in.toml:3:12: key 'grid.periodic': expected a boolean (true or false), got an "
              "integer");
}

TEST(Config, MissingRequiredKeyIsPlacedAtTheSectionOrTheFile) {
    Config config = Config::from_string("title = 'x'\n[grid]\nny = 3\n", "in.toml");
    EXPECT_EQ(input_error([&] { config.section("grid").require<std::int64_t>("nx"); }),
              "in.toml:2:1: key 'grid.nx': is required but missing");
    EXPECT_EQ(input_error([&] { config.section("time").require<double>("dt"); }),
              "in.toml: key 'time.dt': is required but missing");
}

TEST(Config, SectionThatIsNotATableIsAnError) {
    Config config = Config::from_string("grid = 5\n", "in.toml");
    EXPECT_EQ(input_error([&] { config.section("grid"); }),
              "in.toml:1:8: key 'grid': expected a table [grid], got an integer");
}

TEST(Config, IntegerIsAcceptedAsDouble) {
    Config config = Config::from_string("[time]\ndt = 2\nend = 1.5e-1\n", "in.toml");
    ConfigSection time = config.section("time");
    EXPECT_DOUBLE_EQ(time.require<double>("dt"), 2.0);
    EXPECT_DOUBLE_EQ(time.require<double>("end"), 0.15);
    EXPECT_DOUBLE_EQ(time.get<double>("start", -1.0), -1.0);
    EXPECT_NO_THROW(config.check_all_used());
}

TEST(Config, ArraysAreCheckedForLengthAndElementType) {
    Config config = Config::from_string(
        "[grid]\nlower = [0, 0.5]\nupper = [1.0, 2.0, 3.0]\nbad = [1.0, 'two']\n", "in.toml");
    ConfigSection grid = config.section("grid");
    const auto lower = grid.require<std::array<double, 2>>("lower");
    EXPECT_DOUBLE_EQ(lower[0], 0.0);
    EXPECT_DOUBLE_EQ(lower[1], 0.5);
    EXPECT_EQ(grid.require<std::vector<double>>("upper"), (std::vector<double>{1.0, 2.0, 3.0}));
    const auto upper = grid.require<std::array<double, 3>>("upper");
    EXPECT_DOUBLE_EQ(upper[2], 3.0);
    EXPECT_EQ(input_error([&] { grid.require<std::array<double, 3>>("lower"); }),
              "in.toml:2:9: key 'grid.lower': expected an array of 3 numbers, got 2");
    EXPECT_EQ(input_error([&] { grid.require<std::vector<double>>("bad"); }),
              "in.toml:4:13: key 'grid.bad': expected an array of numbers, element 2 is a string");
    EXPECT_EQ(input_error([&] { grid.require<std::array<double, 2>>("ghost"); }),
              "in.toml:1:1: key 'grid.ghost': is required but missing");
}

TEST(Config, FailPlacesAnImpossibleValueAtItsKey) {
    Config config = Config::from_string("[grid]\n  nx = 0\n", "in.toml");
    ConfigSection grid = config.section("grid");
    EXPECT_EQ(grid.require<std::int64_t>("nx"), 0);
    EXPECT_EQ(input_error([&] { grid.fail("nx", "must be >= 3, got 0"); }),
              "in.toml:2:8: key 'grid.nx': must be >= 3, got 0");
    EXPECT_EQ(grid.place("nx"), "in.toml:2:8");
    EXPECT_EQ(grid.full_key("nx"), "grid.nx");
}

TEST(Config, SubsectionsKeysAndHasMarkUse) {
    Config config = Config::from_string(
        "[boundary.left]\ntype = 'dirichlet'\nvalue = 1.0\n[boundary.right]\ntype = 'neumann'\n",
        "in.toml");
    ConfigSection boundary = config.section("boundary");
    EXPECT_EQ(boundary.keys(), (std::vector<std::string>{"left", "right"}));
    ConfigSection left = boundary.subsection("left");
    EXPECT_EQ(left.name(), "boundary.left");
    EXPECT_EQ(left.require<std::string>("type"), "dirichlet");
    EXPECT_TRUE(left.has("value"));
    EXPECT_FALSE(left.has("gradient"));
    EXPECT_EQ(input_error([&] { config.check_all_used(); }),
              "in.toml:4:11: key 'boundary.right': unknown key in [boundary]");
    EXPECT_EQ(config.section("boundary.right").get<std::string>("type", ""), "neumann");
    EXPECT_NO_THROW(config.check_all_used());
    EXPECT_EQ(input_error([&] { left.subsection("type"); }),
              "in.toml:2:8: key 'boundary.left.type': expected a table [boundary.left.type], got "
              "a string");
}

TEST(Config, SetWithoutEqualsIsRejected) {
    Config config = Config::from_string("[grid]\nnx = 8\n", "in.toml");
    EXPECT_EQ(input_error([&] { config.apply_override("grid.nx"); }),
              "--set expects key=value, got 'grid.nx'");
    EXPECT_EQ(input_error([&] { config.apply_override("=3"); }),
              "--set expects key=value, got '=3'");
    EXPECT_EQ(input_error([&] {
                  config.apply_override("grid..nx=3");
              }).rfind("--set grid..nx=3: key 'grid..nx': is not a key name", 0),
              0u);
}

TEST(Config, SetOverridesAValueAndItsErrorsNameTheOverride) {
    Config config = Config::from_string("[grid]\nnx = 8\nny = 8\n", "in.toml");
    config.apply_override("grid.nx=1024");
    EXPECT_EQ(config.section("grid").require<std::int64_t>("nx"), 1024);
    config.apply_override("grid.ny=abc");
    EXPECT_EQ(input_error([&] { config.section("grid").require<std::int64_t>("ny"); }),
              "--set grid.ny=abc: key 'grid.ny': expected an integer, got a string");
    EXPECT_EQ(input_error([&] { config.section("grid").fail("ny", "must be >= 3"); }),
              "--set grid.ny=abc: key 'grid.ny': must be >= 3");
    // The file text stays as read; the effective input shows the overrides.
    EXPECT_EQ(config.text(), "[grid]\nnx = 8\nny = 8\n");
    const std::string effective = config.effective_toml();
    EXPECT_NE(effective.find("nx = 1024"), std::string::npos) << effective;
    EXPECT_NE(effective.find("ny = 'abc'"), std::string::npos) << effective;
}

TEST(Config, SetParsesTomlValuesAndTakesOtherTextAsAString) {
    Config config = Config::from_string("[time]\nscheme = 'crank_nicolson'\n", "in.toml");
    config.apply_override("time.scheme=backward_euler");
    config.apply_override("time.dt = 0.5");
    config.apply_override("grid.lower=[0.0, 2.0]");
    config.apply_override("output.vtk=true");
    config.apply_override("output.name=\"run 1\"");
    config.apply_override("output.note=1 2 3");
    ConfigSection time = config.section("time");
    EXPECT_EQ(time.require<std::string>("scheme"), "backward_euler");
    EXPECT_DOUBLE_EQ(time.require<double>("dt"), 0.5);
    const auto lower = config.section("grid").require<std::array<double, 2>>("lower");
    EXPECT_DOUBLE_EQ(lower[1], 2.0);
    ConfigSection output = config.section("output");
    EXPECT_TRUE(output.require<bool>("vtk"));
    EXPECT_EQ(output.require<std::string>("name"), "run 1");
    EXPECT_EQ(output.require<std::string>("note"), "1 2 3");
    EXPECT_NO_THROW(config.check_all_used());
}

TEST(Config, TypedSetStoresTheValueExactlyAndCreatesTables) {
    Config config = Config::from_string("[grid]\nnx = 8\n", "in.toml");
    const double dt = 0.1 / 3.0;  // not exactly representable in few decimal digits
    config.set("grid.nx", std::int64_t{1025}, "test");
    config.set("time.dt", dt, "test");
    config.set("output.vtk", false, "test");
    config.set("time.scheme", std::string("crank_nicolson"), "test");
    EXPECT_EQ(config.section("grid").require<std::int64_t>("nx"), 1025);
    EXPECT_EQ(config.section("time").require<double>("dt"), dt);  // bit for bit
    EXPECT_FALSE(config.section("output").require<bool>("vtk"));
    EXPECT_EQ(config.section("time").require<std::string>("scheme"), "crank_nicolson");
    EXPECT_NO_THROW(config.check_all_used());
    // A wrong type is caught where it is read, naming the input.
    config.set("grid.nx", 2.5, "test");
    EXPECT_EQ(input_error([&] { config.section("grid").require<std::int64_t>("nx"); }),
              "in.toml: key 'grid.nx': expected an integer, got a floating-point number");
}

TEST(Config, TypedSetRefusesWhatApplyOverrideRefuses) {
    Config config = Config::from_string("[grid]\nnx = 8\n", "in.toml");
    EXPECT_EQ(input_error([&] { config.set("grid", std::int64_t{3}, "verify level 1"); }),
              "verify level 1: key 'grid': cannot replace the table [grid] with a value; set its "
              "keys instead, e.g. --set grid.NAME=VALUE");
    EXPECT_EQ(input_error([&] { config.set("grid.nx.a", 1.0, "verify level 1"); }),
              "verify level 1: key 'grid.nx': is an integer, not a table, so 'grid.nx.a' cannot "
              "be set");
    EXPECT_EQ(input_error([&] {
                  config.set("grid..nx", 1.0, "verify level 1");
              }).rfind("verify level 1: key 'grid..nx': is not a key name", 0),
              0u);
}

TEST(Config, SetCreatingANewKeyIsReportedUnknown) {
    Config config = Config::from_string("[grid]\nnx = 8\n", "in.toml");
    config.apply_override("grid.nz=5");
    config.section("grid").get<std::int64_t>("nx", 3);
    EXPECT_EQ(input_error([&] { config.check_all_used(); }),
              "--set grid.nz=5: key 'grid.nz': unknown key in [grid]; did you mean 'nx'?");

    Config other = Config::from_string("", "in.toml");
    other.apply_override("outptu.every=3");
    other.section("output");
    EXPECT_EQ(input_error([&] { other.check_all_used(); }),
              "--set outptu.every=3: key 'outptu': unknown section [outptu]; did you mean "
              "'output'?");
}

TEST(Config, SetCannotReplaceATableOrSetAKeyUnderAValue) {
    Config config = Config::from_string("[grid]\nnx = 8\n", "in.toml");
    EXPECT_EQ(input_error([&] {
                  config.apply_override("grid=3");
              }).rfind("--set grid=3: key 'grid': cannot replace the table [grid] with a value", 0),
              0u);
    EXPECT_EQ(input_error([&] { config.apply_override("grid.nx.a=3"); }),
              "--set grid.nx.a=3: key 'grid.nx': is an integer, not a table, so 'grid.nx.a' "
              "cannot be set");
    EXPECT_EQ(config.section("grid").require<std::int64_t>("nx"), 8);
}

}  // namespace
}  // namespace simrun::framework
