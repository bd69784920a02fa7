#pragma once
// A named, read-only view of one scalar field on a Grid, as handed to the output writers.
#include <span>
#include <string>

namespace simrun::framework {

struct FieldView {
    std::string name;
    std::span<const double> values;  // one value per grid node, in Grid node order
};

}  // namespace simrun::framework
