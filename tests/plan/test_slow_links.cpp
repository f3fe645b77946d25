// Placement around slow links: the estimate of a tick's time, and the nodes the lead leaves
// idle when a link is too slow for what its node would exchange.
#include "dnnc/plan/compression.hpp"
#include "dnnc/plan/plan.hpp"
#include "dnnc/plan/slow_links.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace dnnc;
using namespace dnnc::plan;

namespace {
// brunel_small on four nodes linked n0 - n1, n0 - n2, n1 - n2 and n2 - n3 (n3's only link),
// that link declaring `slow` and the others 1Gbit (no bandwidths at all when `slow` is
// empty); packets sent as `send` says.
model::document four_nodes(const std::string& slow, const std::string& send) {
    auto doc = protocol::load_document(std::string(DNNC_SOURCE_DIR) + "/examples/brunel/brunel_small.xml");
    auto& clu = *doc.clu;
    clu.nodes.resize(4, clu.nodes.front());
    clu.links.clear();
    for (std::size_t k = 0; k < 4; ++k) clu.nodes[k].id = "n" + std::to_string(k);
    const auto fast = slow.empty() ? std::optional<double>() : std::optional<double>(1e9);
    const auto narrow = slow.empty() ? std::optional<double>() : std::optional<double>(std::stod(slow));
    clu.links.push_back({"n0", "n1", 0, fast, {}});
    clu.links.push_back({"n0", "n2", 0, fast, {}});
    clu.links.push_back({"n1", "n2", 0, fast, {}});
    clu.links.push_back({"n2", "n3", 0, narrow, {}});
    doc.run->send = send == "always" ? model::send_mode::always : model::send_mode::nonzero;
    return doc;
}
}  // namespace

TEST_CASE("a node behind a link too slow for the dense packets it would exchange is left idle") {
    const auto plan = plan_network(four_nodes("1e7", "always"));
    CHECK(plan.neurons_per_node[3] == 0);
    for (std::size_t v = 0; v < 3; ++v) CHECK(plan.neurons_per_node[v] > 700);
    CHECK(plan.placement_note.find("left idle for slow links: n3") != std::string::npos);
    CHECK(plan.placement_note.find("link n2 - n3") != std::string::npos);
    // Condition 1 still holds on the nodes that run the network.
    CHECK(plan.quality.violation_count == 0);
}

TEST_CASE("every node keeps its share when no link declares a bandwidth, or the slow one is fast enough") {
    for (const auto& [slow, send] : {std::pair<std::string, std::string>{"", "always"}, {"1e9", "always"}, {"1e9", "nonzero"}}) {
        INFO(slow << " " << send);
        const auto plan = plan_network(four_nodes(slow, send));
        for (std::size_t v = 0; v < 4; ++v) CHECK(plan.neurons_per_node[v] > 550);
        CHECK(plan.placement_note.empty());
    }
    // Declaring only fast links changes nothing against declaring none.
    CHECK(plan_network(four_nodes("1e9", "always")).node_of_neuron == plan_network(four_nodes("", "always")).node_of_neuron);
}

TEST_CASE("the estimate: compute of the busiest node, plus the busiest link's packets at its bandwidth") {
    const auto doc = four_nodes("1e7", "always");
    const auto neurons = neurons_and_dense_blocks(*doc.net, doc.file);
    const std::size_t n = neurons.neuron_count();
    // Everything on n0: nothing crosses a link.
    std::vector<std::uint32_t> all_on_n0(n, 0);
    const auto alone = estimate_tick(*doc.net, neurons, *doc.clu, *doc.run, all_on_n0);
    CHECK(alone.transfer_ms == 0);
    CHECK_FALSE(alone.busiest_link);
    CHECK(alone.compute_ms == Approx(tick_compute_ms(loads_of(*doc.net, all_on_n0, 4)[0])));
    // One neuron on n3 reads every source of its fixed in-degree projections: 2,499 values
    // come to it in one packet (~10 kB) over n0 - n2 - n3: ~8 ms at 10 Mbit/s.
    auto one_on_n3 = all_on_n0;
    one_on_n3[0] = 3;
    const auto lonely = estimate_tick(*doc.net, neurons, *doc.clu, *doc.run, one_on_n3);
    REQUIRE(lonely.busiest_link);
    CHECK(lonely.transfer_ms > 7.9);
    CHECK(lonely.transfer_ms < 8.2);
    // With send="nonzero" a spiking neuron's value is expected in 20 Hz x 0.1 ms of ticks.
    auto sparse = *doc.run;
    sparse.send = model::send_mode::nonzero;
    CHECK(estimate_tick(*doc.net, neurons, *doc.clu, sparse, one_on_n3).transfer_ms < 0.1);
}

TEST_CASE("the lead is never left idle, nor a node whose absence would split the others") {
    // n2 - n3 slow and n3 the lead: n2 could go only if n0 and n1 stayed joined to n3.
    auto doc = four_nodes("1e7", "always");
    doc.clu->lead = "n3";
    const auto plan = plan_network(doc);
    CHECK(plan.neurons_per_node[3] > 0);
    CHECK(plan.neurons_per_node[2] > 0);
}
