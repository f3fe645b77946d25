#pragma once
// Neuron models (private to dnnc_sim). All arithmetic is float32 so that every engine, on
// any node, computes the same bits for the same inputs.
#include "dnnc/model/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace dnnc::sim {

// Per-neuron constants, precomputed once from the parameters.
struct model_coefficients {
    model::neuron_model model = model::neuron_model::linear;
    float bias = 0, threshold = 0;
    // lif: exact integration over one tick of
    //   dv/dt = (ge + gi - (v - v_rest)) / tau_m,  dge/dt = -ge / tau_e,  dgi/dt = -gi / tau_i
    // v' = v_rest + (v - v_rest) a_m + ge c_e + gi c_i;  ge' = ge a_e;  gi' = gi a_i.
    // iaf_psc_exp, iaf_psc_delta: NEST's propagators over one tick of the network's dt,
    // a_m = P22 (P33), a_e = P11ex, a_i = P11in, c_e = P21ex, c_i = P21in, p20 = P20 (P30).
    float v_rest = 0, v_reset = 0, v_th = 0;
    float a_m = 0, a_e = 0, a_i = 0, c_e = 0, c_i = 0;
    float hold = 0;  // lif: ticks a spike holds v at v_reset after its own: max(refractory - 1, 0)
    // NEST's models keep V_m in absolute mV (v_reset too, so that a snapshot holds V_m exactly)
    // and integrate V_m - E_L; theta = V_th - E_L; refractory_ticks = round(t_ref / dt).
    float e_l = 0, theta = 0, p20 = 0, i_e = 0, refractory_ticks = 0;
    // iaf_psc_alpha: a_e, a_i = P11 = P22 (e^{-h/tau_syn}), c_e, c_i = P32 (as P21 of
    // iaf_psc_exp), d_e, d_i = P31, q_e, q_i = P21 = h P11, s_e, s_i = e / tau_syn (the
    // jump of dI per pA of weight, so that I peaks at the weight).
    float d_e = 0, d_i = 0, q_e = 0, q_i = 0, s_e = 0, s_i = 0;
    // izhikevich: h = dt, ha = h a, b, d, v_min; v_th = V_th, v_reset = c, i_e = I_e;
    // published: NEST's consistent_integration = false.
    float h = 0, ha = 0, b = 0, d = 0, v_min = 0;
    bool published = false;
    // iaf_cond_exp: fixed-step RK4 in double, `substeps` steps of `sub_h` ms per tick; V_m in
    // absolute mV (v_th, v_reset, theta = V_th, refractory_ticks as NEST's models above).
    struct conductances {
        double g_l = 0, e_l = 0, e_ex = 0, e_in = 0, inv_c_m = 0, inv_tau_ex = 0, inv_tau_in = 0, i_e = 0;
        double v_th = 0, v_reset = 0, sub_h = 0;
        double jump_ex = 0, jump_in = 0;  // iaf_cond_alpha: e / tau_syn, dg's jump per nS of weight
        int substeps = 0;
    } cond;
    // aeif_cond_exp and aeif_cond_alpha, beside cond: the adaptation (a nS, b pA, 1/tau_w),
    // the exponential term (Delta_T, V_peak where it is clamped) and spike_at, where a spike is
    // detected (V_peak, or V_th when Delta_T = 0, as NEST). A step above V_th is at most
    // stiff_ms e^{-(V - V_th) / Delta_T} (a quarter of the exponential term's time constant)
    // and at least shortest_ms (sub_h / 1024), so that a substep takes at most 1024 steps.
    struct adaptation {
        double a = 0, b = 0, inv_tau_w = 0, delta_t = 0, v_peak = 0, spike_at = 0, stiff_ms = 0, shortest_ms = 0;
    } adex;
    // hh_cond_exp_traub, beside cond (g_l, e_l, e_ex, e_in, inv_c_m, inv_tau_ex, inv_tau_in,
    // i_e; sub_h = the tick, substeps = 1): the channels; theta = V_T + 30 mV, refractory_ticks
    // as above. The adaptive steps' tolerance on a variable x is rtol |x| + its absolute
    // tolerance (atol for V_m, Inact_h, Act_n; atol_g for the conductances; atol_m for Act_m);
    // first_mv: the first step's move of V_m (its length from dV_m/dt where the tick starts);
    // shortest_ms: sub_h / 4096, a step taken whatever its error.
    struct channels {
        double g_na = 0, g_k = 0, e_na = 0, e_k = 0, v_t = 0;
        double rtol = 0, atol = 0, atol_g = 0, atol_m = 0, first_mv = 0, shortest_ms = 0;
    } hh;
};

// v, ge, gi and the refractory count as each model names them (variables_of); xe and xi
// hold a second excitatory and inhibitory variable (iaf_psc_alpha: dI_ex, dI_in), `extra`
// a sixth variable for the models that need one. izhikevich keeps U_m in ge; aeif_cond_exp
// keeps w in xe; aeif_cond_alpha keeps dg_ex, dg_in in xe, xi and w in extra;
// hh_cond_exp_traub keeps Act_m, Inact_h, Act_n in xe, xi, extra.
struct model_state {
    float v = 0, ge = 0, gi = 0, xe = 0, xi = 0, extra = 0;
    std::int32_t refractory_left = 0;
};

