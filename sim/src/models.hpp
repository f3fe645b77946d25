#pragma once
// Neuron models (private to dnnc_sim). All arithmetic is float32 so that every engine, on
// any node, computes the same bits for the same inputs.
#include "dnnc/protocol/model.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

namespace dnnc::sim {

// Per-neuron constants, precomputed once from the parameters.
struct model_coefficients {
    protocol::neuron_model model = protocol::neuron_model::linear;
    float bias = 0, threshold = 0;
    // lif: exact integration over one tick of
    //   dv/dt = (ge + gi - (v - v_rest)) / tau_m,  dge/dt = -ge / tau_e,  dgi/dt = -gi / tau_i
    // v' = v_rest + (v - v_rest) a_m + ge c_e + gi c_i;  ge' = ge a_e;  gi' = gi a_i.
    float v_rest = 0, v_reset = 0, v_th = 0;
    float a_m = 0, a_e = 0, a_i = 0, c_e = 0, c_i = 0;
    std::int32_t refractory = 0;
};

struct model_state {
    float v = 0, ge = 0, gi = 0;
    std::int32_t refractory_left = 0;
};

model_coefficients coefficients_of(const protocol::neuron_params& p);
// Initial state; for lif, v from v-init (or uniform in [v-init, v-init-max) drawn from
// (seed, index), so it does not depend on the partition), else v-rest.
model_state initial_state(const protocol::neuron_params& p, std::uint64_t seed, std::int64_t index);

// linear, step, sigmoid, tanh, relu: y = f(u). Inline: the engine calls it per neuron per tick.
inline float step_rate(const model_coefficients& c, float u) {
    switch (c.model) {
    case protocol::neuron_model::linear: return u;
    case protocol::neuron_model::step: return u >= c.threshold ? 1.0f : 0.0f;
    case protocol::neuron_model::sigmoid: return 1.0f / (1.0f + std::exp(-u));
    case protocol::neuron_model::tanh: return std::tanh(u);
    case protocol::neuron_model::relu: return u > 0.0f ? u : 0.0f;
    case protocol::neuron_model::lif: break;
    }
    return 0.0f;
}

// One tick of lif. `input` (bias + external) and the synaptic sums enter the currents by
// sign: ge += excitatory (+ input if >= 0), gi += inhibitory (+ input if < 0). Then, unless
// refractory, v integrates; v > v_th spikes (y = 1), resets v to v_reset and holds it there
// for refractory - 1 more ticks (the spike tick counts). The currents always decay.
inline float step_lif(const model_coefficients& c, model_state& s, float input, float excitatory, float inhibitory) {
    if (input >= 0)
        excitatory += input;
    else
        inhibitory += input;
    s.ge += excitatory;
    s.gi += inhibitory;
    float spike = 0.0f;
    if (s.refractory_left > 0) {
        --s.refractory_left;
    } else {
        s.v = c.v_rest + (s.v - c.v_rest) * c.a_m + s.ge * c.c_e + s.gi * c.c_i;
        if (s.v > c.v_th) {
            spike = 1.0f;
            s.v = c.v_reset;
            s.refractory_left = c.refractory > 0 ? c.refractory - 1 : 0;
        }
    }
    s.ge *= c.a_e;
    s.gi *= c.a_i;
    return spike;
}

// Snapshot form of a state: lif [v, ge, gi, refractory ticks left]; other models none.
std::vector<float> variables_of(const model_coefficients& c, const model_state& s);
model_state state_from(const model_coefficients& c, const std::vector<float>& variables);

}  // namespace dnnc::sim
