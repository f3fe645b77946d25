// The one place that names every rule: adding a rule is a file in rules/ and a line here
// (and its entry in protocol's catalogue, synapse_models.cpp, which documents are checked
// against).
#include "rules/synapse_rule.hpp"

#include "dnnc/core/error.hpp"

#include <cstring>

namespace dnnc::sim {

std::unique_ptr<synapse_rule> make_stdp_synapse(const model::resolved_synapse_model& model);
std::unique_ptr<synapse_rule> make_tsodyks2_synapse(const model::resolved_synapse_model& model);
std::unique_ptr<synapse_rule> make_vogels_sprekeler_synapse(const model::resolved_synapse_model& model);

std::unique_ptr<synapse_rule> make_synapse_rule(const model::resolved_synapse_model& model) {
    using factory = std::unique_ptr<synapse_rule> (*)(const model::resolved_synapse_model&);
    static const struct {
        const char* name;
        factory make;
    } rules[] = {
        {"stdp_synapse", make_stdp_synapse},
        {"tsodyks2_synapse", make_tsodyks2_synapse},
        {"vogels_sprekeler_synapse", make_vogels_sprekeler_synapse},
    };
    for (const auto& r : rules)
        if (std::strcmp(r.name, model.info->name) == 0) return r.make(model);
    throw usage_error(std::string("no synapse rule for ") + model.info->name);
}

}  // namespace dnnc::sim
