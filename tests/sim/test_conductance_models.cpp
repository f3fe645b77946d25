// NEST's conductance-based models (iaf_cond_exp, iaf_cond_alpha, aeif_cond_exp), integrated
// with RK4 (substeps_of(dt, max_cond_substep_ms) per tick): membrane traces and spike times against a reference
// solution of the same equations and tick semantics with far finer steps in double, and
// snapshots.
#include "dnnc/sim/engine.hpp"
#include "dnnc/protocol/xml.hpp"

#include "aeif_reference.hpp"
#include "reference_rk4.hpp"
#include "input_spikes.hpp"
#include "conductance_checks.hpp"
#include "network_of.hpp"
#include "restore_check.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>

using namespace dnnc;
using namespace dnnc::sim;
using dnnc::test::network_of;
using dnnc::test::spike_trains;

namespace {

// iaf_cond_exp (NEST's iaf_cond_exp_dynamics and update) with RK4 steps of h / substeps, in
// double; NEST's defaults unless set.
struct cond_exp_reference {
    double g_l = 16.6667, c_m = 250, e_l = -70, e_ex = 0, e_in = -85, tau_ex = 0.2, tau_in = 2, v_th = -55, v_reset = -60;
    double i_e = 0, h = 0.1;
    int substeps = 1000, refractory_ticks = 20;
    double v = -70, g_ex = 0, g_in = 0;
    int r = 0;
    void derivative(const double* y, double* f) const {
        const double at = r > 0 ? v_reset : std::min(y[0], v_th);
        f[0] = r > 0 ? 0.0 : (-g_l * (at - e_l) + i_e - y[1] * (at - e_ex) - y[2] * (at - e_in)) / c_m;
        f[1] = -y[1] / tau_ex;
        f[2] = -y[2] / tau_in;
    }
    // One tick with synaptic sums (nS, the inhibitory one negative); true on a spike.
    bool step(double excitatory, double inhibitory) {
        double y[3] = {v, g_ex, g_in};
        for (int n = 0; n < substeps; ++n) test::rk4_step<3>(y, h / substeps, y, [&](const double* x, double* f) { derivative(x, f); });
        v = y[0];
        g_ex = y[1] + excitatory;
        g_in = y[2] - inhibitory;
        if (r > 0) {
            --r;
            v = v_reset;
            return false;
        }
        if (v < v_th) return false;
        r = refractory_ticks;
        v = v_reset;
        return true;
    }
};

struct trace_result {
    double worst = 0;  // mV, over the ticks neither is at a spike or refractory
    std::vector<int> spikes, expected;
};

trace_result run_against_reference(double i_e, double w_ex, double w_in, int ticks) {
    const auto net = network_of("<neuron id=\"e\"/><neuron id=\"i\"/><neuron id=\"n\" model=\"iaf_cond_exp\" I_e=\"" +
                                std::to_string(i_e) + "\"/><synapse from=\"e\" to=\"n\" weight=\"" + std::to_string(w_ex) +
                                "\"/><synapse from=\"i\" to=\"n\" weight=\"" + std::to_string(w_in) + "\"/>");
    engine e(whole_network(net));
    const auto trains = spike_trains(ticks, 7);
    std::vector<double> ex(static_cast<std::size_t>(ticks) + 1), in(static_cast<std::size_t>(ticks) + 1);
    for (const auto& [source, t] : trains) {
        e.add_input(static_cast<global_index>(source), t, 1.0f);
        (source == 0 ? ex : in)[static_cast<std::size_t>(t) + 1] += source == 0 ? w_ex : w_in;  // arrives a tick later
    }
    cond_exp_reference r;
    r.i_e = i_e;
    trace_result out;
    for (int t = 0; t < ticks; ++t) {
        e.compute();
        if (e.output(2) == 1.0f) out.spikes.push_back(t);
        if (r.step(ex[static_cast<std::size_t>(t)], in[static_cast<std::size_t>(t)])) out.expected.push_back(t);
        const auto s = e.capture()[2].variables;  // V_m, g_ex, g_in, refractory
        REQUIRE(s.size() == 4);
        if (r.r == 0 && s[3] == 0.0f) out.worst = std::max(out.worst, std::abs(double{s[0]} - r.v));
        CHECK(double{s[1]} == Approx(r.g_ex).margin(1e-4));
        CHECK(double{s[2]} == Approx(r.g_in).margin(1e-4));
    }
    return out;
}
}  // namespace

