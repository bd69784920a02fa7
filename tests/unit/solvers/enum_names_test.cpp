// The one list of names per enum: every value named once, names distinct, each name read back as
// its value, and an unknown name refused with the accepted ones listed.
#include "simrun/solvers/base/enum_names.hpp"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>

#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/base/precision.hpp"
#include "simrun/solvers/matrices/format.hpp"
#include "simrun/solvers/methods/solve_result.hpp"
#include "simrun/solvers/selection/solver_selection.hpp"

namespace simrun::solvers {
namespace {

template <typename E>
void expect_a_complete_table(int value_count) {
    std::set<int> values;
    std::set<std::string_view> names;
    for (const auto& entry : enum_names<E>) {
        values.insert(static_cast<int>(entry.value));
        names.insert(entry.name);
        EXPECT_EQ(name_of(entry.value), entry.name);
        EXPECT_EQ(parse_enum<E>(entry.name, "thing"), entry.value);
    }
    EXPECT_EQ(static_cast<int>(enum_names<E>.size()), value_count);
    EXPECT_EQ(static_cast<int>(values.size()), value_count) << "a value is named twice";
    EXPECT_EQ(static_cast<int>(names.size()), value_count) << "a name is used twice";
    for (int v = 0; v < value_count; ++v) EXPECT_EQ(values.count(v), 1u) << "value " << v;
}

TEST(EnumNames, EveryTableNamesEachValueOnce) {
    expect_a_complete_table<Format>(6);
    expect_a_complete_table<Method>(6);
    expect_a_complete_table<PreconditionerKind>(5);
    expect_a_complete_table<BackendKind>(2);
    expect_a_complete_table<BackendChoice>(3);
    expect_a_complete_table<SolveStatus>(10);
    expect_a_complete_table<Precision>(2);
}

TEST(EnumNames, TheParsersAndPrintersUseTheTables) {
    EXPECT_EQ(to_string(Format::stencil), "stencil");
    EXPECT_EQ(parse_format("ell"), Format::ell);
    EXPECT_EQ(to_string(Method::bicgstab), "bicgstab");
    EXPECT_EQ(parse_preconditioner("ssor"), PreconditionerKind::ssor);
    EXPECT_EQ(parse_backend_choice("auto"), BackendChoice::automatic);
    EXPECT_EQ(to_string(SolveStatus::non_finite), "non_finite");
    EXPECT_EQ(parse_enum<Precision>("float", "precision"), Precision::single_precision);
}

TEST(EnumNames, AnUnknownNameIsRefusedWithTheAcceptedOnes) {
    EXPECT_EQ(enum_name_list<PreconditionerKind>("auto"),
              "auto, none, jacobi, ssor, multigrid or ilu0");
    EXPECT_EQ(enum_name_strings<BackendKind>("any"),
              (std::vector<std::string>{"any", "cpu", "cuda"}));
    try {
        parse_method("minres");
        ADD_FAILURE() << "minres was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(
            e.what(),
            "unknown solver method 'minres' (expected auto, jacobi, sor, cg, bicg, bicgstab or "
            "gmres)");
    }
    EXPECT_THROW(parse_format("auto"), std::invalid_argument);
}

}  // namespace
}  // namespace simrun::solvers
