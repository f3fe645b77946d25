// stdp_synapse: pair-based STDP with all-to-all pairing, after NEST's models/stdp_synapse.h
// (Guetig et al. 2003's weight dependence: mu = 0 additive, mu = 1 multiplicative). The
// weight is taken in units of Wmax, whose sign it keeps:
//   a target spike reaching the synapse facilitates: w/Wmax += lambda (1 - w/Wmax)^mu_plus K+,
//   capped at 1;
//   a source spike depresses: w/Wmax -= alpha lambda (w/Wmax)^mu_minus K-, floored at 0.
// K+ is the source's trace (tau_plus), K- the target's (its tau_minus).
#include "rules/synapse_rule.hpp"

#include <cmath>

namespace dnnc::sim {

namespace {
class stdp_synapse final : public synapse_rule_of<stdp_synapse> {
public:
    explicit stdp_synapse(const model::resolved_synapse_model& m)
        : tau_plus_(m.value("tau_plus")), lambda_(m.value("lambda")), alpha_(m.value("alpha")), mu_plus_(m.value("mu_plus")),
          mu_minus_(m.value("mu_minus")), w_max_(m.value("Wmax")) {}

    static constexpr bool uses_source_trace = true, uses_target_trace = true, keeps_state = false;
    double source_trace_tau() const override { return tau_plus_; }

    void target_spike(std::size_t, float& w, double source_trace) const {
        const double relative = static_cast<double>(w) / w_max_;
        const double norm = relative + lambda_ * power(1.0 - relative, mu_plus_) * source_trace;
        w = static_cast<float>(norm < 1.0 ? norm * w_max_ : w_max_);
    }
    void source_spike(std::size_t, float& w, double target_trace, double) {
        const double relative = static_cast<double>(w) / w_max_;
        const double norm = relative - alpha_ * lambda_ * power(relative, mu_minus_) * target_trace;
        w = static_cast<float>(norm > 0.0 ? norm * w_max_ : std::copysign(0.0, w_max_));
    }

private:
    // x^mu; the additive (0) and multiplicative (1) cases exactly as std::pow gives them,
    // without its cost.
    static double power(double x, double mu) { return mu == 0.0 ? 1.0 : mu == 1.0 ? x : std::pow(x, mu); }

    double tau_plus_, lambda_, alpha_, mu_plus_, mu_minus_, w_max_;
};
}  // namespace

std::unique_ptr<synapse_rule> make_stdp_synapse(const model::resolved_synapse_model& model) {
    return std::make_unique<stdp_synapse>(model);
}

}  // namespace dnnc::sim
