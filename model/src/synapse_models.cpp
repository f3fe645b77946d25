#include "dnnc/model/synapse_models.hpp"

#include <algorithm>
#include <cstring>

namespace dnnc::model {

const std::vector<synapse_model_info>& synapse_model_catalog() {
    using r = synapse_parameter::range;
    static constexpr const char* traces = "times the traces of its synapses' spikes";
    static constexpr const char* initial = "is its synapses' initial state";
    static const std::vector<synapse_model_info> catalog = {
        {"static_synapse", false, {}, nullptr, 0},
        // NEST's models/stdp_synapse.h: pair-based, all-to-all; tau_minus is the target's.
        {"stdp_synapse",
         true,
         {{"tau_plus", 20, r::positive, "ms", traces},
          {"lambda", 0.01, r::non_negative, ""},
          {"alpha", 1, r::non_negative, ""},
          {"mu_plus", 1, r::non_negative, ""},
          {"mu_minus", 1, r::non_negative, ""},
          {"Wmax", 100, r::nonzero, "as the weight"}},
         "Wmax",
         0},
        // NEST's models/tsodyks2_synapse.h: short-term depression and facilitation.
        {"tsodyks2_synapse",
         true,
         {{"U", 0.5, r::unit_interval, ""},
          {"u", 0.5, r::unit_interval, "", initial},
          {"x", 1, r::unit_interval, "", initial},
          {"tau_rec", 800, r::positive, "ms"},
          {"tau_fac", 0, r::non_negative, "ms"}},
         nullptr,
         12},
        // NEST's models/vogels_sprekeler_synapse.h: inhibitory STDP (Vogels et al. 2011).
        {"vogels_sprekeler_synapse",
         true,
         {{"tau", 20, r::positive, "ms", traces},
          {"eta", 0.001, r::any, ""},
          {"alpha", 0.12, r::any, ""},
          {"Wmax", 1, r::nonzero, "as the weight"}},
         "Wmax",
         0},
    };
    return catalog;
}

const synapse_model_info* find_synapse_model(const std::string& name) {
    const auto& catalog = synapse_model_catalog();
    const auto it = std::find_if(catalog.begin(), catalog.end(), [&](const synapse_model_info& m) { return name == m.name; });
    return it == catalog.end() ? nullptr : &*it;
}

double resolved_synapse_model::value(const char* parameter) const {
    for (std::size_t k = 0; k < info->parameters.size(); ++k)
        if (std::strcmp(info->parameters[k].name, parameter) == 0) return values[k];
    throw usage_error(std::string(info->name) + " has no parameter " + parameter);
}

resolved_synapse_model resolve_synapse_model(const network& net, const std::string& reference, const source_location& where) {
    resolved_synapse_model out;
    const std::string name = reference.empty() ? "static_synapse" : reference;
    const auto own = std::find_if(net.synapse_models.begin(), net.synapse_models.end(),
                                  [&](const synapse_model& m) { return m.id == name; });
    out.info = find_synapse_model(own != net.synapse_models.end() ? own->model : name);
    if (!out.info) {
        if (own != net.synapse_models.end())
            throw config_error(own->where, "unknown synapse model '" + own->model + "'");
        throw config_error(where, "synapse-model '" + name + "' names no <synapse-model> and no synapse model");
    }
    out.id = name;
    for (const auto& p : out.info->parameters) out.values.push_back(p.fallback);
    if (own == net.synapse_models.end()) return out;
    for (const auto& written : own->params) {
        const auto& key = written.first;
        const auto& ps = out.info->parameters;
        const auto it = std::find_if(ps.begin(), ps.end(), [&](const synapse_parameter& p) { return key == p.name; });
        if (it == ps.end())
            throw config_error(own->where, std::string(out.info->name) + " has no parameter '" + key + "'");
        out.values[static_cast<std::size_t>(it - ps.begin())] = written.second;
    }
    return out;
}

}  // namespace dnnc::model
