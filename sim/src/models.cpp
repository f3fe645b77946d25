#include "models.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/core/splitmix64.hpp"

#include <algorithm>
#include <cmath>

namespace dnnc::sim {

namespace {
// The current term of exact integration: tau_x / (tau_x - tau_m) (e^{-dt/tau_x} - e^{-dt/tau_m}),
// and its limit dt/tau e^{-dt/tau} when the time constants are equal.
double current_gain(double dt, double tau_m, double tau_x) {
    if (std::abs(tau_x - tau_m) < 1e-12 * tau_m) return dt / tau_m * std::exp(-dt / tau_m);
    return tau_x / (tau_x - tau_m) * (std::exp(-dt / tau_x) - std::exp(-dt / tau_m));
}

// NEST's P21: tau_x tau_m / (C_m (tau_m - tau_x)) (e^{-h/tau_m} - e^{-h/tau_x}), written with
// expm1 so that it stays accurate as tau_x nears tau_m, where it tends to h/C_m e^{-h/tau_m}.
double psc_gain(double h, double c_m, double tau_m, double tau_x) {
    const double rate_gap = 1.0 / tau_x - 1.0 / tau_m;
    if (rate_gap == 0) return h / c_m * std::exp(-h / tau_m);
    return -std::exp(-h / tau_m) * std::expm1(-h * rate_gap) / (c_m * rate_gap);
}

// NEST's P31 of iaf_psc_alpha, the potential after h that a unit dI (I = 0) brings:
// 1/C_m int_0^h e^{-(h-s)/tau_m} s e^{-s/tau_x} ds = h^2/C_m e^{-h/tau_m} (1 - e^{-x} (1 + x)) / x^2
// with x = h (1/tau_x - 1/tau_m); a series where x is small, so that it stays accurate as
// tau_x nears tau_m.
double alpha_gain(double h, double c_m, double tau_m, double tau_x) {
    const double x = h * (1.0 / tau_x - 1.0 / tau_m);
    // (1 - e^{-x} (1 + x)) / x^2, which tends to 1/2 as x -> 0
    const double shape = std::abs(x) < 1e-3 ? 0.5 - x * (1.0 / 3 - x * (1.0 / 8 - x / 30))
                                            : (-std::expm1(-x) - x * std::exp(-x)) / (x * x);
    return h * h / c_m * std::exp(-h / tau_m) * shape;
}
}  // namespace

int substeps_of(double dt, double longest_ms) {
    return std::max(1, static_cast<int>(std::ceil(dt / longest_ms - 1e-9)));
}

model_coefficients coefficients_of(const model::neuron_params& p, double dt) {
    model_coefficients c;
    c.model = p.model;
    c.bias = static_cast<float>(p.bias);
    c.threshold = static_cast<float>(p.threshold);
    if (p.model == model::neuron_model::lif) {
        c.v_rest = static_cast<float>(p.v_rest);
        c.v_reset = static_cast<float>(p.v_reset);
        c.v_th = static_cast<float>(p.v_th);
        c.a_m = static_cast<float>(std::exp(-p.dt / p.tau_m));
        c.a_e = static_cast<float>(std::exp(-p.dt / p.tau_e));
        c.a_i = static_cast<float>(std::exp(-p.dt / p.tau_i));
        c.c_e = static_cast<float>(current_gain(p.dt, p.tau_m, p.tau_e));
        c.c_i = static_cast<float>(current_gain(p.dt, p.tau_m, p.tau_i));
        c.hold = static_cast<float>(std::max(p.refractory - 1, 0));
    } else if (p.model == model::neuron_model::izhikevich) {
        const auto& z = p.izhikevich;
        c.h = static_cast<float>(dt);
        c.ha = static_cast<float>(dt * z.a);
        c.b = static_cast<float>(z.b);
        c.d = static_cast<float>(z.d);
        c.v_th = static_cast<float>(z.v_th);
        c.v_min = static_cast<float>(z.v_min);
        c.v_reset = static_cast<float>(z.c);
        c.i_e = static_cast<float>(p.iaf.i_e);
        c.published = !z.consistent_integration;
    } else if (model::has_conductances(p.model)) {
        const auto& n = p.iaf;
        auto& k = c.cond;
        k.g_l = n.g_l;
        k.e_l = n.e_l;
        k.e_ex = n.e_ex;
        k.e_in = n.e_in;
        k.inv_c_m = 1.0 / n.c_m;
        k.inv_tau_ex = 1.0 / n.tau_syn_ex;
        k.inv_tau_in = 1.0 / n.tau_syn_in;
        k.i_e = n.i_e;
        k.v_th = n.v_th;
        k.v_reset = n.v_reset;
        k.substeps = model::is_hh(p.model) ? 1 : substeps_of(dt, max_cond_substep_ms);
        k.sub_h = dt / k.substeps;
        k.jump_ex = std::exp(1.0) / n.tau_syn_ex;
        k.jump_in = std::exp(1.0) / n.tau_syn_in;
        c.theta = static_cast<float>(n.v_th);
        c.v_reset = static_cast<float>(n.v_reset);
        c.refractory_ticks = static_cast<float>(std::llround(n.t_ref / dt));
        if (model::is_hh(p.model)) {
            const auto& x = p.hh;
            c.hh = {x.g_na, x.g_k, x.e_na, x.e_k, x.v_t, hh_rtol, hh_atol, hh_atol_g_ns, hh_atol_m, hh_first_mv, k.sub_h / 4096};
            c.theta = static_cast<float>(x.v_t + 30);
        }
        if (model::is_adex(p.model)) {
            const auto& x = p.adex;
            auto& z = c.adex;
            z.a = x.a;
            z.b = x.b;
            z.inv_tau_w = 1.0 / x.tau_w;
            z.delta_t = x.delta_t;
            z.v_peak = x.v_peak;
            z.spike_at = x.delta_t > 0 ? x.v_peak : n.v_th;
            z.stiff_ms = 0.25 * n.c_m / n.g_l;
            z.shortest_ms = k.sub_h / 1024;
        }
    } else if (model::is_psc(p.model)) {
        const auto& n = p.iaf;
        c.e_l = static_cast<float>(n.e_l);
        c.theta = static_cast<float>(n.v_th - n.e_l);
        c.v_reset = static_cast<float>(n.v_reset);
        c.i_e = static_cast<float>(n.i_e);
        c.refractory_ticks = static_cast<float>(std::llround(n.t_ref / dt));
        c.a_m = static_cast<float>(std::exp(-dt / n.tau_m));
        c.p20 = static_cast<float>(-n.tau_m / n.c_m * std::expm1(-dt / n.tau_m));
        if (model::has_synaptic_currents(p.model)) {
            c.a_e = static_cast<float>(std::exp(-dt / n.tau_syn_ex));
            c.a_i = static_cast<float>(std::exp(-dt / n.tau_syn_in));
            c.c_e = static_cast<float>(psc_gain(dt, n.c_m, n.tau_m, n.tau_syn_ex));
            c.c_i = static_cast<float>(psc_gain(dt, n.c_m, n.tau_m, n.tau_syn_in));
        }
        if (p.model == model::neuron_model::iaf_psc_alpha) {
            c.d_e = static_cast<float>(alpha_gain(dt, n.c_m, n.tau_m, n.tau_syn_ex));
            c.d_i = static_cast<float>(alpha_gain(dt, n.c_m, n.tau_m, n.tau_syn_in));
            c.q_e = static_cast<float>(dt * std::exp(-dt / n.tau_syn_ex));
            c.q_i = static_cast<float>(dt * std::exp(-dt / n.tau_syn_in));
            const double e = std::exp(1.0);
            c.s_e = static_cast<float>(e / n.tau_syn_ex);
            c.s_i = static_cast<float>(e / n.tau_syn_in);
        }
    }
    return c;
}

model_state initial_state(const model::neuron_params& p, std::uint64_t seed, std::int64_t index) {
    model_state s;
    if (!model::is_spiking(p.model)) return s;
    // NEST's izhikevich starts at V_m = -65 mV, U_m = 0 (u-init; kept in ge).
    const double rest = p.model == model::neuron_model::lif          ? p.v_rest
                        : p.model == model::neuron_model::izhikevich ? -65.0
                                                                        : p.iaf.e_l;
    double v = p.v_init.value_or(rest);
    // Keyed by (seed, index): the same initial value wherever the neuron runs.
    auto draws = splitmix64::at(seed, static_cast<std::uint64_t>(index));
    if (p.v_init && p.v_init_max) v = *p.v_init + (*p.v_init_max - *p.v_init) * draws.uniform();
    if (p.v_init_std) v += *p.v_init_std * draws.normal();
    s.v = static_cast<float>(v);
    if (p.model == model::neuron_model::izhikevich) s.ge = static_cast<float>(p.u_init.value_or(0.0));
    if (model::is_hh(p.model)) {
        // The gates at rest, as NEST's hh_cond_exp_traub sets them: its State_ evaluates the
        // rates at V_m itself, not at V_m - V_T as the dynamics do.
        const auto r = hh_rates_at(v);
        s.xe = static_cast<float>(r.alpha_m / (r.alpha_m + r.beta_m));
        s.xi = static_cast<float>(r.alpha_h / (r.alpha_h + r.beta_h));
        s.extra = static_cast<float>(r.alpha_n / (r.alpha_n + r.beta_n));
    }
    return s;
}

namespace {
using step_function = float (*)(const model_coefficients&, float&, float&, float&, float&, float&, float&, float&, float,
                                float, float);

// Inlined into each clone of step_spiking_run, so that each is compiled for its vector width.
template <step_function step, bool external, bool poisson>
__attribute__((always_inline)) inline void step_loop(const model_coefficients& k, std::size_t first, std::size_t last, float* __restrict v,
                      float* __restrict ge, float* __restrict gi, float* __restrict xe, float* __restrict xi,
                      float* __restrict extra, float* __restrict refractory_left,
                      const float* __restrict ext, float* __restrict excitatory, float* __restrict inhibitory,
                      float* __restrict poisson_excitatory, float* __restrict poisson_inhibitory, float* __restrict out) {
    const float no_input = k.bias + 0.0f;  // what bias + ext gives for ext = +0
    for (std::size_t i = first; i < last; ++i) {
        float e = excitatory[i], h = inhibitory[i];
        if constexpr (poisson) {
            e = e + poisson_excitatory[i];
            h = h + poisson_inhibitory[i];
            poisson_excitatory[i] = 0.0f;
            poisson_inhibitory[i] = 0.0f;
        }
        excitatory[i] = 0.0f;
        inhibitory[i] = 0.0f;
        float input = no_input;
        if constexpr (external) input = k.bias + ext[i];
        out[i] = step(k, v[i], ge[i], gi[i], xe[i], xi[i], extra[i], refractory_left[i], input, e, h);
    }
}

template <step_function step>
__attribute__((always_inline)) inline void step_each(const model_coefficients& k, std::size_t first, std::size_t last, float* __restrict v,
                      float* __restrict ge, float* __restrict gi, float* __restrict xe, float* __restrict xi,
                      float* __restrict extra, float* __restrict refractory_left,
                      const float* __restrict ext, float* __restrict excitatory, float* __restrict inhibitory,
                      float* __restrict poisson_excitatory, float* __restrict poisson_inhibitory, float* __restrict out) {
    const bool external = ext != nullptr, poisson = poisson_excitatory != nullptr;
    if (external && poisson)
        step_loop<step, true, true>(k, first, last, v, ge, gi, xe, xi, extra, refractory_left, ext, excitatory, inhibitory,
                                    poisson_excitatory, poisson_inhibitory, out);
    else if (external)
        step_loop<step, true, false>(k, first, last, v, ge, gi, xe, xi, extra, refractory_left, ext, excitatory, inhibitory, nullptr,
                                     nullptr, out);
    else if (poisson)
        step_loop<step, false, true>(k, first, last, v, ge, gi, xe, xi, extra, refractory_left, ext, excitatory, inhibitory,
                                     poisson_excitatory, poisson_inhibitory, out);
    else
        step_loop<step, false, false>(k, first, last, v, ge, gi, xe, xi, extra, refractory_left, ext, excitatory, inhibitory, nullptr,
                                      nullptr, out);
}
}  // namespace

// One clone per vector width, picked at load time by the CPU (same bits: no FMA contraction,
// and every operation is elementwise).
__attribute__((target_clones("avx512f", "avx2", "default")))
void step_spiking_run(const model_coefficients& c, std::size_t first, std::size_t last, float* __restrict v,
                      float* __restrict ge, float* __restrict gi, float* __restrict xe, float* __restrict xi,
                      float* __restrict extra, float* __restrict refractory_left,
                      const float* __restrict ext, float* __restrict excitatory, float* __restrict inhibitory,
                      float* __restrict poisson_excitatory, float* __restrict poisson_inhibitory, float* __restrict out) {
    const model_coefficients k = c;  // a copy: the stores below cannot change it
    switch (k.model) {
    case model::neuron_model::iaf_psc_exp:
        return step_each<step_iaf_psc_exp>(k, first, last, v, ge, gi, xe, xi, extra, refractory_left, ext, excitatory, inhibitory,
                                           poisson_excitatory, poisson_inhibitory, out);
    case model::neuron_model::iaf_psc_alpha:
        return step_each<step_iaf_psc_alpha>(k, first, last, v, ge, gi, xe, xi, extra, refractory_left, ext, excitatory,
                                             inhibitory, poisson_excitatory, poisson_inhibitory, out);
    case model::neuron_model::iaf_psc_delta:
        return step_each<step_iaf_psc_delta>(k, first, last, v, ge, gi, xe, xi, extra, refractory_left, ext, excitatory, inhibitory,
                                             poisson_excitatory, poisson_inhibitory, out);
    case model::neuron_model::iaf_cond_alpha:
        return step_each<step_iaf_cond_alpha>(k, first, last, v, ge, gi, xe, xi, extra, refractory_left, ext, excitatory,
                                              inhibitory, poisson_excitatory, poisson_inhibitory, out);
    case model::neuron_model::aeif_cond_alpha:
        return step_each<step_aeif_cond_alpha>(k, first, last, v, ge, gi, xe, xi, extra, refractory_left, ext, excitatory,
                                               inhibitory, poisson_excitatory, poisson_inhibitory, out);
    case model::neuron_model::hh_cond_exp_traub:
        return step_each<step_hh_cond_exp_traub>(k, first, last, v, ge, gi, xe, xi, extra, refractory_left, ext, excitatory,
                                                 inhibitory, poisson_excitatory, poisson_inhibitory, out);
    case model::neuron_model::aeif_cond_exp:
        return step_each<step_aeif_cond_exp>(k, first, last, v, ge, gi, xe, xi, extra, refractory_left, ext, excitatory, inhibitory,
                                             poisson_excitatory, poisson_inhibitory, out);
    case model::neuron_model::iaf_cond_exp:
        return step_each<step_iaf_cond_exp>(k, first, last, v, ge, gi, xe, xi, extra, refractory_left, ext, excitatory, inhibitory,
                                            poisson_excitatory, poisson_inhibitory, out);
    case model::neuron_model::izhikevich:
        if (k.published)
            return step_each<step_izhikevich_published>(k, first, last, v, ge, gi, xe, xi, extra, refractory_left, ext, excitatory,
                                                        inhibitory, poisson_excitatory, poisson_inhibitory, out);
        return step_each<step_izhikevich>(k, first, last, v, ge, gi, xe, xi, extra, refractory_left, ext, excitatory, inhibitory,
                                          poisson_excitatory, poisson_inhibitory, out);
    default:
        return step_each<step_lif>(k, first, last, v, ge, gi, xe, xi, extra, refractory_left, ext, excitatory, inhibitory,
                                   poisson_excitatory, poisson_inhibitory, out);
    }
}

std::vector<float> variables_of(const model_coefficients& c, const model_state& s) {
    const auto refractory = static_cast<float>(s.refractory_left);
    switch (c.model) {
    case model::neuron_model::lif:
    case model::neuron_model::iaf_cond_exp:
    case model::neuron_model::iaf_psc_exp: return {s.v, s.ge, s.gi, refractory};
    case model::neuron_model::iaf_cond_alpha:
    case model::neuron_model::iaf_psc_alpha: return {s.v, s.ge, s.gi, s.xe, s.xi, refractory};
    case model::neuron_model::aeif_cond_exp: return {s.v, s.ge, s.gi, s.xe, refractory};
    case model::neuron_model::aeif_cond_alpha: return {s.v, s.ge, s.gi, s.extra, s.xe, s.xi, refractory};
    case model::neuron_model::hh_cond_exp_traub: return {s.v, s.ge, s.gi, s.xe, s.xi, s.extra, refractory};
    case model::neuron_model::iaf_psc_delta: return {s.v, refractory};
    case model::neuron_model::izhikevich: return {s.v, s.ge};
    default: return {};
    }
}

model_state state_from(const model_coefficients& c, const std::vector<float>& variables) {
    const auto& names = model::state_variable_names(c.model);
    if (variables.size() != names.size()) {
        std::string list;
        for (const auto& name : names) list += (list.empty() ? "" : ", ") + name;
        throw usage_error(std::string("a ") + model::to_string(c.model) + " neuron's state has " +
                          std::to_string(names.size()) + " variables" + (list.empty() ? "" : " (" + list + ")") + ", not " +
                          std::to_string(variables.size()));
    }
    model_state s;
    if (names.empty()) return s;
    s.v = variables.front();
    if (names.back() == "refractory") s.refractory_left = static_cast<std::int32_t>(variables.back());
    if (c.model == model::neuron_model::izhikevich) s.ge = variables[1];
    if (names.size() >= 4) {
        s.ge = variables[1];
        s.gi = variables[2];
    }
    if (c.model == model::neuron_model::aeif_cond_exp) s.xe = variables[3];
    if (names.size() == 6) {
        s.xe = variables[3];
        s.xi = variables[4];
    }
    if (c.model == model::neuron_model::aeif_cond_alpha) {
        s.extra = variables[3];
        s.xe = variables[4];
        s.xi = variables[5];
    }
    if (c.model == model::neuron_model::hh_cond_exp_traub) {
        s.xe = variables[3];
        s.xi = variables[4];
        s.extra = variables[5];
    }
    return s;
}

}  // namespace dnnc::sim
