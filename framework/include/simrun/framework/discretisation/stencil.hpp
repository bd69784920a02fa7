#pragma once
// Stencil coefficients of second-order central differences, one small host-device function per
// operator: used by DIA/ELL assembly, by matrix-free paths and by the tests.
#include "simrun/solvers/base/host_device.hpp"

namespace simrun::framework {

// Coefficients of one node's stencil: the node itself and its two neighbours along each axis
// (minus = i-1, plus = i+1). Axes beyond the grid's dimension have zero coefficients.
struct StencilCoefficients {
    double centre = 0.0;
    double minus[3] = {0.0, 0.0, 0.0};
    double plus[3] = {0.0, 0.0, 0.0};
};

// alpha * lap(u) at a node: alpha (u_{i-1} - 2 u_i + u_{i+1}) / h^2 summed over the axes.
// spacing[a] is the node distance along axis a; dimension is 2 or 3.
SIMRUN_HOST_DEVICE inline StencilCoefficients diffusion_stencil(double alpha, const double* spacing,
                                                                int dimension) {
    StencilCoefficients s;
    for (int a = 0; a < dimension; ++a) {
        const double w = alpha / (spacing[a] * spacing[a]);
        s.minus[a] = w;
        s.plus[a] = w;
        s.centre -= 2.0 * w;
    }
    return s;
}

}  // namespace simrun::framework
