#pragma once
// A reference solution for NEST's aeif_cond_exp (alpha = false) and aeif_cond_alpha (alpha =
// true), NEST's defaults unless set: RK4 in double with steps of h / substeps, shortened to
// `stiff` of the exponential term's time constant C_m / (g_L e^{(V - V_th) / Delta_T}) where
// that is shorter; a step that ends at or above V_peak (V_th when Delta_T = 0) is cut where it
// reaches it (60 halvings), then V <- V_reset, w <- w + b and the rest of the tick runs
// refractory for t_ref > 0, as NEST's update. aeif_cond_alpha's synaptic sums join dg_ex and
// dg_in scaled by e / tau_syn; aeif_cond_exp's join g_ex and g_in. And 1 s of one neuron of
// the model against it, with input spikes (input_spikes.hpp).
#include "dnnc/sim/engine.hpp"

#include "input_spikes.hpp"
#include "network_of.hpp"
#include "reference_rk4.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace dnnc::test {

template <bool alpha>
struct aeif_reference {
    static constexpr int n = alpha ? 6 : 4;
    double g_l = 30, c_m = 281, e_l = -70.6, e_ex = 0, e_in = -85, tau_ex = 0.2, tau_in = 2, v_th = -50.4, v_reset = -60;
    double delta_t = 2, tau_w = 144, a = 4, b = 80.5, v_peak = 0, i_e = 0, h = 0.1, stiff = 0.01;
    int substeps = 400, refractory_ticks = 0;
    double y[n] = {-70.6};  // V_m, g_ex, g_in, w (, dg_ex, dg_in)
    int r = 0;
    void derivative(const double* x, double* f) const {
        const double at = r > 0 ? v_reset : std::min(x[0], v_peak);
        const double spike = delta_t == 0 ? 0 : g_l * delta_t * std::exp((at - v_th) / delta_t);
        f[0] = r > 0 ? 0.0 : (-g_l * (at - e_l) + spike - x[1] * (at - e_ex) - x[2] * (at - e_in) - x[3] + i_e) / c_m;
        f[1] = -x[1] / tau_ex;
        f[2] = -x[2] / tau_in;
        f[3] = (a * (at - e_l) - x[3]) / tau_w;
        if constexpr (alpha) {
            f[1] += x[4];
            f[2] += x[5];
            f[4] = -x[4] / tau_ex;
            f[5] = -x[5] / tau_in;
        }
    }
    void rk4(const double* from, double s, double* to) const {
        rk4_step<n>(from, s, to, [this](const double* x, double* f) { derivative(x, f); });
    }
    // One tick with synaptic sums (nS, the inhibitory one negative); true on a spike.
    bool step(double excitatory, double inhibitory) {
        const double spike_at = delta_t > 0 ? v_peak : v_th;
        bool spiked = false, refractory_before = r > 0;
        for (int substep = 0; substep < substeps; ++substep) {
            for (double left = h / substeps; left > 0;) {
                double s = left, next[n];
                if (r == 0 && delta_t > 0)
                    s = std::min(left, stiff * c_m / (g_l * std::exp((std::min(y[0], v_peak) - v_th) / delta_t)));
                rk4(y, s, next);
                if (r == 0 && next[0] >= spike_at) {
                    double before = 0, after = s;
                    for (int k = 0; k < 60; ++k) {
                        const double middle = (before + after) / 2;
                        rk4(y, middle, next);
                        (next[0] < spike_at ? before : after) = middle;
                    }
                    s = after;
                    rk4(y, s, next);
                    next[0] = v_reset;
                    next[3] += b;
                    spiked = true;
                    r = refractory_ticks > 0 ? refractory_ticks + 1 : 0;  // NEST's count, down once at the tick's end
                } else if (r > 0) {
                    next[0] = v_reset;
                }
                std::copy(next, next + n, y);
                left -= s;
            }
        }
        if (r > 0 && (refractory_before || spiked)) --r;
        if constexpr (alpha) {
            y[4] += excitatory * std::exp(1.0) / tau_ex;
            y[5] -= inhibitory * std::exp(1.0) / tau_in;
        } else {
            y[1] += excitatory;
            y[2] -= inhibitory;
        }
        return spiked;
    }
};

struct aeif_result {
    double worst_v = 0, worst_w = 0;  // mV over the ticks both are below V_th; pA over all
    std::vector<int> spikes, expected;
};

