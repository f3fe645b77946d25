#pragma once
// Structural plasticity resolved against the neuron numbering (model.hpp's
// <structural-plasticity>, <synaptic-element>): what every node's engine needs to keep the
// same picture of every neuron's calcium, synaptic elements and grown synapses.
#include "dnnc/model/model.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dnnc::model {

// A population with synaptic elements: its members, their calcium parameters, and one
// growth curve per element kind it has (kinds index resolved_structure::element_names).
struct structure_group {
    std::string population;
    // Its members' neuron indices: runs (first, count), more than one once the population grew
    // (resolve.hpp, member_extent); size members in all.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> runs;
    std::uint32_t size = 0;
    // f(global index) for each member, in member order.
    template <class F>
    void for_each_member(F&& f) const {
        for (const auto& [first, count] : runs)
            for (std::uint32_t i = first; i < first + count; ++i) f(i);
    }
    std::uint32_t first_member() const { return runs.front().first; }
    bool has(double neuron) const {
        for (const auto& [first, count] : runs)
            if (neuron >= first && neuron < static_cast<double>(first) + count) return true;
        return false;
    }
    double tau_ca = 10000, beta_ca = 0.001;
    std::vector<std::uint32_t> kinds;
    std::vector<growth_curve> curves;  // one per kind
};

// A <structural-synapse>: pairs vacant `pre` with vacant `post` elements (kinds) into
// synapses of this weight and delay (ticks).
struct structure_pairing {
    std::string id;
    std::uint32_t pre = 0, post = 0;
    float weight = 1;
    std::uint16_t delay = 1;
};

struct resolved_structure {
    std::vector<std::string> element_names;  // in order of first declaration
    std::vector<structure_group> groups;     // in document order, so ascending by members
    std::vector<structure_pairing> pairings;  // in document order
    std::int64_t interval = 1;  // ticks between structural updates, from tick 0
    std::uint64_t seed = 0;
    double dt = 0.1;
    // The shortest and the longest delay of a grown synapse.
    std::uint16_t shortest_delay() const;
    std::uint16_t longest_delay() const;
};

// NEST's GrowthCurveGaussian::update integrates dz/dt = growth_rate * g(Ca) by forward Euler
// at the resolution dt on a calcium that decays by Euler too, Ca_j = ca (1 - dt/tau_Ca)^j:
// this is its sum g(Ca_1) + ... + g(Ca_steps), g(Ca) = 2 exp(-((Ca - xi) / zeta)^2) - 1
// (the change of z is dt * growth_rate * the sum). Short stretches are summed step by step;
// longer ones by the Euler-Maclaurin formula (Gauss-Legendre on the integral, end and first
// derivative corrections), which agrees with the step-by-step sum to about 1e-12 of it and
// costs a few exp() instead of one a step.
double gaussian_growth_sum(const growth_curve& curve, double ca, std::int64_t steps, double dt, double tau_ca);

// The structural plasticity of a checked network (check.hpp); none without
// <structural-plasticity>.
std::optional<resolved_structure> resolve_structure(const network& net);

}  // namespace dnnc::model