// The conductance models' RK4 step: at most max_cond_substep_ms, substeps_of(dt,
// max_cond_substep_ms) equal steps per tick (4 at dt = 0.1 ms). hh_cond_exp_traub steps
// adaptively (Dormand-Prince 5(4)) with these tolerances (see docs/simulation.md).
constexpr double max_cond_substep_ms = 0.025;
constexpr double hh_rtol = 3e-10, hh_atol = 1e-12, hh_atol_g_ns = 1e-8, hh_atol_m = 1e-8, hh_first_mv = 0.1;
int substeps_of(double dt, double longest_ms);

// `dt`: the network's tick in ms, the integration step of NEST's models (lif has its own).
model_coefficients coefficients_of(const model::neuron_params& p, double dt);
// Initial state; for a spiking model v from v-init (default v-rest for lif, E_L for NEST's
// models), uniform in [v-init, v-init-max) or normal (v-init, v-init-std), drawn from
// (seed, index), so it does not depend on the partition.
model_state initial_state(const model::neuron_params& p, std::uint64_t seed, std::int64_t index);

// linear, step, sigmoid, tanh, relu: y = f(u); a spike source puts out its external input,
// the count of its spikes listed for the tick (nothing else feeds it). Inline: the engine
// calls it per neuron per tick.
inline float step_rate(const model_coefficients& c, float u) {
    switch (c.model) {
    case model::neuron_model::linear:
    case model::neuron_model::spike_source: return u;
    case model::neuron_model::step: return u >= c.threshold ? 1.0f : 0.0f;
    case model::neuron_model::sigmoid: return 1.0f / (1.0f + std::exp(-u));
    case model::neuron_model::tanh: return std::tanh(u);
    case model::neuron_model::relu: return u > 0.0f ? u : 0.0f;
    case model::neuron_model::lif:
    case model::neuron_model::iaf_psc_exp:
    case model::neuron_model::iaf_psc_alpha:
    case model::neuron_model::iaf_psc_delta:
    case model::neuron_model::izhikevich:
    case model::neuron_model::iaf_cond_exp:
    case model::neuron_model::iaf_cond_alpha:
    case model::neuron_model::aeif_cond_exp:
    case model::neuron_model::aeif_cond_alpha:
    case model::neuron_model::hh_cond_exp_traub: break;
    }
    return 0.0f;
}

// The states of a node's neurons, one array per variable: a run of neurons sharing their
// coefficients steps as one loop over contiguous arrays, which the compiler vectorises. The
// refractory count is kept as a float (whole numbers, exact) so that every lane of that
// loop compares and selects floats.
struct model_states {
    std::vector<float> v, ge, gi, xe, xi, extra, refractory_left;

    void resize(std::size_t n) {
        v.resize(n);
        ge.resize(n);
        gi.resize(n);
        xe.resize(n);
        xi.resize(n);
        extra.resize(n);
        refractory_left.resize(n);
    }
    model_state get(std::size_t i) const {
        return {v[i], ge[i], gi[i], xe[i], xi[i], extra[i], static_cast<std::int32_t>(refractory_left[i])};
    }
    void set(std::size_t i, const model_state& s) {
        v[i] = s.v;
        ge[i] = s.ge;
        gi[i] = s.gi;
        xe[i] = s.xe;
        xi[i] = s.xi;
        extra[i] = s.extra;
        refractory_left[i] = static_cast<float>(s.refractory_left);
    }
};

// One tick of lif. `input` (bias + external) and the synaptic sums enter the currents by
// sign: ge += excitatory (+ input if >= 0), gi += inhibitory (+ input if < 0). Then, unless
// refractory, v integrates; v > v_th spikes (y = 1), resets v to v_reset and holds it there
// for refractory - 1 more ticks (the spike tick counts). The currents always decay.
// Every value is computed and then selected, each select on one condition, so that a loop
// over it has no branches and vectorises; each value is computed as a branching form would,
// so the bits are those of one.
inline float step_lif(const model_coefficients& c, float& v, float& ge, float& gi, float& /*xe*/, float& /*xi*/,
                      float& /*extra*/, float& refractory_left, float input, float excitatory, float inhibitory) {
    const float excitatory_with_input = excitatory + input;
    const float inhibitory_with_input = inhibitory + input;
    const bool positive = input >= 0;
    const float e = ge + (positive ? excitatory_with_input : excitatory);
    const float i = gi + (positive ? inhibitory : inhibitory_with_input);
    const float left = refractory_left;
    const float counted_down = left - 1.0f;
    const bool resting = left > 0;
    const float old = v;
    const float integrated = c.v_rest + (old - c.v_rest) * c.a_m + e * c.c_e + i * c.c_i;
    const bool above = integrated > c.v_th;
    const float moved = above ? c.v_reset : integrated;
    v = resting ? old : moved;
    const float held = above ? c.hold : left;
    refractory_left = resting ? counted_down : held;
    ge = e * c.a_e;
    gi = i * c.a_i;
    const float fired = above ? 1.0f : 0.0f;
    return resting ? 0.0f : fired;
}

// The end of a NEST model's tick: `integrated` (V relative to E_L after this tick's update)
// at or above threshold spikes, V resets and the refractory count starts; while
// refractory V stays and the count runs down. Branch-free selects, as the callers.
inline float settle_iaf(const model_coefficients& c, float& v, float& refractory_left, float integrated) {
    const float left = refractory_left;
    const bool refractory = left > 0;
    const bool spike = !refractory && integrated >= c.theta;
    const float moved = integrated + c.e_l;
    const float kept = refractory ? v : moved;
    v = spike ? c.v_reset : kept;
    const float counted = refractory ? left - 1.0f : left;
    refractory_left = spike ? c.refractory_ticks : counted;
    return spike ? 1.0f : 0.0f;
}

