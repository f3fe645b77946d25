#pragma once
// A network's plastic connection elements, and the lead's histograms of their weights
// (private to dnnc_node_server): the nodes bin their own synapses (weight_bins.hpp) and the
// lead adds the bins, so what it holds grows with the histograms, never with the synapses.
#include "dnnc/model/model.hpp"
#include "dnnc/plan/plan.hpp"
#include "weight_bins.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dnnc::node_server {

// A connection element whose synapses learn: how its weights are named (its projection's id,
// or projection[i], synapse[i]), whether it is an explicit synapse, its synapse model as the
// element names it and the model itself, and the bound of its weights (Wmax), if the model
// has one.
struct plastic_element {
    std::size_t element;
    std::string label;
    bool synapse;
    std::string reference, model;
    std::optional<double> bound;
};

// How element `element` of `net` is named: its projection's id, or projection[i], synapse[i].
std::string element_label(const model::network& net, std::size_t element);
// The network's plastic connection elements, in element order.
std::vector<plastic_element> plastic_elements(const model::network& net);

// The histograms of `plastic`'s weights at `tick`: one per plastic projection, and one for
// the plastic explicit synapses of each synapse model ("synapses (ID)"), so that their count
// never grows with the synapses. `bin_everywhere` adds every node's bins of the groups asked
// to their histograms. Fixed bins over [0, Wmax] (over [Wmax, 0] for a negative Wmax); for a
// model without a bound (tsodyks2_synapse, whose w never changes) over [min(0, least w),
// max(0, greatest w)] of the whole network, which a first round asks the nodes for.
//   {"tick", "bins", "projections": [{"projection", "model", "lo", "hi", "synapses", "bins"(, "min", "max")}...]}
nlohmann::json weight_histograms_of(const std::vector<plastic_element>& plastic, std::int64_t tick,
                                    const std::function<void(weight_groups&)>& bin_everywhere);

// A client's page of plastic weights ({"node", "from", "limit"}; with "grown": true, the
// synapses structural plasticity grew, which every node with members lists, the one running
// the first asked) of `plan`'s network, asked of one node by `ask` (a weights-page frame:
// node, {"from", "limit" (at most max_weights_page), "grown"}) and named: each row's
// connection element's label (or the pairing's id) and its neurons' references. Only the
// page passes through the lead. usage_error for a node the cluster has not.
nlohmann::json named_weights_page(const plan::network_plan& plan, const std::vector<plastic_element>& plastic,
                                  const nlohmann::json& request,
                                  const std::function<nlohmann::json(std::size_t node, const nlohmann::json& page)>& ask);

}  // namespace dnnc::node_server
