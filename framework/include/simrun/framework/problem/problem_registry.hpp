#pragma once
// The registry through which problem modules make themselves known: each module registers a
// factory under its name at static-initialisation time (SIMRUN_REGISTER_PROBLEM), so adding a
// problem touches no framework code.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "simrun/framework/config/config.hpp"
#include "simrun/framework/discretisation/grid.hpp"
#include "simrun/framework/problem/problem.hpp"

namespace simrun::framework {

// Builds a problem from its [problem] section (the factory reads its own keys strictly).
using ProblemFactory =
    std::function<std::unique_ptr<Problem>(const ConfigSection& section, const Grid& grid)>;

class ProblemRegistry {
public:
    static ProblemRegistry& instance();

    // Throws std::logic_error when the name is taken.
    void add(const std::string& name, ProblemFactory factory);
    // nullptr when no problem has that name.
    const ProblemFactory* find(const std::string& name) const;
    std::vector<std::string> names() const;

private:
    std::map<std::string, ProblemFactory> factories_;
};

struct ProblemRegistrar {
    ProblemRegistrar(const std::string& name, ProblemFactory factory) {
        ProblemRegistry::instance().add(name, std::move(factory));
    }
};

}  // namespace simrun::framework

// Registers a problem factory under a name, from the problem's own source file.
#define SIMRUN_REGISTER_PROBLEM(name, factory)                                              \
    static const ::simrun::framework::ProblemRegistrar simrun_problem_registrar_##factory { \
        name, factory                                                                       \
    }