// One tick of NEST's iaf_psc_exp (iaf_psc_exp.cpp, NEST 3): unless refractory, V (relative
// to E_L) integrates with the currents as they were; the currents decay and take this tick's
// synaptic sums; V >= theta spikes, resets V and starts round(t_ref / dt) refractory ticks.
// `input` is the external current I_ext in pA (bias + ext). Branch-free, as step_lif.
inline float step_iaf_psc_exp(const model_coefficients& c, float& v, float& i_ex, float& i_in, float& /*xe*/,
                              float& /*xi*/, float& /*extra*/, float& refractory_left, float input, float excitatory, float inhibitory) {
    const float relative = v - c.e_l;
    const float integrated = relative * c.a_m + i_ex * c.c_e + i_in * c.c_i + (c.i_e + input) * c.p20;
    i_ex = i_ex * c.a_e + excitatory;
    i_in = i_in * c.a_i + inhibitory;
    return settle_iaf(c, v, refractory_left, integrated);
}

// One tick of NEST's iaf_psc_delta (iaf_psc_delta.cpp): unless refractory, V (relative to
// E_L) decays, integrates I_e + I_ext and jumps by this tick's synaptic sums (mV); input that
// arrives while refractory is dropped. i_ex and i_in are not used.
inline float step_iaf_psc_delta(const model_coefficients& c, float& v, float& /*i_ex*/, float& /*i_in*/, float& /*xe*/,
                                float& /*xi*/, float& /*extra*/, float& refractory_left, float input, float excitatory, float inhibitory) {
    const float relative = v - c.e_l;
    const float integrated = c.p20 * (c.i_e + input) + c.a_m * relative + (excitatory + inhibitory);
    return settle_iaf(c, v, refractory_left, integrated);
}

// One tick of NEST's iaf_psc_alpha (iaf_psc_alpha.cpp, NEST 3): unless refractory, V
// (relative to E_L) integrates with the currents I and their derivatives dI as they were;
// then I <- P21 dI + P22 I, dI <- P11 dI + (e / tau_syn) * this tick's synaptic sum (a
// weight of w pA gives a current that peaks at w, tau_syn after the spike); V >= theta
// spikes as iaf_psc_exp. Branch-free, as step_lif.
inline float step_iaf_psc_alpha(const model_coefficients& c, float& v, float& i_ex, float& i_in, float& di_ex,
                                float& di_in, float& /*extra*/, float& refractory_left, float input, float excitatory, float inhibitory) {
    const float relative = v - c.e_l;
    const float integrated = (c.i_e + input) * c.p20 + di_ex * c.d_e + i_ex * c.c_e + di_in * c.d_i + i_in * c.c_i +
                             relative * c.a_m;
    i_ex = di_ex * c.q_e + i_ex * c.a_e;
    di_ex = di_ex * c.a_e + excitatory * c.s_e;
    i_in = di_in * c.q_i + i_in * c.a_i;
    di_in = di_in * c.a_i + inhibitory * c.s_i;
    return settle_iaf(c, v, refractory_left, integrated);
}

// The end of an izhikevich tick (izhikevich.cpp): V_m below V_min is raised to it; V_m >=
// V_th spikes, V_m <- c, U_m <- U_m + d. No refractory period.
inline float settle_izhikevich(const model_coefficients& c, float& v, float& u, float v_new, float u_new) {
    const float bounded = v_new < c.v_min ? c.v_min : v_new;
    const bool spike = bounded >= c.v_th;
    v = spike ? c.v_reset : bounded;
    const float kicked = u_new + c.d;
    u = spike ? kicked : u_new;
    return spike ? 1.0f : 0.0f;
}

// One tick of NEST's izhikevich with consistent_integration (its default): one forward Euler
// step of dV/dt = 0.04 V^2 + 5 V + 140 - U + I_ext + I_e, dU/dt = a (b V - U), both from the
// values before the step; this tick's synaptic sums (mV) join V. Branch-free, as step_lif.
inline float step_izhikevich(const model_coefficients& c, float& v, float& u, float& /*gi*/, float& /*xe*/, float& /*xi*/,
                             float& /*extra*/, float& /*refractory_left*/, float input, float excitatory, float inhibitory) {
    const float v0 = v, u0 = u;
    const float drive = 0.04f * v0 * v0 + 5.0f * v0 + 140.0f - u0 + input + c.i_e;
    const float v_new = v0 + (c.h * drive + (excitatory + inhibitory));
    const float u_new = u0 + c.ha * (c.b * v0 - u0);
    return settle_izhikevich(c, v, u, v_new, u_new);
}

// izhikevich with consistent_integration = false, the numerics of Izhikevich (2003): two half
// steps of V, the synaptic sums inside the drive, then U from the new V.
inline float step_izhikevich_published(const model_coefficients& c, float& v, float& u, float& /*gi*/, float& /*xe*/,
                                       float& /*xi*/, float& /*extra*/, float& /*refractory_left*/, float input, float excitatory,
                                       float inhibitory) {
    const float spikes = excitatory + inhibitory, half = c.h * 0.5f;
    const float u0 = u;
    float w = v;
    w = w + half * (0.04f * w * w + 5.0f * w + 140.0f - u0 + input + c.i_e + spikes);
    w = w + half * (0.04f * w * w + 5.0f * w + 140.0f - u0 + input + c.i_e + spikes);
    const float u_new = u0 + c.ha * (c.b * w - u0);
    return settle_izhikevich(c, v, u, w, u_new);
}

