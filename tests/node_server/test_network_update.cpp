// An update of a frozen network: the lead's plan takes new parameters (and, when synapses
// change, the new projections and synapses), and each node gets its share with the new
// weights.
#include "lead/network_update.hpp"

#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

using namespace dnnc;
using namespace dnnc::node_server;

namespace {

plan::network_plan xor_plan() {
    return plan::plan_network(protocol::load_document(std::string(DNNC_SOURCE_DIR) + "/examples/xor/xor.xml"));
}

}  // namespace

TEST_CASE("the plan takes an update's parameters, and its synapses only when they changed") {
    auto plan = xor_plan();
    auto update = *plan.doc.net;
    update.neurons[2].params.threshold = 0.25;  // h1
    update.synapses[0].weight = 3;
    take_update(plan, update, false);
    CHECK(plan.doc.net->neurons[2].params.threshold == 0.25);
    CHECK(plan.net.groups[plan.net.group_index.at("h1")].params.threshold == 0.25);
    CHECK(plan.doc.net->synapses[0].weight == 1);  // parameters only
    take_update(plan, update, true);
    CHECK(plan.doc.net->synapses[0].weight == 3);
}

TEST_CASE("each node's share of an update carries the new weights") {
    const auto plan = xor_plan();
    const plan::topology topo(*plan.doc.clu);
    auto update = *plan.doc.net;
    update.synapses[0].weight = 3;
    const auto shares = updated_shares(plan, topo, {}, std::vector<double>(plan.net.neuron_count(), 0.0), 1, update);
    REQUIRE(shares.size() == 2);
    CHECK(shares.count("n0") == 1);
    CHECK(shares.count("n1") == 1);
    bool carried = false;
    for (const auto& [node, share] : shares) {
        const auto doc = protocol::parse_document(share, node);
        for (const auto& s : doc.net->synapses) carried = carried || s.weight == 3;
    }
    CHECK(carried);
}

TEST_CASE("an update sends every node its parameters, or each its own share when synapses change, and is checked first") {
    const auto plan = xor_plan();
    const plan::topology topo(*plan.doc.clu);
    const std::vector<double> windows(plan.net.neuron_count(), 0.0);
    auto update = *plan.doc.net;
    update.neurons[2].params.threshold = 0.25;
    const auto parameters = update_bodies_of(plan, topo, {}, windows, 1, 1, update);
    CHECK_FALSE(parameters.resynapsed);
    CHECK_FALSE(parameters.redelayed);
    CHECK(parameters.shares.empty());
    CHECK(&parameters.for_node("n1") == &parameters.parameters);
    CHECK(protocol::parse_document(parameters.parameters, "parameters").net->neurons[2].params.threshold == 0.25);
    update.synapses[0].weight = 3;
    const auto weights = update_bodies_of(plan, topo, {}, windows, 1, 1, update);
    CHECK(weights.resynapsed);
    CHECK_FALSE(weights.redelayed);
    CHECK(weights.for_node("n1") == weights.shares.at("n1"));
    auto renamed = update;
    renamed.neurons[2].id = "elsewhere";
    CHECK_THROWS(update_bodies_of(plan, topo, {}, windows, 1, 1, renamed));
}
