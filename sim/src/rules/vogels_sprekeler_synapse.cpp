// vogels_sprekeler_synapse: symmetric inhibitory STDP (Vogels et al. 2011), after NEST's
// models/vogels_sprekeler_synapse.h. |w| grows by eta K at every pairing and shrinks by
// alpha eta at each source spike, bounded by |Wmax| and 0; the weight keeps Wmax's sign:
//   a target spike reaching the synapse: |w| += eta K+ (the source's trace, time constant tau);
//   a source spike: |w| += eta K- (the target's trace, its tau_minus), then |w| -= alpha eta.
#include "rules/synapse_rule.hpp"

#include <algorithm>
#include <cmath>

namespace dnnc::sim {

namespace {
class vogels_sprekeler_synapse final : public synapse_rule_of<vogels_sprekeler_synapse> {
public:
    explicit vogels_sprekeler_synapse(const model::resolved_synapse_model& m)
        : tau_(m.value("tau")), eta_(m.value("eta")), alpha_(m.value("alpha")), w_max_(m.value("Wmax")) {}

    static constexpr bool uses_source_trace = true, uses_target_trace = true, keeps_state = false;
    double source_trace_tau() const override { return tau_; }

    void target_spike(std::size_t, float& w, double source_trace) const { w = static_cast<float>(facilitate(w, source_trace)); }
    void source_spike(std::size_t, float& w, double target_trace, double) {
        w = static_cast<float>(depress(facilitate(w, target_trace)));
    }

private:
    double facilitate(double w, double trace) const {
        return std::copysign(std::min(std::abs(w) + eta_ * trace, std::abs(w_max_)), w_max_);
    }
    double depress(double w) const { return std::copysign(std::max(std::abs(w) - alpha_ * eta_, 0.0), w_max_); }

    double tau_, eta_, alpha_, w_max_;
};
}  // namespace

std::unique_ptr<synapse_rule> make_vogels_sprekeler_synapse(const model::resolved_synapse_model& model) {
    return std::make_unique<vogels_sprekeler_synapse>(model);
}

}  // namespace dnnc::sim