// The derivative of NEST's iaf_cond_exp (iaf_cond_exp_dynamics): V (clamped to V_reset while
// refractory, else bounded by V_th) under leak, I, and the conductances g_ex, g_in (nS, both
// >= 0) towards E_ex and E_in; the conductances decay. dV = 0 while refractory.
struct cond_exp_rates {
    double v, g_ex, g_in;
};
inline cond_exp_rates cond_exp_derivative(const model_coefficients::conductances& k, bool refractory, double i, double v,
                                          double g_ex, double g_in) {
    const double bounded = v < k.v_th ? v : k.v_th;
    const double at = refractory ? k.v_reset : bounded;
    const double leak = k.g_l * (at - k.e_l), i_ex = g_ex * (at - k.e_ex), i_in = g_in * (at - k.e_in);
    const double dv = (-leak + i - i_ex - i_in) * k.inv_c_m;
    return {refractory ? 0.0 : dv, -g_ex * k.inv_tau_ex, -g_in * k.inv_tau_in};
}

// The end of a conductance model's tick, as NEST's: while refractory the count runs down and
// V_m = V_reset, else V_m >= V_th spikes, V_m <- V_reset, the count starts.
inline float settle_cond(const model_coefficients& c, float& v, float& refractory_left, double integrated_v) {
    const bool refractory = refractory_left > 0;
    const float left = refractory_left;
    const float integrated = static_cast<float>(integrated_v);
    const bool spike = !refractory && integrated >= c.theta;
    v = refractory || spike ? c.v_reset : integrated;
    const float counted = refractory ? left - 1.0f : left;
    refractory_left = spike ? c.refractory_ticks : counted;
    return spike ? 1.0f : 0.0f;
}

// One tick of NEST's iaf_cond_exp (iaf_cond_exp.cpp): the tick's RK4 substeps from the state
// as it was (I = I_ext + I_e); then the conductances take this tick's synaptic sums (nS;
// g_in the inhibitory sum's magnitude); while refractory the count runs down and V_m = V_reset,
// else V_m >= V_th spikes, V_m <- V_reset, the count starts. The state is float between ticks.
inline float step_iaf_cond_exp(const model_coefficients& c, float& v, float& g_ex, float& g_in, float& /*xe*/,
                               float& /*xi*/, float& /*extra*/, float& refractory_left, float input, float excitatory, float inhibitory) {
    const auto& k = c.cond;
    const bool refractory = refractory_left > 0;
    const double i = double{input} + k.i_e, h = k.sub_h, half = 0.5 * h, sixth = h / 6.0;
    double y0 = v, y1 = g_ex, y2 = g_in;
    for (int s = 0; s < k.substeps; ++s) {
        const auto a = cond_exp_derivative(k, refractory, i, y0, y1, y2);
        const auto b = cond_exp_derivative(k, refractory, i, y0 + half * a.v, y1 + half * a.g_ex, y2 + half * a.g_in);
        const auto m = cond_exp_derivative(k, refractory, i, y0 + half * b.v, y1 + half * b.g_ex, y2 + half * b.g_in);
        const auto e = cond_exp_derivative(k, refractory, i, y0 + h * m.v, y1 + h * m.g_ex, y2 + h * m.g_in);
        y0 = y0 + sixth * (a.v + 2.0 * b.v + 2.0 * m.v + e.v);
        y1 = y1 + sixth * (a.g_ex + 2.0 * b.g_ex + 2.0 * m.g_ex + e.g_ex);
        y2 = y2 + sixth * (a.g_in + 2.0 * b.g_in + 2.0 * m.g_in + e.g_in);
    }
    g_ex = static_cast<float>(y1 + double{excitatory});
    g_in = static_cast<float>(y2 - double{inhibitory});
    return settle_cond(c, v, refractory_left, y0);
}


// One classical RK4 step of length h from y (N variables) of dy/dt = f(y) into out, given
// a = f(y).
template <int N, typename F>
inline void rk4_step_from(const double* y, const double* a, double h, const F& f, double* out) {
    const double half = 0.5 * h, sixth = h / 6.0;
    double b[N], m[N], e[N], t[N];
    for (int j = 0; j < N; ++j) t[j] = y[j] + half * a[j];
    f(t, b);
    for (int j = 0; j < N; ++j) t[j] = y[j] + half * b[j];
    f(t, m);
    for (int j = 0; j < N; ++j) t[j] = y[j] + h * m[j];
    f(t, e);
    for (int j = 0; j < N; ++j) out[j] = y[j] + sixth * (a[j] + 2.0 * b[j] + 2.0 * m[j] + e[j]);
}

// One classical RK4 step of length h from y (N variables) of dy/dt = f(y) into out.
template <int N, typename F>
inline void rk4_step(const double* y, double h, const F& f, double* out) {
    double a[N];
    f(y, a);
    rk4_step_from<N>(y, a, h, f, out);
}

