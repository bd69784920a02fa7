#include "simrun/framework/problem/problem_registry.hpp"

#include <stdexcept>

namespace simrun::framework {

ProblemRegistry& ProblemRegistry::instance() {
    static ProblemRegistry registry;
    return registry;
}

void ProblemRegistry::add(const std::string& name, ProblemFactory factory) {
    if (!factories_.emplace(name, std::move(factory)).second) {
        throw std::logic_error("problem '" + name + "' registered twice");
    }
}

const ProblemFactory* ProblemRegistry::find(const std::string& name) const {
    const auto it = factories_.find(name);
    return it == factories_.end() ? nullptr : &it->second;
}

std::vector<std::string> ProblemRegistry::names() const {
    std::vector<std::string> names;
    for (const auto& entry : factories_) names.push_back(entry.first);
    return names;
}

}  // namespace simrun::framework
