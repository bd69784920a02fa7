#include "multigrid/hierarchy.hpp"

#include <algorithm>
#include <string>

#include "multigrid/finest_entry.hpp"
#include "simrun/solvers/base/errors.hpp"

namespace simrun::solvers::multigrid {

template <typename T>
Hierarchy<T>::Hierarchy(std::shared_ptr<const Backend> backend,
                        const MultigridParameters& parameters, bool on_this_rank)
    : backend_(std::move(backend)),
      parameters_(parameters),
      on_this_rank_(on_this_rank),
      smoother_(smoother_kind<T>(parameters.smoother)),
      cycle_(backend_, levels_, parameters_) {}

template <typename T>
Hierarchy<T>::~Hierarchy() = default;

template <typename T>
bool Hierarchy<T>::split() const {
    return backend_->communicator().size() > 1 && !on_this_rank_;
}

template <typename T>
MultigridParameters Hierarchy<T>::planned_parameters() const {
    parameters_.validate();
    MultigridParameters planned = parameters_;
    planned.gather_size = gather_size_on(parameters_, backend_->kind());
    return planned;
}

template <typename T>
void Hierarchy<T>::resolve_cycle(bool jumps_on_this_rank) {
    if (parameters_.cycle != MultigridCycle::automatic) return;
    const bool jumps = split() ? backend_->communicator().max(jumps_on_this_rank ? 1.0 : 0.0) > 0
                               : jumps_on_this_rank;
    parameters_.cycle = jumps ? MultigridCycle::w : MultigridCycle::v;
}

template <typename T>
std::string Hierarchy<T>::describe() const {
    std::string text =
        std::to_string(summaries_.size()) + (summaries_.size() == 1 ? " level: " : " levels: ");
    for (std::size_t l = 0; l < summaries_.size(); ++l) {
        text += (l > 0 ? " -> " : "") + summaries_[l].box.describe();
    }
    const char* cycle = parameters_.cycle == MultigridCycle::v   ? "V"
                        : parameters_.cycle == MultigridCycle::w ? "W"
                                                                 : "F";
    text += std::string(" (direct), ") + cycle + "(" + std::to_string(parameters_.pre_sweeps) +
            "," + std::to_string(parameters_.post_sweeps) + ") " +
            (parameters_.symmetric ? "symmetric " : "") + smoother_.words;
    if (split()) {
        const GridBox& gathered = summaries_[split_levels_].box;
        // The levels split over fewer ranks, by how many hold them.
        std::string fewer;
        for (std::size_t l = 0; l < split_levels_; ++l) {
            if (split_holders_[l] == backend_->communicator().size()) continue;
            fewer +=
                summaries_[l].box.describe() + " on " + std::to_string(split_holders_[l]) + ", ";
        }
        text += ", over " + std::to_string(backend_->communicator().size()) + " ranks (" + fewer +
                (split_levels_ == 0 ? std::string("every level") : "from " + gathered.describe()) +
                " gathered on each)";
    }
    return text;
}

template <typename T>
void Hierarchy<T>::check_sizes(const Array<T>& b, const Array<T>& x) const {
    const std::size_t n = size_;
    if (b.size() != n || x.size() != n) {
        throw DimensionMismatch("MultigridHierarchy::cycle: the box has " + std::to_string(n) +
                                " points but b has " + std::to_string(b.size()) + " and x " +
                                std::to_string(x.size()));
    }
}

template <typename T>
void Hierarchy<T>::cycle(const Array<T>& b, Array<T>& x) const {
    check_sizes(b, x);
    entry_->run(b, x, false, nullptr);
}

template <typename T>
void Hierarchy<T>::cycle_from_zero(const Array<T>& b, Array<T>& x) const {
    check_sizes(b, x);
    entry_->run(b, x, true, nullptr);
}

template <typename T>
std::vector<double> Hierarchy<T>::time_levels(const Array<T>& b, Array<T>& x, int cycles) const {
    check_sizes(b, x);
    std::vector<double> seconds(levels_.size(), 0.0);
    for (int c = 0; c < cycles; ++c) entry_->run(b, x, false, &seconds);
    for (double& s : seconds) s /= std::max(cycles, 1);
    return seconds;
}

template <typename T>
bool Hierarchy<T>::enters_other() const {
    return entry_->enters_other();
}

template <typename T>
void Hierarchy<T>::cycle_other_from_zero(const OtherPrecision<T>* r, OtherPrecision<T>* z) const {
    entry_->run_other_from_zero(r, z);
}

template class Hierarchy<float>;
template class Hierarchy<double>;

}  // namespace simrun::solvers::multigrid