// One Dormand-Prince 5(4) step of length h from y (N variables) of dy/dt = f(y), given
// k1 = f(y): the fifth-order solution into out, f(out) into k7 (the next step's k1: the
// last stage is the first of the next step) and the fifth- less the embedded fourth-order
// solution into err.
template <int N, typename F>
inline void dopri54_step(const double* y, const double* k1, double h, const F& f, double* out, double* k7,
                         double* err) {
    double k2[N], k3[N], k4[N], k5[N], k6[N], t[N];
    for (int j = 0; j < N; ++j) t[j] = y[j] + h * (0.2 * k1[j]);
    f(t, k2);
    for (int j = 0; j < N; ++j) t[j] = y[j] + h * (3.0 / 40 * k1[j] + 9.0 / 40 * k2[j]);
    f(t, k3);
    for (int j = 0; j < N; ++j) t[j] = y[j] + h * (44.0 / 45 * k1[j] - 56.0 / 15 * k2[j] + 32.0 / 9 * k3[j]);
    f(t, k4);
    for (int j = 0; j < N; ++j)
        t[j] = y[j] + h * (19372.0 / 6561 * k1[j] - 25360.0 / 2187 * k2[j] + 64448.0 / 6561 * k3[j] - 212.0 / 729 * k4[j]);
    f(t, k5);
    for (int j = 0; j < N; ++j)
        t[j] = y[j] + h * (9017.0 / 3168 * k1[j] - 355.0 / 33 * k2[j] + 46732.0 / 5247 * k3[j] + 49.0 / 176 * k4[j] -
                           5103.0 / 18656 * k5[j]);
    f(t, k6);
    for (int j = 0; j < N; ++j)
        out[j] = y[j] + h * (35.0 / 384 * k1[j] + 500.0 / 1113 * k3[j] + 125.0 / 192 * k4[j] - 2187.0 / 6784 * k5[j] +
                             11.0 / 84 * k6[j]);
    f(out, k7);
    for (int j = 0; j < N; ++j)
        err[j] = h * (71.0 / 57600 * k1[j] - 71.0 / 16695 * k3[j] + 71.0 / 1920 * k4[j] - 17253.0 / 339200 * k5[j] +
                      22.0 / 525 * k6[j] - 1.0 / 40 * k7[j]);
}

// One tick of NEST's iaf_cond_alpha (iaf_cond_alpha.cpp): as iaf_cond_exp, with alpha-shaped
// conductances, dg_x/dt = -dg_x / tau_syn_x, dg/dt = dg_x - g_x / tau_syn_x; the synaptic
// sums join dg_x scaled by e / tau_syn_x, so that a weight of w nS peaks at w, tau_syn_x
// after the spike. The same RK4 steps per tick.
inline float step_iaf_cond_alpha(const model_coefficients& c, float& v, float& g_ex, float& g_in, float& dg_ex,
                                 float& dg_in, float& /*extra*/, float& refractory_left, float input, float excitatory, float inhibitory) {
    const auto& k = c.cond;
    const bool refractory = refractory_left > 0;
    const double i = double{input} + k.i_e;
    double y[5] = {v, g_ex, g_in, dg_ex, dg_in};
    auto f = [&](const double* x, double* out) {
        const double bounded = x[0] < k.v_th ? x[0] : k.v_th;
        const double at = refractory ? k.v_reset : bounded;
        const double leak = k.g_l * (at - k.e_l), i_ex = x[1] * (at - k.e_ex), i_in = x[2] * (at - k.e_in);
        const double dv = (-leak + i - i_ex - i_in) * k.inv_c_m;
        out[0] = refractory ? 0.0 : dv;
        out[1] = x[3] - x[1] * k.inv_tau_ex;
        out[2] = x[4] - x[2] * k.inv_tau_in;
        out[3] = -x[3] * k.inv_tau_ex;
        out[4] = -x[4] * k.inv_tau_in;
    };
    for (int s = 0; s < k.substeps; ++s) rk4_step<5>(y, k.sub_h, f, y);
    g_ex = static_cast<float>(y[1]);
    g_in = static_cast<float>(y[2]);
    dg_ex = static_cast<float>(y[3] + double{excitatory} * k.jump_ex);
    dg_in = static_cast<float>(y[4] - double{inhibitory} * k.jump_in);
    return settle_cond(c, v, refractory_left, y[0]);
}

// The derivative of NEST's aeif_cond_exp (aeif_cond_exp_dynamics) at x = {V_m, g_ex, g_in, w}:
// V (V_reset while refractory, else clamped to V_peak) under leak, the exponential term
// g_L Delta_T e^{(V - V_th) / Delta_T} (none when Delta_T = 0), the conductances, the
// adaptation current w and I; dV = 0 while refractory; dw/dt = (a (V - E_L) - w) / tau_w.
inline void aeif_derivative(const model_coefficients& c, bool refractory, double i, const double* x, double* out) {
    const auto& k = c.cond;
    const auto& z = c.adex;
    const double bounded = x[0] < z.v_peak ? x[0] : z.v_peak;
    const double at = refractory ? k.v_reset : bounded;
    const double spike_current = z.delta_t == 0 ? 0.0 : k.g_l * z.delta_t * std::exp((at - k.v_th) / z.delta_t);
    const double leak = k.g_l * (at - k.e_l), i_ex = x[1] * (at - k.e_ex), i_in = x[2] * (at - k.e_in);
    out[0] = refractory ? 0.0 : (-leak + spike_current - i_ex - i_in - x[3] + i) * k.inv_c_m;
    out[1] = -x[1] * k.inv_tau_ex;
    out[2] = -x[2] * k.inv_tau_in;
    out[3] = (z.a * (at - k.e_l) - x[3]) * z.inv_tau_w;
}

