#include "models.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/core/splitmix64.hpp"

#include <algorithm>
#include <cmath>

namespace dnnc::sim {

namespace {
// Uniform in [0, 1), keyed by (seed, index): the same initial value wherever the neuron runs.
double unit_uniform(std::uint64_t seed, std::int64_t index) {
    return splitmix64::at(seed, static_cast<std::uint64_t>(index)).uniform();
}

// The current term of exact integration: tau_x / (tau_x - tau_m) (e^{-dt/tau_x} - e^{-dt/tau_m}),
// and its limit dt/tau e^{-dt/tau} when the time constants are equal.
double current_gain(double dt, double tau_m, double tau_x) {
    if (std::abs(tau_x - tau_m) < 1e-12 * tau_m) return dt / tau_m * std::exp(-dt / tau_m);
    return tau_x / (tau_x - tau_m) * (std::exp(-dt / tau_x) - std::exp(-dt / tau_m));
}
}  // namespace

model_coefficients coefficients_of(const protocol::neuron_params& p) {
    model_coefficients c;
    c.model = p.model;
    c.bias = static_cast<float>(p.bias);
    c.threshold = static_cast<float>(p.threshold);
    if (p.model == protocol::neuron_model::lif) {
        c.v_rest = static_cast<float>(p.v_rest);
        c.v_reset = static_cast<float>(p.v_reset);
        c.v_th = static_cast<float>(p.v_th);
        c.a_m = static_cast<float>(std::exp(-p.dt / p.tau_m));
        c.a_e = static_cast<float>(std::exp(-p.dt / p.tau_e));
        c.a_i = static_cast<float>(std::exp(-p.dt / p.tau_i));
        c.c_e = static_cast<float>(current_gain(p.dt, p.tau_m, p.tau_e));
        c.c_i = static_cast<float>(current_gain(p.dt, p.tau_m, p.tau_i));
        c.hold = static_cast<float>(std::max(p.refractory - 1, 0));
    }
    return c;
}

model_state initial_state(const protocol::neuron_params& p, std::uint64_t seed, std::int64_t index) {
    model_state s;
    if (p.model != protocol::neuron_model::lif) return s;
    double v = p.v_init.value_or(p.v_rest);
    if (p.v_init && p.v_init_max) v = *p.v_init + (*p.v_init_max - *p.v_init) * unit_uniform(seed, index);
    s.v = static_cast<float>(v);
    return s;
}

// One clone per vector width, picked at load time by the CPU (same bits: no FMA contraction,
// and every operation is elementwise).
__attribute__((target_clones("avx512f", "avx2", "default")))
void step_lif_run(const model_coefficients& c, std::size_t first, std::size_t last, float* __restrict v,
                  float* __restrict ge, float* __restrict gi, float* __restrict refractory_left,
                  const float* __restrict ext, const float* __restrict excitatory, const float* __restrict inhibitory,
                  float* __restrict out) {
    const model_coefficients k = c;  // a copy: the stores below cannot change it
    if (ext == nullptr) {
        const float input = k.bias + 0.0f;  // what bias + ext gives for ext = +0
        for (std::size_t i = first; i < last; ++i)
            out[i] = step_lif(k, v[i], ge[i], gi[i], refractory_left[i], input, excitatory[i], inhibitory[i]);
        return;
    }
    for (std::size_t i = first; i < last; ++i)
        out[i] = step_lif(k, v[i], ge[i], gi[i], refractory_left[i], k.bias + ext[i], excitatory[i], inhibitory[i]);
}

std::vector<float> variables_of(const model_coefficients& c, const model_state& s) {
    if (c.model != protocol::neuron_model::lif) return {};
    return {s.v, s.ge, s.gi, static_cast<float>(s.refractory_left)};
}

model_state state_from(const model_coefficients& c, const std::vector<float>& variables) {
    model_state s;
    if (c.model != protocol::neuron_model::lif) {
        if (!variables.empty()) throw usage_error("a rate neuron has no state variables");
        return s;
    }
    if (variables.size() != 4) throw usage_error("a lif neuron's state has 4 variables (v, ge, gi, refractory)");
    s.v = variables[0];
    s.ge = variables[1];
    s.gi = variables[2];
    s.refractory_left = static_cast<std::int32_t>(variables[3]);
    return s;
}

}  // namespace dnnc::sim