TEST_CASE("iaf_cond_exp: a 1 s subthreshold trace with input spikes stays within 1e-3 mV of the reference") {
    const auto r = run_against_reference(150, 3, -6, 10000);
    CHECK(r.expected.empty());
    CHECK(r.spikes.empty());
    CHECK(r.worst < 1e-3);
}

TEST_CASE("iaf_cond_exp: a firing neuron spikes at the reference's ticks for 1 s, its trace within 1e-3 mV between") {
    const auto r = run_against_reference(300, 4, -8, 10000);
    CHECK(r.expected.size() > 10);
    CHECK(r.spikes == r.expected);
    CHECK(r.worst < 1e-3);
}

TEST_CASE("iaf_cond_exp: conductances in nS, g_in holds the inhibitory weight's magnitude") {
    const auto net = network_of(R"(<neuron id="src"/><neuron id="n" model="iaf_cond_exp" tau_syn_in="5"/>
        <synapse from="src" to="n" weight="7"/><synapse from="src" to="n" weight="-3"/>)");
    engine e(whole_network(net));
    e.add_input(0, 0, 1.0f);
    e.compute();
    e.compute();  // tick 1: the conductances jump after the integration
    auto s = e.capture()[1].variables;
    CHECK(s[0] == -70.0f);
    CHECK(s[1] == 7.0f);
    CHECK(s[2] == 3.0f);
    for (int t = 0; t < 10; ++t) e.compute();
    s = e.capture()[1].variables;
    CHECK(double{s[1]} == Approx(7 * std::exp(-1.0 / 0.2)).epsilon(1e-4));
    CHECK(double{s[2]} == Approx(3 * std::exp(-1.0 / 5)).epsilon(1e-4));
}

TEST_CASE("iaf_cond_exp captures and restores bit for bit") {
    const auto net = network_of(R"(<population id="c" size="100" model="iaf_cond_exp" I_e="300" seed="1" v-init="-65" v-init-std="5"/>
        <projection from="c[0:80]" to="c" kind="random" p="0.2" weight="2" seed="3"/>
        <projection from="c[80:100]" to="c" kind="random" p="0.2" weight="-8" seed="4" delay="2"/>)");
    CHECK(test::check_restore_continues(net, [](const std::vector<neuron_state>& middle) {
        for (const auto& s : middle) REQUIRE(s.variables.size() == 4u);
    }) > 0);
}

namespace {
// iaf_cond_alpha (NEST's iaf_cond_alpha): as cond_exp_reference with alpha conductances.
struct cond_alpha_reference {
    double g_l = 16.6667, c_m = 250, e_l = -70, e_ex = 0, e_in = -85, tau_ex = 0.2, tau_in = 2, v_th = -55, v_reset = -60;
    double i_e = 0, h = 0.1;
    int substeps = 1000, refractory_ticks = 20;
    double y[5] = {-70, 0, 0, 0, 0};  // V_m, g_ex, g_in, dg_ex, dg_in
    int r = 0;
    void derivative(const double* x, double* f) const {
        const double at = r > 0 ? v_reset : std::min(x[0], v_th);
        f[0] = r > 0 ? 0.0 : (-g_l * (at - e_l) + i_e - x[1] * (at - e_ex) - x[2] * (at - e_in)) / c_m;
        f[1] = x[3] - x[1] / tau_ex;
        f[2] = x[4] - x[2] / tau_in;
        f[3] = -x[3] / tau_ex;
        f[4] = -x[4] / tau_in;
    }
    bool step(double excitatory, double inhibitory) {
        for (int n = 0; n < substeps; ++n) test::rk4_step<5>(y, h / substeps, y, [&](const double* x, double* f) { derivative(x, f); });
        y[3] += excitatory * std::exp(1.0) / tau_ex;
        y[4] -= inhibitory * std::exp(1.0) / tau_in;
        if (r > 0) {
            --r;
            y[0] = v_reset;
            return false;
        }
        if (y[0] < v_th) return false;
        r = refractory_ticks;
        y[0] = v_reset;
        return true;
    }
};
}  // namespace

