#pragma once
// Checks the alpha-conductance models share: a spike through a weight of w nS gives a
// conductance that peaks at w (the excitatory and inhibitory one alike), tau_syn after it.
#include "dnnc/sim/engine.hpp"

#include "network_of.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace dnnc::test {

inline void check_alpha_conductance_peaks(const std::string& model) {
    const auto net = network_of(R"(<neuron id="src"/><neuron id="n" model=")" + model + R"(" tau_syn_ex="1" tau_syn_in="2"/>
        <synapse from="src" to="n" weight="6"/><synapse from="src" to="n" weight="-3"/>)");
    sim::engine e(sim::whole_network(net));
    e.add_input(0, 0, 1.0f);
    for (int t = 0; t < 12; ++t) e.compute();  // the conductances have grown for 10 steps (1 ms)
    auto s = e.capture()[1].variables;
    CHECK(double{s[1]} == Approx(6).epsilon(1e-4));
    for (int t = 0; t < 10; ++t) e.compute();
    s = e.capture()[1].variables;
    CHECK(double{s[2]} == Approx(3).epsilon(1e-4));
}

}  // namespace dnnc::test