// The derivative of NEST's aeif_cond_alpha (aeif_cond_alpha_dynamics) at x = {V_m, g_ex,
// g_in, w, dg_ex, dg_in}: aeif_derivative's, with alpha-shaped conductances as
// iaf_cond_alpha's (dg/dt = dg_x - g / tau_syn, ddg_x/dt = -dg_x / tau_syn).
inline void aeif_alpha_derivative(const model_coefficients& c, bool refractory, double i, const double* x, double* out) {
    const auto& k = c.cond;
    aeif_derivative(c, refractory, i, x, out);
    out[1] += x[4];
    out[2] += x[5];
    out[4] = -x[4] * k.inv_tau_ex;
    out[5] = -x[5] * k.inv_tau_in;
}

// One tick of the aeif models' integration from y = {V_m, g_ex, g_in, w, ...} (N variables,
// derivative(refractory, x, out) their rates), as NEST's aeif_cond_exp.cpp and
// aeif_cond_alpha.cpp: in the substeps of the conductance models, each cut into shorter RK4
// steps where the exponential term is steep (adaptation). A spike is found within the tick: a
// step that ends at or above spike_at spikes at the time its V reaches it (bisection of the
// step's length, 24 halvings), then V <- V_reset, w <- w + b, and the rest of the tick runs
// with V held at V_reset if t_ref gives refractory ticks (else on from V_reset; a second spike
// in one tick resets again, but the tick spikes once). True if it spiked.
template <int N, typename Derivative>
inline bool integrate_aeif_tick(const model_coefficients& c, bool refractory, const Derivative& derivative, double* y) {
    const auto& k = c.cond;
    const auto& z = c.adex;
    bool spiked = false;
    const auto f = [&](const double* x, double* out) { derivative(refractory, x, out); };
    double next[N];
    for (int s = 0; s < k.substeps; ++s) {
        for (double left = k.sub_h; left > 0;) {
            double h = left;
            if (!refractory && z.delta_t > 0) {
                const double bounded = y[0] < z.v_peak ? y[0] : z.v_peak;
                h = std::min(left, std::max(z.stiff_ms * std::exp((k.v_th - bounded) / z.delta_t), z.shortest_ms));
            }
            rk4_step<N>(y, h, f, next);
            if (refractory) {
                next[0] = k.v_reset;
            } else if (next[0] >= z.spike_at) {
                double before = 0, after = h, probe[N];
                for (int n = 0; n < 24; ++n) {
                    const double middle = 0.5 * (before + after);
                    rk4_step<N>(y, middle, f, probe);
                    (probe[0] < z.spike_at ? before : after) = middle;
                }
                h = std::max(after, std::min(z.shortest_ms, h));
                rk4_step<N>(y, h, f, next);
                next[0] = k.v_reset;
                next[3] += z.b;
                spiked = true;
                refractory = c.refractory_ticks > 0;
            }
            std::copy(next, next + N, y);
            left -= h;
        }
    }
    return spiked;
}

// The refractory count at the end of an aeif tick: it starts after a spike (refractory ticks
// after this one), else runs down if the tick began refractory.
inline float settle_aeif(const model_coefficients& c, float& refractory_left, bool refractory_before, bool spiked) {
    const float left = refractory_left;
    refractory_left = spiked ? c.refractory_ticks : refractory_before ? left - 1.0f : left;
    return spiked ? 1.0f : 0.0f;
}

// One tick of NEST's aeif_cond_exp (aeif_cond_exp.cpp) from the state as it was (I = I_ext +
// I_e), integrate_aeif_tick; then the conductances take this tick's synaptic sums, and the
// refractory count settles. The state is float between ticks.
inline float step_aeif_cond_exp(const model_coefficients& c, float& v, float& g_ex, float& g_in, float& w,
                                float& /*xi*/, float& /*extra*/, float& refractory_left, float input, float excitatory,
                                float inhibitory) {
    const bool refractory_before = refractory_left > 0;
    const double i = double{input} + c.cond.i_e;
    const auto derivative = [&](bool refractory, const double* x, double* out) {
        aeif_derivative(c, refractory, i, x, out);
    };
    double y[4] = {v, g_ex, g_in, w};
    const bool spiked = integrate_aeif_tick<4>(c, refractory_before, derivative, y);
    v = static_cast<float>(y[0]);
    g_ex = static_cast<float>(y[1] + double{excitatory});
    g_in = static_cast<float>(y[2] - double{inhibitory});
    w = static_cast<float>(y[3]);
    return settle_aeif(c, refractory_left, refractory_before, spiked);
}

// One tick of NEST's aeif_cond_alpha (aeif_cond_alpha.cpp): as aeif_cond_exp with alpha-shaped
// conductances; the synaptic sums join dg_x scaled by e / tau_syn_x, as iaf_cond_alpha's.
inline float step_aeif_cond_alpha(const model_coefficients& c, float& v, float& g_ex, float& g_in, float& dg_ex,
                                  float& dg_in, float& w, float& refractory_left, float input, float excitatory,
                                  float inhibitory) {
    const auto& k = c.cond;
    const bool refractory_before = refractory_left > 0;
    const double i = double{input} + k.i_e;
    const auto derivative = [&](bool refractory, const double* x, double* out) {
        aeif_alpha_derivative(c, refractory, i, x, out);
    };
    double y[6] = {v, g_ex, g_in, w, dg_ex, dg_in};
    const bool spiked = integrate_aeif_tick<6>(c, refractory_before, derivative, y);
    v = static_cast<float>(y[0]);
    g_ex = static_cast<float>(y[1]);
    g_in = static_cast<float>(y[2]);
    w = static_cast<float>(y[3]);
    dg_ex = static_cast<float>(y[4] + double{excitatory} * k.jump_ex);
    dg_in = static_cast<float>(y[5] - double{inhibitory} * k.jump_in);
    return settle_aeif(c, refractory_left, refractory_before, spiked);
}

