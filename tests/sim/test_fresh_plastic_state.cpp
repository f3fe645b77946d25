// fresh_plastic_state against installed engines: for every neuron of a network with all
// three rules (one of whose populations has grown, so that its members are two extents),
// partitioned over two nodes, the synapse values and the traces it gives are exactly those
// the engines capture before any spike.
#include "share_cluster.hpp"

#include "dnnc/model/rows.hpp"
#include "dnnc/protocol/xml.hpp"
#include "dnnc/sim/fresh_plastic_state.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <utility>

using namespace dnnc;

namespace {

// (tau, post) of each trace, which must hold no spike.
std::set<std::pair<double, bool>> kinds_of(const std::vector<model::spike_trace>& traces) {
    std::set<std::pair<double, bool>> kinds;
    for (const auto& t : traces) {
        CHECK(t.ticks.empty());
        kinds.emplace(t.tau, t.post);
    }
    CHECK(kinds.size() == traces.size());
    return kinds;
}

}  // namespace

TEST_CASE("fresh_plastic_state gives every neuron the synapse values and traces its installed node holds before any spike") {
    // No drive and membranes far below threshold: nothing spikes in the first tick.
    const auto net = *protocol::parse_document(R"(<dnnc xmlns="urn:dnnc:1"><network name="f">
        <synapse-model id="ee" model="stdp_synapse" lambda="0.05" Wmax="4"/>
        <synapse-model id="ei" model="tsodyks2_synapse" U="0.3" u="0.4" x="0.9" tau_fac="20"/>
        <synapse-model id="ie" model="vogels_sprekeler_synapse" eta="0.05" Wmax="-6"/>
        <population id="E" size="30" model="iaf_psc_delta" seed="1" tau_minus="15" v-init="-70"/>
        <population id="I" size="10" model="iaf_psc_delta" seed="2" v-init="-70"/>
        <population id="Q" size="5" model="iaf_psc_delta" seed="3" v-init="-70"/>
        <projection from="E" to="E" kind="random" p="0.3" delay="5" seed="4" synapse-model="ee">
          <weight distribution="uniform" min="1" max="2"/></projection>
        <projection from="E" to="I" kind="fixed-indegree" indegree="4" weight="2" seed="5" synapse-model="ei"/>
        <projection from="I" to="E" kind="all" weight="-3" delay="2" synapse-model="ie"/>
        <projection from="Q" to="E" kind="all" weight="0.5"/>
        <grow population="E" add="6" applied="true"/>
      </network></dnnc>)",
                                               "f.xml")
                         .net;
    test::cluster c(net, test::scatter(51, 2, 3), 2);
    c.tick();
    const auto states = c.capture();
    REQUIRE(states.size() == 51);

    const model::synapse_rows rows(net);
    sim::fresh_plastic_state fresh(rows.synapse_models());
    const auto plastic = [&](std::size_t e) { return rows.synapse_models()[rows.synapse_model(e)].info->plastic; };
    std::size_t values = 0, traced = 0;
    for (const auto& s : states) {
        INFO("neuron " << s.index);
        const auto n = static_cast<model::neuron_index>(s.index);
        std::vector<float> synapses;
        std::vector<model::spike_trace> traces;
        rows.for_each(n, [&](model::neuron_index, float weight, std::uint16_t, std::size_t e) {
            if (!plastic(e)) return;
            fresh.append_synapse(rows.synapse_model(e), weight, synapses);
            fresh.add_target_trace(rows.synapse_model(e), c.network().params_of(n).tau_minus, traces);
        });
        for (std::size_t e = 0; e < rows.element_count(); ++e)
            if (plastic(e) && model::holds(rows.sources(e), static_cast<std::uint64_t>(n))) fresh.add_source_trace(rows.synapse_model(e), traces);
        CHECK(s.synapses == synapses);
        CHECK(kinds_of(s.traces) == kinds_of(traces));
        values += synapses.size();
        traced += !traces.empty();
    }
    CHECK(values > 300);
    CHECK(traced == 46);  // all but Q
    // tsodyks2: the weight, then w, x and u as the model starts them.
    const auto& i0 = states[static_cast<std::size_t>(c.neuron("I[0]"))].synapses;
    REQUIRE(i0.size() == 16);
    CHECK(std::vector<float>(i0.begin(), i0.begin() + 4) == std::vector<float>{2.0f, 2.0f, 0.9f, 0.4f});
}
