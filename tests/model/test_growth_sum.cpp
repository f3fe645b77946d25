// NEST's Gaussian growth curve integrated as NEST does (forward Euler at the resolution):
// the closed sum gaussian_growth_sum gives agrees with the step-by-step sum over stretches
// from one step to a simulated minute, from any calcium, above and below the set point.
#include "dnnc/model/structure.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dnnc::model;

namespace {
double stepwise(const growth_curve& c, double ca, std::int64_t steps, double dt, double tau) {
    const double xi = (c.eta + c.eps) / 2, zeta = (c.eta - c.eps) / (2 * std::sqrt(std::log(2.0)));
    double sum = 0;
    for (std::int64_t j = 0; j < steps; ++j) {
        ca -= ca / tau * dt;
        const double x = (ca - xi) / zeta;
        sum += 2.0 * std::exp(-x * x) - 1.0;
    }
    return sum;
}
}  // namespace

TEST_CASE("the Gaussian growth sum equals NEST's step-by-step Euler sum over short and long stretches") {
    growth_curve curve;
    for (const auto& [eta, eps] : {std::pair{0.0, 0.05}, std::pair{0.0, 0.2}, std::pair{0.1, 0.7}}) {
        curve.eta = eta;
        curve.eps = eps;
        for (const double tau : {10000.0, 1000.0, 50.0})
            for (const double ca : {0.0, 0.01, 0.05, 0.2, 0.9, 3.0})
                for (const std::int64_t steps : {1, 63, 64, 65, 500, 2000, 100000, 600000}) {
                    INFO("eta " << eta << " eps " << eps << " tau " << tau << " ca " << ca << " steps " << steps);
                    const double expected = stepwise(curve, ca, steps, 0.1, tau);
                    const double got = gaussian_growth_sum(curve, ca, steps, 0.1, tau);
                    // Rounding of the step-by-step sum itself grows with its length.
                    REQUIRE(std::abs(got - expected) <= 1e-11 * static_cast<double>(steps) + 1e-12);
                }
    }
}