// x / (e^{x/k} - 1), with its limit k at x = 0, where NEST's form is 0/0.
inline double hh_ratio(double x, double k) { return x == 0.0 ? k : x / std::expm1(x / k); }

// Traub's rate functions as NEST's hh_cond_exp_traub writes them, at u = V_m - V_T (mV):
// alpha and beta (1/ms) of the gates m, h and n. (NEST's initial state evaluates them at V_m
// itself, without V_T: see initial_state.)
struct hh_rates {
    double alpha_m, beta_m, alpha_h, beta_h, alpha_n, beta_n;
};
inline hh_rates hh_rates_at(double u) {
    return {0.32 * hh_ratio(13.0 - u, 4.0),         0.28 * hh_ratio(u - 40.0, 5.0),
            0.128 * std::exp((17.0 - u) / 18.0),    4.0 / (1.0 + std::exp((40.0 - u) / 5.0)),
            0.032 * hh_ratio(15.0 - u, 5.0),        0.5 * std::exp((10.0 - u) / 40.0)};
}

// The derivative of NEST's hh_cond_exp_traub (hh_cond_exp_traub_dynamics) at x = {V_m, g_ex,
// g_in, m, h, n}: the sodium (g_Na m^3 h), potassium (g_K n^4) and leak currents, the
// conductances towards E_ex and E_in, and I; the gates relax at Traub's rates; the
// conductances decay. No clamp: V_m runs freely through a spike, as NEST's.
inline void hh_derivative(const model_coefficients& c, double i, const double* x, double* out) {
    const auto& k = c.cond;
    const auto& g = c.hh;
    const double v = x[0], m = x[3], h = x[4], n = x[5];
    const double i_na = g.g_na * m * m * m * h * (v - g.e_na), i_k = g.g_k * n * n * n * n * (v - g.e_k);
    const double leak = k.g_l * (v - k.e_l), i_ex = x[1] * (v - k.e_ex), i_in = x[2] * (v - k.e_in);
    out[0] = (-i_na - i_k - leak - i_ex - i_in + i) * k.inv_c_m;
    out[1] = -x[1] * k.inv_tau_ex;
    out[2] = -x[2] * k.inv_tau_in;
    const auto r = hh_rates_at(v - g.v_t);
    out[3] = r.alpha_m - (r.alpha_m + r.beta_m) * m;
    out[4] = r.alpha_h - (r.alpha_h + r.beta_h) * h;
    out[5] = r.alpha_n - (r.alpha_n + r.beta_n) * n;
}

// The error of a Dormand-Prince step of hh_cond_exp_traub from y against the tolerances: at
// most 1 where every variable is within its own. Act_m, fast and tied to V_m, takes a looser
// absolute tolerance than V_m and the slow gates, whose errors outlive the step.
inline double hh_step_error(const model_coefficients::channels& g, const double* y, const double* err) {
    const auto over = [&](int j, double atol) { return std::abs(err[j]) / (atol + g.rtol * std::abs(y[j])); };
    return std::max({over(0, g.atol), over(1, g.atol_g), over(2, g.atol_g), over(3, g.atol_m), over(4, g.atol),
                     over(5, g.atol)});
}

// One tick of NEST's hh_cond_exp_traub (hh_cond_exp_traub.cpp) from the state as it was (I =
// I_ext + I_e): Dormand-Prince 5(4) steps with a PI step-size controller across the tick; the
// conductances take this tick's synaptic sums (nS; g_in the inhibitory sum's magnitude). While
// refractory the count runs down; else a V_m at or above theta = V_T + 30 mV that has fallen
// since the last tick (a maximum just passed) spikes and starts the count. No reset: the
// channels repolarise.
inline float step_hh_cond_exp_traub(const model_coefficients& c, float& v, float& g_ex, float& g_in, float& m, float& h,
                                    float& n, float& refractory_left, float input, float excitatory, float inhibitory) {
    const auto& k = c.cond;
    const double i = double{input} + k.i_e;
    const auto& g = c.hh;
    const auto f = [&](const double* x, double* out) { hh_derivative(c, i, x, out); };
    double y[6] = {v, g_ex, g_in, m, h, n}, rate[6], next[6], next_rate[6], err[6];
    f(y, rate);
    // Every step is a function of the tick's starting state alone, so the bits do not depend on
    // the partition or on a restore. The first step moves V_m by about first_mv; a step at
    // shortest_ms is taken whatever its error (a NaN too). Invariant: y is the state at
    // sub_h - left and rate = f(y).
    const double first = g.first_mv / std::abs(rate[0]);  // +inf where V_m stands still
    double length = first < k.sub_h ? std::max(first, g.shortest_ms) : k.sub_h, last_error = 1e-4;
    for (double left = k.sub_h; left > 0;) {
        const double step = left <= 1.1 * length ? left : length;  // no sliver left at the tick's end
        dopri54_step<6>(y, rate, step, f, next, next_rate, err);
        const double error = hh_step_error(g, y, err);
        double factor;  // the next step's length over this one's: PI control after an accepted step
        if (error <= 1.0 || step <= g.shortest_ms) {
            std::copy(next, next + 6, y);
            std::copy(next_rate, next_rate + 6, rate);
            left -= step;
            factor = 0.9 * std::pow(error, -0.17) * std::pow(last_error, 0.04);
            last_error = error > 1e-4 ? error : 1e-4;
        } else {
            factor = 0.9 * std::pow(error, -0.2);
        }
        // Within [0.2, 5], 0.2 for a NaN error; never below shortest_ms, so that the tick ends.
        factor = factor > 5.0 ? 5.0 : factor;
        length = std::max(step * (factor > 0.2 ? factor : 0.2), g.shortest_ms);
    }
    const float before = v;
    v = static_cast<float>(y[0]);
    g_ex = static_cast<float>(y[1] + double{excitatory});
    g_in = static_cast<float>(y[2] - double{inhibitory});
    m = static_cast<float>(y[3]);
    h = static_cast<float>(y[4]);
    n = static_cast<float>(y[5]);
    const float left = refractory_left;
    const bool refractory = left > 0;
    const bool spike = !refractory && v >= c.theta && before > v;
    refractory_left = spike ? c.refractory_ticks : refractory ? left - 1.0f : left;
    return spike ? 1.0f : 0.0f;
}

