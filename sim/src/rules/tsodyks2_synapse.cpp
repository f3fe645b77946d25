// tsodyks2_synapse: short-term depression and facilitation (Tsodyks & Markram 1997; Fuhrmann
// et al. 2002), after NEST's models/tsodyks2_synapse.h. Each synapse keeps its weight w, the
// fraction of resources x and their use u. A source spike is delivered with weight w x u;
// then, h ms after the source's previous spike (the first: after time 0), x and u move on
// for the next one, as NEST computes them:
//   x = 1 + (x - x u - 1) exp(-h / tau_rec),  u = U + u (1 - U) exp(-h / tau_fac)
// (no facilitation when tau_fac is 0). The store holds the delivered weight; the rule keeps
// w, x and u (12 bytes a synapse).
#include "rules/synapse_rule.hpp"

#include <cmath>

namespace dnnc::sim {

namespace {
class tsodyks2_synapse final : public synapse_rule_of<tsodyks2_synapse> {
public:
    explicit tsodyks2_synapse(const model::resolved_synapse_model& m)
        : U_(m.value("U")), u0_(m.value("u")), x0_(m.value("x")), tau_rec_(m.value("tau_rec")), tau_fac_(m.value("tau_fac")) {}

    static constexpr bool uses_source_trace = false, uses_target_trace = false, keeps_state = true;
    double source_trace_tau() const override { return 0; }
    std::size_t state_size() const override { return 3; }
    void save_state(std::size_t i, float* values) const override {
        values[0] = state_[i].weight;
        values[1] = state_[i].x;
        values[2] = state_[i].u;
    }
    void load_state(std::size_t i, const float* values) override { state_[i] = {values[0], values[1], values[2]}; }

    void add_synapses(const std::vector<float>& weights) override {
        for (const float w : weights) state_.push_back({w, static_cast<float>(x0_), static_cast<float>(u0_)});
    }
    void source_spike(std::size_t i, float& w, double, double since_ms) {
        auto& s = state_[i];
        const double x = s.x, u = s.u;
        w = static_cast<float>(x * u * static_cast<double>(s.weight));
        const double x_decay = std::exp(-since_ms / tau_rec_);
        const double u_decay = tau_fac_ < 1.0e-10 ? 0.0 : std::exp(-since_ms / tau_fac_);
        s.x = static_cast<float>(1.0 + (x - x * u - 1.0) * x_decay);
        s.u = static_cast<float>(U_ + u * (1.0 - U_) * u_decay);
    }
    float weight(std::size_t i, float) const override { return state_[i].weight; }

private:
    struct synapse_state {
        float weight, x, u;
    };
    double U_, u0_, x0_, tau_rec_, tau_fac_;
    std::vector<synapse_state> state_;
};
}  // namespace

std::unique_ptr<synapse_rule> make_tsodyks2_synapse(const model::resolved_synapse_model& model) {
    return std::make_unique<tsodyks2_synapse>(model);
}

}  // namespace dnnc::sim
