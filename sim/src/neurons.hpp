#pragma once
// A node's neurons (private to dnnc_sim): their models' coefficients and states, stepped
// from the sums the synapses fed (models.hpp holds the models themselves).
#include "models.hpp"

#include "dnnc/sim/engine.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace dnnc::sim {

// The sums a tick feeds each local neuron, `batch` values each (neuron * batch + lane): u
// for rate models, excitatory and inhibitory for spiking ones.
struct neuron_sums {
    std::vector<float> u, excitatory, inhibitory;
    void resize(std::size_t values) {
        u.assign(values, 0.0f);
        excitatory.assign(values, 0.0f);
        inhibitory.assign(values, 0.0f);
    }
};

// Do neurons of these parameters step alike? Initial values (v-init given per member) aside.
inline bool same_dynamics(const model::neuron_params& a, model::neuron_params b) {
    b.v_init = a.v_init;
    b.v_init_max = a.v_init_max;
    b.v_init_std = a.v_init_std;
    b.u_init = a.u_init;
    return a == b;
}

class neuron_block {
public:
    // Runs of consecutive neurons that share their parameters (a population's members) share
    // one entry of a small table of coefficients, which keeps the per-tick memory traffic low.
    neuron_block(const std::vector<neuron_spec>& neurons, double dt, std::size_t batch) : batch_(batch) {
        set_parameters(neurons, dt);
        state_.resize(neurons.size() * batch);
        for (std::size_t k = 0; k < neurons.size(); ++k) {
            const auto initial = initial_state(neurons[k].params, neurons[k].seed, neurons[k].index);
            for (std::size_t lane = 0; lane < batch; ++lane) state_.set(k * batch + lane, initial);
        }
    }

    // The coefficients of `neurons`' parameters (the same neurons, each of the same model as
    // before): a state is the model's variables as they are, whatever the parameters, so
    // every state carries over unchanged.
    void set_parameters(const std::vector<neuron_spec>& neurons, double dt) {
        table_.clear();
        runs_.clear();
        coefficient_of_.clear();
        for (std::size_t k = 0; k < neurons.size(); ++k) {
            const auto& params = neurons[k].params;
            if (k == 0 || !same_dynamics(params, neurons[k - 1].params)) {
                table_.push_back(coefficients_of(params, dt));
                runs_.push_back({k, k});
            }
            ++runs_.back().end;
            coefficient_of_.push_back(static_cast<std::uint32_t>(table_.size() - 1));
        }
    }

    struct run {
        std::size_t begin, end;
    };
    const std::vector<run>& runs() const { return runs_; }
    const model_coefficients& coefficients(std::size_t neuron) const { return table_[coefficient_of_[neuron]]; }
    bool is_spiking(std::size_t neuron) const { return model::is_spiking(coefficients(neuron).model); }

    // Steps neurons [begin, end), every lane, from the sums in sums.u (rate models) or
    // sums.excitatory and sums.inhibitory (spiking models): one loop per run of neurons that
    // share their coefficients. ext: this tick's external input (null: none). With the
    // Poisson arrays (one lane), spiking neurons add them to their sums and leave them zero.
    // Leaves the spiking sums zero.
    void step(std::size_t begin, std::size_t end, neuron_sums& sums, const float* ext, float* poisson_e, float* poisson_i,
              float* out) {
        auto r = std::upper_bound(runs_.begin(), runs_.end(), begin, [](std::size_t i, const run& x) { return i < x.end; });
        for (; r != runs_.end() && r->begin < end; ++r) {
            const std::size_t first = std::max(begin, r->begin) * batch_, last = std::min(end, r->end) * batch_;
            const auto& c = coefficients(std::max(begin, r->begin));
            if (model::is_spiking(c.model))
                step_spiking_run(c, first, last, state_.v.data(), state_.ge.data(), state_.gi.data(), state_.xe.data(),
                                 state_.xi.data(), state_.extra.data(), state_.refractory_left.data(), ext, sums.excitatory.data(), sums.inhibitory.data(), poisson_e,
                                 poisson_i, out);
            else
                for (std::size_t j = first; j < last; ++j) out[j] = step_rate(c, sums.u[j]);
        }
    }

    // A neuron's state in its snapshot form (lane 0), and back.
    std::vector<float> variables(std::size_t neuron) const {
        return variables_of(coefficients(neuron), state_.get(neuron * batch_));
    }
    void set_variables(std::size_t neuron, const std::vector<float>& variables) {
        state_.set(neuron * batch_, state_from(coefficients(neuron), variables));
    }

private:
    std::size_t batch_;
    std::vector<model_coefficients> table_;
    std::vector<std::uint32_t> coefficient_of_;
    std::vector<run> runs_;
    model_states state_;
};

}  // namespace dnnc::sim