// One tick of the spiking model c.model (model::is_spiking).
inline float step_spiking(const model_coefficients& c, float& v, float& ge, float& gi, float& xe, float& xi,
                          float& extra, float& refractory_left, float input, float excitatory, float inhibitory) {
    switch (c.model) {
    case model::neuron_model::iaf_psc_exp:
        return step_iaf_psc_exp(c, v, ge, gi, xe, xi, extra, refractory_left, input, excitatory, inhibitory);
    case model::neuron_model::iaf_psc_alpha:
        return step_iaf_psc_alpha(c, v, ge, gi, xe, xi, extra, refractory_left, input, excitatory, inhibitory);
    case model::neuron_model::iaf_psc_delta:
        return step_iaf_psc_delta(c, v, ge, gi, xe, xi, extra, refractory_left, input, excitatory, inhibitory);
    case model::neuron_model::iaf_cond_exp:
        return step_iaf_cond_exp(c, v, ge, gi, xe, xi, extra, refractory_left, input, excitatory, inhibitory);
    case model::neuron_model::iaf_cond_alpha:
        return step_iaf_cond_alpha(c, v, ge, gi, xe, xi, extra, refractory_left, input, excitatory, inhibitory);
    case model::neuron_model::aeif_cond_exp:
        return step_aeif_cond_exp(c, v, ge, gi, xe, xi, extra, refractory_left, input, excitatory, inhibitory);
    case model::neuron_model::aeif_cond_alpha:
        return step_aeif_cond_alpha(c, v, ge, gi, xe, xi, extra, refractory_left, input, excitatory, inhibitory);
    case model::neuron_model::hh_cond_exp_traub:
        return step_hh_cond_exp_traub(c, v, ge, gi, xe, xi, extra, refractory_left, input, excitatory, inhibitory);
    case model::neuron_model::izhikevich:
        return c.published ? step_izhikevich_published(c, v, ge, gi, xe, xi, extra, refractory_left, input, excitatory, inhibitory)
                           : step_izhikevich(c, v, ge, gi, xe, xi, extra, refractory_left, input, excitatory, inhibitory);
    default: return step_lif(c, v, ge, gi, xe, xi, extra, refractory_left, input, excitatory, inhibitory);
    }
}

// step_spiking for neurons [first, last), which share `c` (a spiking model); their input is
// bias + ext[i] (ext null: no external input this tick, which saves reading an array of
// zeros), their sums excitatory[i] (+ poisson_excitatory[i]) and inhibitory[i] (+
// poisson_inhibitory[i]); the Poisson arrays may be null. Every sum array it reads is left
// zero for the next tick. Adding a Poisson value of +0 (a neuron no generator feeds, or a
// count of 0) changes nothing: a sum that starts at +0 is never -0. One loop per model,
// which vectorises: the restrict parameters promise that no array overlaps another.
void step_spiking_run(const model_coefficients& c, std::size_t first, std::size_t last, float* __restrict v,
                      float* __restrict ge, float* __restrict gi, float* __restrict xe, float* __restrict xi,
                      float* __restrict extra, float* __restrict refractory_left,
                      const float* __restrict ext, float* __restrict excitatory, float* __restrict inhibitory,
                      float* __restrict poisson_excitatory, float* __restrict poisson_inhibitory, float* __restrict out);

// Snapshot form of a state (model::state_variable_names): lif [v, ge, gi, refractory ticks
// left]; iaf_psc_exp [V_m, i_syn_ex, i_syn_in, refractory ticks left]; iaf_psc_alpha [V_m,
// i_syn_ex, i_syn_in, di_syn_ex, di_syn_in, refractory ticks left]; iaf_psc_delta [V_m,
// refractory ticks left]; izhikevich [V_m, U_m]; iaf_cond_exp [V_m, g_ex, g_in, refractory
// ticks left]; iaf_cond_alpha [V_m, g_ex, g_in, dg_ex, dg_in, refractory ticks left];
// aeif_cond_exp [V_m, g_ex, g_in, w, refractory ticks left]; aeif_cond_alpha [V_m, g_ex, g_in,
// w, dg_ex, dg_in, refractory ticks left]; hh_cond_exp_traub [V_m, g_ex, g_in, Act_m,
// Inact_h, Act_n, refractory ticks left]; rate models none.
std::vector<float> variables_of(const model_coefficients& c, const model_state& s);
model_state state_from(const model_coefficients& c, const std::vector<float>& variables);

}  // namespace dnnc::sim