// 1 s of one neuron of the reference's model (attributes `params`) with input spikes through
// w_ex and w_in against `r`, which holds the same parameters.
template <bool alpha>
aeif_result run_aeif_against(const std::string& params, aeif_reference<alpha> r, double w_ex, double w_in) {
    const int ticks = 10000;
    const std::string model = alpha ? "aeif_cond_alpha" : "aeif_cond_exp";
    const auto net = network_of("<neuron id=\"e\"/><neuron id=\"i\"/><neuron id=\"n\" model=\"" + model + "\" " + params +
                                "/><synapse from=\"e\" to=\"n\" weight=\"" + std::to_string(w_ex) +
                                "\"/><synapse from=\"i\" to=\"n\" weight=\"" + std::to_string(w_in) + "\"/>");
    sim::engine e(sim::whole_network(net));
    std::vector<double> ex(ticks + 1), in(ticks + 1);
    for (const auto& [source, t] : spike_trains(ticks, 13)) {
        e.add_input(static_cast<sim::global_index>(source), t, 1.0f);
        (source == 0 ? ex : in)[static_cast<std::size_t>(t) + 1] += source == 0 ? w_ex : w_in;  // arrives a tick later
    }
    aeif_result out;
    for (int t = 0; t < ticks; ++t) {
        e.compute();
        if (e.output(2) == 1.0f) out.spikes.push_back(t);
        if (r.step(ex[static_cast<std::size_t>(t)], in[static_cast<std::size_t>(t)])) out.expected.push_back(t);
        const auto s = e.capture()[2].variables;  // V_m, g_ex, g_in, w, (dg_ex, dg_in,) refractory
        REQUIRE(s.size() == static_cast<std::size_t>(aeif_reference<alpha>::n + 1));
        if (double{s[0]} < r.v_th && r.y[0] < r.v_th) out.worst_v = std::max(out.worst_v, std::abs(double{s[0]} - r.y[0]));
        out.worst_w = std::max(out.worst_w, std::abs(double{s[3]} - r.y[3]));
        for (int j : {1, 2, 4, 5})
            if (j < aeif_reference<alpha>::n) CHECK(double{s[static_cast<std::size_t>(j)]} == Approx(r.y[j]).margin(1e-4));
        CHECK(s.back() == static_cast<float>(r.r));
    }
    return out;
}

// The runs both aeif models are checked by (within 1e-3 mV below V_th, spike for spike; the
// upswing of a spike moves V at up to 10^10 mV/ms, where no two integrations agree to 1e-3 mV):
// subthreshold, firing and adapting, refractory with another adaptation (and, with `slower`,
// these synaptic time constants), Delta_T = 0; `weights` gives each its (w_ex, w_in).
template <bool alpha>
void check_aeif_traces(const std::vector<std::pair<double, double>>& weights, const std::string& slower = "") {
    REQUIRE(weights.size() == 4);
    auto firing = [](const aeif_result& out, std::size_t at_least) {
        CHECK(out.expected.size() > at_least);
        CHECK(out.spikes == out.expected);
        CHECK(out.worst_v < 1e-3);
        CHECK(out.worst_w < 1e-2);
    };
    SECTION("subthreshold, NEST's defaults") {
        aeif_reference<alpha> r;
        r.i_e = 300;
        const auto out = run_aeif_against("I_e=\"300\"", r, weights[0].first, weights[0].second);
        CHECK(out.expected.empty());
        CHECK(out.spikes.empty());
        CHECK(out.worst_v < 1e-3);
        CHECK(out.worst_w < 1e-3);
    }
    SECTION("firing and adapting, NEST's defaults (t_ref 0)") {
        aeif_reference<alpha> r;
        r.i_e = 900;
        firing(run_aeif_against("I_e=\"900\"", r, weights[1].first, weights[1].second), 10);
    }
    SECTION("t_ref 2 ms, a = 2 nS, b = 60 pA, tau_w = 100 ms " + slower) {
        aeif_reference<alpha> r;
        r.i_e = 1200;
        r.refractory_ticks = 20;
        r.a = 2;
        r.b = 60;
        r.tau_w = 100;
        if (!slower.empty()) {
            r.tau_ex = 1;
            r.tau_in = 3;
        }
        const std::string synapses = slower.empty() ? "" : " tau_syn_ex=\"1\" tau_syn_in=\"3\"";
        firing(run_aeif_against("I_e=\"1200\" t_ref=\"2\" a=\"2\" b=\"60\" tau_w=\"100\"" + synapses, r, weights[2].first, weights[2].second), 20);
    }
    SECTION("Delta_T = 0: a plain integrate-and-fire threshold at V_th") {
        aeif_reference<alpha> r;
        r.i_e = 900;
        r.delta_t = 0;
        r.refractory_ticks = 20;
        firing(run_aeif_against("I_e=\"900\" Delta_T=\"0\" t_ref=\"2\"", r, weights[3].first, weights[3].second), 10);
    }
}

}  // namespace dnnc::test