TEST_CASE("iaf_cond_alpha: 1 s traces with input spikes stay within 1e-3 mV of the reference, spike for spike") {
    for (const double i_e : {150.0, 300.0}) {
        INFO("I_e " << i_e);
        const double w_ex = 2, w_in = -4;
        const auto net = network_of("<neuron id=\"e\"/><neuron id=\"i\"/><neuron id=\"n\" model=\"iaf_cond_alpha\" I_e=\"" +
                                    std::to_string(i_e) + "\"/><synapse from=\"e\" to=\"n\" weight=\"2\"/>" +
                                    "<synapse from=\"i\" to=\"n\" weight=\"-4\"/>");
        engine e(whole_network(net));
        const int ticks = 10000;
        std::vector<double> ex(ticks + 1), in(ticks + 1);
        for (const auto& [source, t] : spike_trains(ticks, 11)) {
            e.add_input(static_cast<global_index>(source), t, 1.0f);
            (source == 0 ? ex : in)[static_cast<std::size_t>(t) + 1] += source == 0 ? w_ex : w_in;
        }
        cond_alpha_reference r;
        r.i_e = i_e;
        std::vector<int> spikes, expected;
        double worst = 0;
        for (int t = 0; t < ticks; ++t) {
            e.compute();
            if (e.output(2) == 1.0f) spikes.push_back(t);
            if (r.step(ex[static_cast<std::size_t>(t)], in[static_cast<std::size_t>(t)])) expected.push_back(t);
            const auto s = e.capture()[2].variables;  // V_m, g_ex, g_in, dg_ex, dg_in, refractory
            REQUIRE(s.size() == 6);
            if (r.r == 0 && s[5] == 0.0f) worst = std::max(worst, std::abs(double{s[0]} - r.y[0]));
            CHECK(double{s[1]} == Approx(r.y[1]).margin(1e-4));
            CHECK(double{s[2]} == Approx(r.y[2]).margin(1e-4));
        }
        CHECK(spikes == expected);
        if (i_e > 200) CHECK(expected.size() > 5);
        CHECK(worst < 1e-3);
    }
}

TEST_CASE("iaf_cond_alpha: a weight of w nS gives a conductance that peaks at w, tau_syn after the spike") {
    test::check_alpha_conductance_peaks("iaf_cond_alpha");
}

TEST_CASE("iaf_cond_alpha captures and restores bit for bit") {
    const auto net = network_of(R"(<population id="c" size="100" model="iaf_cond_alpha" I_e="300" seed="1" v-init="-65" v-init-std="5"/>
        <projection from="c[0:80]" to="c" kind="random" p="0.2" weight="1" seed="3"/>
        <projection from="c[80:100]" to="c" kind="random" p="0.2" weight="-4" seed="4" delay="2"/>)");
    CHECK(test::check_restore_continues(net, [](const std::vector<neuron_state>& middle) {
        for (const auto& s : middle) REQUIRE(s.variables.size() == 6u);
    }) > 0);
}

TEST_CASE("aeif_cond_exp: 1 s traces with input spikes stay within 1e-3 mV of the reference below V_th, spike for spike") {
    test::check_aeif_traces<false>({{3, -6}, {4, -8}, {3, -10}, {4, -8}});
}

TEST_CASE("aeif_cond_exp: a spike resets V_m to V_reset and adds b to w, and the conductances are in nS") {
    const auto net = network_of(R"(<neuron id="src"/><neuron id="n" model="aeif_cond_exp" I_e="2000" b="50" a="0"/>
        <synapse from="src" to="n" weight="7"/><synapse from="src" to="n" weight="-3"/>)");
    engine e(whole_network(net));
    e.add_input(0, 0, 1.0f);
    e.compute();
    e.compute();
    auto s = e.capture()[1].variables;
    CHECK(s[1] == 7.0f);
    CHECK(s[2] == 3.0f);
    int t = 2;
    for (; e.output(1) != 1.0f && t < 1000; ++t) e.compute();
    REQUIRE(t < 1000);
    s = e.capture()[1].variables;
    CHECK(s[0] < -55.0f);           // reset to -60 within the tick, then rising with I_e
    CHECK(s[3] == Approx(50).epsilon(1e-3));  // a = 0: w only jumps by b and decays with tau_w
}

TEST_CASE("aeif_cond_exp captures and restores bit for bit") {
    const auto net = network_of(R"(<population id="c" size="100" model="aeif_cond_exp" I_e="700" t_ref="1" seed="1" v-init="-65" v-init-std="5"/>
        <projection from="c[0:80]" to="c" kind="random" p="0.2" weight="2" seed="3"/>
        <projection from="c[80:100]" to="c" kind="random" p="0.2" weight="-8" seed="4" delay="2"/>)");
    CHECK(test::check_restore_continues(net, [](const std::vector<neuron_state>& middle) {
        for (const auto& s : middle) REQUIRE(s.variables.size() == 5u);
    }) > 0);
}
