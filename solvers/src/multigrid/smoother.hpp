#pragma once
// A multigrid level's smoother: `sweeps` sweeps of an iterate for A x = b on the level's
// window, with the level's halo exchanged as the sweeps need it. Red-black Gauss-Seidel
// (red_black_smoother.cpp) and Chebyshev (chebyshev_smoother.cpp) are its two implementations;
// the choice is made once from MultigridParameters::smoother (smoother_kind).
#include <memory>
#include <optional>
#include <vector>

#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/boxes/box.hpp"
#include "simrun/solvers/multigrid/multigrid_parameters.hpp"

namespace simrun::solvers::multigrid {

template <typename T>
struct Level;

template <typename T>
class Smoother {
public:
    virtual ~Smoother() = default;
    // Whether a sweep writes the iterate into another vector (spare()): the iterate then
    // moves between x and it.
    virtual bool moves_iterate() const { return false; }
    // The vector a sweep writes into besides x, or x itself.
    virtual T* spare(T* x) const { return x; }
    // `sweeps` sweeps of the iterate in x (forward or backward colour order); returns where it
    // ends: x, or `spare`.
    virtual T* smooth(Level<T>& level, const T* b, T* x, T* spare, int sweeps,
                      bool forward) const = 0;
    // The bytes a sweep must move at least, given one pass over the level's matrix (`matrix`
    // bytes) and `n` points of `value` bytes.
    virtual double sweep_bytes(double matrix, double n, double value) const = 0;
};

// What a level's smoother takes of the level's layout: its colours (2, or 2^dimension where
// couplings are not along the axes), what turns a colour of the whole box into the window's
// (the parity bits of the window's first point), the axes the level is split along over ranks,
// the axes whose parity the colours take slowest (MultigridParameters::slow_colour_axes,
// resolved), this rank's points in the window (over ranks, in its coordinates), and whether
// its vectors are zeroed once (over ranks: halo points are read before any kernel writes them).
struct SmootherSetup {
    int colours = 2;
    int colour_flip = 0;
    unsigned split_axes = 0;
    unsigned slow_axes = 0;
    std::optional<Box> own;
    bool zeroed = false;
};

// One kind of smoother: its name in describe() ("red-black Gauss-Seidel" or "Chebyshev"),
// whether it reads the level's 1 / a_ii, and what makes a level's (`level` with its operator, box
// and shape set; `inverse_diagonal` the level's 1 / a_ii on its window on the back-end where the
// kind reads it, else empty).
template <typename T>
struct SmootherKind {
    using Make = std::unique_ptr<Smoother<T>> (*)(std::shared_ptr<const Backend> backend,
                                                  const Level<T>& level, Array<T> inverse_diagonal,
                                                  const SmootherSetup& setup);
    const char* words;
    bool reads_inverse_diagonal;
    Make make;
};

// The kind MultigridParameters::smoother names: the one place the choice is made.
template <typename T>
SmootherKind<T> smoother_kind(MultigridSmoother smoother);

// The two implementations (red_black_smoother.cpp, chebyshev_smoother.cpp).
template <typename T>
SmootherKind<T> red_black_gauss_seidel();
template <typename T>
SmootherKind<T> chebyshev();

}  // namespace simrun::solvers::multigrid
