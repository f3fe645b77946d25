#include "dnnc/model/structure.hpp"

#include "dnnc/model/resolve.hpp"

#include <algorithm>
#include <cmath>

namespace dnnc::model {

std::uint16_t resolved_structure::shortest_delay() const {
    std::uint16_t shortest = 65535;
    for (const auto& p : pairings) shortest = std::min(shortest, p.delay);
    return shortest;
}

std::uint16_t resolved_structure::longest_delay() const {
    std::uint16_t longest = 1;
    for (const auto& p : pairings) longest = std::max(longest, p.delay);
    return longest;
}

double gaussian_growth_sum(const growth_curve& curve, double ca, std::int64_t steps, double dt, double tau_ca) {
    const double xi = (curve.eta + curve.eps) / 2, zeta = (curve.eta - curve.eps) / (2 * std::sqrt(std::log(2.0)));
    auto g = [&](double c) {
        const double x = (c - xi) / zeta;
        return 2.0 * std::exp(-x * x) - 1.0;
    };
    constexpr std::int64_t stepwise = 64;
    if (steps <= stepwise) {
        double sum = 0;
        for (std::int64_t j = 0; j < steps; ++j) {
            ca -= ca / tau_ca * dt;
            sum += g(ca);
        }
        return sum;
    }
    // f(s) = g(ca q^s) on [0, steps]; sum_{j=1..n} f(j) = integral + (f(n) - f(0)) / 2 + (f'(n) - f'(0)) / 12 + ...,
    // the next term being of order log(q)^3, below 1e-14 of the sum for any tau_Ca >= 1 ms.
    const double log_q = std::log1p(-dt / tau_ca);
    const double n = static_cast<double>(steps);
    const double end = ca * std::exp(log_q * n);
    auto slope = [&](double c) {  // f'(s) at the s where the calcium is c
        const double x = (c - xi) / zeta;
        return 2.0 * std::exp(-x * x) * (-2.0 * x / zeta) * c * log_q;
    };
    // Pieces across which the Gaussian's argument moves by at most 1/16 and the calcium decays
    // by at most e^(-1/16): 4 Gauss-Legendre points integrate each to far below rounding.
    const auto pieces = static_cast<std::int64_t>(std::ceil(std::abs(ca - end) / std::abs(zeta) * 16 + std::abs(log_q) * n * 16)) + 1;
    static constexpr double nodes[4] = {-0.8611363115940526, -0.3399810435848563, 0.3399810435848563, 0.8611363115940526};
    static constexpr double weights[4] = {0.3478548451374538, 0.6521451548625461, 0.6521451548625461, 0.3478548451374538};
    const double width = n / static_cast<double>(pieces);
    double integral = 0;
    for (std::int64_t p = 0; p < pieces; ++p) {
        const double middle = (static_cast<double>(p) + 0.5) * width;
        double piece = 0;
        for (int k = 0; k < 4; ++k) piece += weights[k] * g(ca * std::exp(log_q * (middle + nodes[k] * width / 2)));
        integral += piece * width / 2;
    }
    return integral + (g(end) - g(ca)) / 2 + (slope(end) - slope(ca)) / 12;
}

std::optional<resolved_structure> resolve_structure(const network& net) {
    if (!net.structural) return std::nullopt;
    resolved_structure out;
    out.dt = net.dt;
    out.seed = net.structural->seed;
    out.interval = std::max<std::int64_t>(1, ticks_of_ms(net.structural->update_interval_ms, net.dt));
    auto kind_of = [&](const std::string& name) {
        const auto at = std::find(out.element_names.begin(), out.element_names.end(), name);
        if (at != out.element_names.end()) return static_cast<std::uint32_t>(at - out.element_names.begin());
        out.element_names.push_back(name);
        return static_cast<std::uint32_t>(out.element_names.size() - 1);
    };
    const symbol_table symbols(net);
    for (const auto& p : net.populations) {
        if (!p.synaptic_elements.empty()) {
            structure_group g;
            g.population = p.id;
            for (const auto& x : symbols.extents(p.id, p.where)) {
                g.runs.emplace_back(static_cast<std::uint32_t>(x.first), static_cast<std::uint32_t>(x.size));
                g.size += static_cast<std::uint32_t>(x.size);
            }
            g.tau_ca = p.tau_ca;
            g.beta_ca = p.beta_ca;
            for (const auto& e : p.synaptic_elements) {
                g.kinds.push_back(kind_of(e.name));
                g.curves.push_back(e.curve);
            }
            out.groups.push_back(std::move(g));
        }
    }
    for (const auto& s : net.structural->synapses)
        out.pairings.push_back({s.id, kind_of(s.pre_element), kind_of(s.post_element), static_cast<float>(s.weight),
                                static_cast<std::uint16_t>(std::clamp<std::int64_t>(delay_ticks(s, net.dt), 1, 65535))});
    return out;
}

}  // namespace dnnc::model
