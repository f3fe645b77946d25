// NEST's aeif_cond_alpha, integrated as aeif_cond_exp (RK4 substeps, shortened where the
// exponential term is steep, spikes found within the tick): membrane traces, w and spike
// times against a reference solution of the same equations with far finer steps in double;
// the alpha conductances; snapshots.
#include "dnnc/sim/engine.hpp"

#include "aeif_reference.hpp"
#include "conductance_checks.hpp"
#include "network_of.hpp"
#include "restore_check.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>

using namespace dnnc;
using namespace dnnc::sim;
using dnnc::test::network_of;

TEST_CASE("aeif_cond_alpha: 1 s traces with input spikes stay within 1e-3 mV of the reference below V_th, spike for spike") {
    test::check_aeif_traces<true>({{2, -4}, {2, -4}, {1, -2}, {2, -4}}, "and slower synapses");
}

TEST_CASE("aeif_cond_alpha: a weight of w nS gives a conductance that peaks at w, tau_syn after the spike") {
    test::check_alpha_conductance_peaks("aeif_cond_alpha");
}

TEST_CASE("aeif_cond_alpha: a spike resets V_m to V_reset and adds b to w") {
    const auto net = network_of(R"(<neuron id="n" model="aeif_cond_alpha" I_e="2000" b="50" a="0"/>)");
    engine e(whole_network(net));
    int t = 0;
    for (; e.output(0) != 1.0f && t < 1000; ++t) e.compute();
    REQUIRE(t < 1000);
    const auto s = e.capture()[0].variables;
    CHECK(s[0] < -55.0f);                     // reset to -60 within the tick, then rising with I_e
    CHECK(s[3] == Approx(50).epsilon(1e-3));  // a = 0: w only jumps by b and decays with tau_w
}

TEST_CASE("aeif_cond_alpha captures and restores bit for bit") {
    const auto net = network_of(R"(<population id="c" size="100" model="aeif_cond_alpha" I_e="700" t_ref="1" seed="1" v-init="-65" v-init-std="5"/>
        <projection from="c[0:80]" to="c" kind="random" p="0.2" weight="1" seed="3"/>
        <projection from="c[80:100]" to="c" kind="random" p="0.2" weight="-4" seed="4" delay="2"/>)");
    CHECK(test::check_restore_continues(net, [](const std::vector<neuron_state>& middle) {
        for (const auto& s : middle) REQUIRE(s.variables.size() == 7u);
    }) > 0);
}
