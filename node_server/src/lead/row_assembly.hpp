#pragma once
// The lead's output rows assembled from the nodes' tick reports (private to
// dnnc_node_server): each node reports the values of the output neurons it runs, in
// ascending index order, B lanes each; a tick's row, the columns of lane 0 then those of
// lane 1 and so on, is complete once every node waited for has reported it. The recorded
// spikes the nodes report travel with the row.
#include "dnnc/plan/plan.hpp"
#include "dnnc/protocol/control_plane.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dnnc::node_server {

class row_assembly {
public:
    // The columns, in document order: each output neuron with its name, of the network as
    // every grow of its document leaves it (a member a grow adds later reads 0 until then),
    // so that a row keeps its width for the whole run; one neuron may fill several columns.
    row_assembly(const plan::network_plan& plan, std::size_t nodes);
    // Values a row of `plan` holds: columns x lanes.
    static std::size_t values_per_row(const plan::network_plan& plan);
    const std::vector<std::string>& columns() const { return columns_; }

    // Node v's entry of a tick whose row is not complete yet: its values into their columns
    // (protocol_error for the wrong number), its spikes kept with the row when
    // `keep_spikes`, unless v reported that tick before. Whether it had not.
    bool place(std::size_t v, const protocol::reported_tick& entry, bool keep_spikes);

    struct complete_row {
        std::vector<float> values;
        std::vector<std::uint32_t> spikes;  // recorded neurons that spiked, node by node
    };
    // Tick `tick`'s row, once every node has reported it or is not waited for (waited(v)
    // false: a dead node in window mode, whose outputs read 0); none before.
    template <class Waited>
    std::optional<complete_row> take(std::int64_t tick, Waited&& waited) {
        const auto it = partial_.find(tick);
        if (it == partial_.end()) return std::nullopt;
        for (std::size_t v = 0; v < nodes_; ++v)
            if (!it->second.reported[v] && waited(v)) return std::nullopt;
        complete_row row{std::move(it->second.values), std::move(it->second.spikes)};
        partial_.erase(it);
        return row;
    }

private:
    std::size_t nodes_, lanes_;
    std::vector<std::string> columns_;
    std::vector<std::vector<std::vector<std::size_t>>> columns_of_;  // per node, per reported neuron
    struct partial_row {
        std::vector<float> values;
        std::vector<bool> reported;
        std::vector<std::uint32_t> spikes;
    };
    std::map<std::int64_t, partial_row> partial_;
};

}  // namespace dnnc::node_server
