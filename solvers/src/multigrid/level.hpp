#pragma once
// One level of a multigrid hierarchy on the back-end: its box, its operator, its work vectors,
// its smoother, its transfer to the next level and the link that reaches that level's vectors
// (or, on the coarsest level, its solve), and what distribution over ranks adds.
#include <cstdint>
#include <memory>

#include "base/kernel_table.hpp"
#include "distributed/halo_exchange.hpp"
#include "multigrid/coarse_link.hpp"
#include "multigrid/coarsest_solve.hpp"
#include "multigrid/smoother.hpp"
#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/boxes/box.hpp"
#include "simrun/solvers/matrices/dia_matrix.hpp"

namespace simrun::solvers::multigrid {

// The transfer to the next coarser level: its weights on the back-end (or their classes) and
// the view the transfer kernels take.
template <typename T>
struct LevelTransfer {
    BoxTransferView<T> view{};
    Array<T> weights;
    Array<std::uint8_t> weight_class;
    Array<T> class_weights;
};

// What a level split over ranks adds: the exchange of its window's halo (none on one process),
// whether this rank holds points of it (a level split over fewer ranks leaves the last ones
// none: they only take part in the collectives of the levels below), and where this rank's own
// points start in the level's vectors.
template <typename T>
struct LevelSpread {
    std::unique_ptr<HaloExchange<T>> halo;
    bool holds = true;
    std::size_t own_offset = 0;
};

template <typename T>
struct Level {
    // The level's box (over ranks its window's) and its shape.
    GridBox box;
    BoxShape shape{};
    // The operator (all levels but the coarsest; owned, or the caller's on the finest level),
    // its diagonal of offset 0, and the Gershgorin bound of the spectrum of D^-1 A (the whole
    // level's).
    std::unique_ptr<DiaMatrix<T>> owned_a;
    const DiaMatrix<T>* a = nullptr;
    int main = 0;
    double spectrum_bound = 0;
    // Work vectors: the residual; on coarse levels the right side and the correction.
    Array<T> r, b, x;
    std::unique_ptr<Smoother<T>> smoother;
    LevelTransfer<T> transfer;
    std::unique_ptr<CoarseLink<T>> link;         // to the next level (none on the coarsest)
    std::unique_ptr<CoarsestSolve<T>> coarsest;  // on the coarsest level only
    LevelSpread<T> spread;

    bool holds() const { return spread.holds; }
    bool exchanges() const { return spread.halo != nullptr; }
    // The window's halo from the neighbours (nothing on one process).
    void exchange(T* window) const {
        if (spread.halo) spread.halo->exchange(window);
    }
};

}  // namespace simrun::solvers::multigrid
