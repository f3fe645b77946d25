// The lead's plan: every neuron placed once, each node's share of the network expanding to
// its synapses in canonical order, peers and routes, wait windows and the nesting of
// configs along the broadcast tree.
#include "dnnc/plan/plan.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>

using namespace dnnc;
using namespace dnnc::plan;

namespace {
network_plan plan_of(const std::string& example) {
    return plan_network(protocol::load_document(std::string(DNNC_SOURCE_DIR) + "/examples/" + example));
}

void collect(const model::node_config& c, std::vector<const model::node_config*>& out) {
    out.push_back(&c);
    for (const auto& child : c.children) collect(child, out);
}

// Every node's config for `doc` (links of 0.5 ms), the lead's first.
std::vector<model::node_config> node_configs(const model::document& doc) {
    const auto plan = plan_network(doc);
    const topology topo(*plan.doc.clu);
    const std::vector<double> latency(topo.link_count(), 0.5);
    const auto root = build_configs(plan, topo, latency, wait_windows(plan, topo, latency));
    std::vector<const model::node_config*> all;
    collect(root, all);
    std::vector<model::node_config> configs;
    for (const auto* c : all) configs.push_back(*c);
    return configs;
}
}  // namespace

TEST_CASE("every neuron lands on exactly one node, whose share expands to its incoming synapses in order") {
    for (const std::string example : {"tree7/tree7.xml", "xor/xor.xml", "cuba/cuba.xml", "mixed/mixed.xml"}) {
        INFO(example);
        const auto plan = plan_of(example);
        const topology topo(*plan.doc.clu);
        const std::vector<double> latency(topo.link_count(), 0.25);
        const auto windows = wait_windows(plan, topo, latency);
        const auto root = build_configs(plan, topo, latency, windows);
        std::vector<const model::node_config*> all;
        collect(root, all);
        REQUIRE(all.size() == plan.doc.clu->nodes.size());
        std::set<std::int64_t> seen;
        std::size_t synapses = 0;
        CHECK(plan.net.synapse_count() == 0);  // the lead expands no synapse
        const auto net = model::expand(*plan.doc.net, plan.doc.file);
        for (const auto* c : all) {
            REQUIRE(c->share);
            CHECK(c->share->synapses.size() <= plan.doc.net->synapses.size());
            std::vector<std::int64_t> local;
            for (const auto& n : c->neurons) local.push_back(n.index);
            const auto share = model::expand_share(*c->share, local);
            for (const auto i64 : local) {
                const auto i = static_cast<model::neuron_index>(i64);
                CHECK(seen.insert(i).second);
                REQUIRE(share.in_begin[i + 1] - share.in_begin[i] == net.in_begin[i + 1] - net.in_begin[i]);
                for (auto s = net.in_begin[i], at = share.in_begin[i]; s < net.in_begin[i + 1]; ++s, ++at) {
                    CHECK(share.in_source[at] == net.in_source[s]);
                    CHECK(share.in_weight[at] == net.in_weight[s]);
                    CHECK(share.in_delay[at] == net.in_delay[s]);
                }
            }
            synapses += share.synapse_count();
        }
        CHECK(seen.size() == net.neuron_count());
        CHECK(synapses == net.synapse_count());
    }
}

TEST_CASE("the broadcast tree respects the fan-out and nests subtrees") {
    const auto plan = plan_of("tree7/tree7.xml");  // fan-out 2
    const topology topo(*plan.doc.clu);
    const auto parents = broadcast_parents(topo, 2);
    CHECK(parents[0] == 0);
    CHECK(parents[1] == 0);
    CHECK(parents[2] == 0);
    CHECK(parents[3] == 1);
    CHECK(parents[6] == 2);
    const std::vector<double> latency(topo.link_count(), 0.0);
    const auto root = build_configs(plan, topo, latency, wait_windows(plan, topo, latency));
    CHECK(root.node == "n0");
    REQUIRE(root.children.size() == 2);
    CHECK(root.children[0].node == "n1");
    REQUIRE(root.children[0].children.size() == 2);
    CHECK(root.children[0].children[0].node == "n3");
    CHECK(root.children[1].children[1].node == "n6");
}

TEST_CASE("wait windows follow the slowest remote input's path latency") {
    const auto plan = plan_of("xor/xor.xml");
    const topology topo(*plan.doc.clu);
    const auto windows = wait_windows(plan, topo, {2.0});
    const auto& run = *plan.doc.run;
    const auto net = model::expand(*plan.doc.net, plan.doc.file);
    for (model::neuron_index i = 0; i < net.neuron_count(); ++i) {
        bool remote = false;
        for (auto s = net.in_begin[i]; s < net.in_begin[i + 1]; ++s)
            remote |= plan.node_of_neuron[net.in_source[s]] != plan.node_of_neuron[i];
        CHECK(windows[i] == Approx(remote ? run.window_factor * 2.0 + run.window_margin_ms : 0.0));
    }
}

TEST_CASE("peers carry routes along links and a config hash ignores the subtree") {
    const auto plan = plan_of("tree7/tree7.xml");
    const topology topo(*plan.doc.clu);
    const std::vector<double> latency(topo.link_count(), 1.0);
    auto root = build_configs(plan, topo, latency, wait_windows(plan, topo, latency));
    std::vector<const model::node_config*> all;
    collect(root, all);
    for (const auto* c : all)
        for (const auto& p : c->peers) {
            REQUIRE(p.via.size() >= 2);
            CHECK(p.via.front() == c->node);
            CHECK(p.via.back() == p.id);
            CHECK(p.latency_ms == Approx(static_cast<double>(p.via.size() - 1)));
        }
    const auto hash = config_hash(root);
    root.children.clear();
    CHECK(config_hash(root) == hash);
    root.neurons.front().window_ms += 1;
    CHECK(config_hash(root) != hash);
}

TEST_CASE("a lead reuses its last partition only for the same network on the same cluster") {
    const auto doc = protocol::load_document(std::string(DNNC_SOURCE_DIR) + "/examples/cuba/cuba.xml");
    partition_memo memo;
    const auto first = plan_network(doc, &memo);
    CHECK(first.node_of_neuron == plan_network(doc).node_of_neuron);
    CHECK(memo.node_of_neuron == first.node_of_neuron);
    // A memo that claims another partition for the same inputs is used as it is: the key
    // decides, nothing is recomputed.
    memo.node_of_neuron.assign(memo.node_of_neuron.size(), 0);
    CHECK(plan_network(doc, &memo).neurons_per_node[0] == first.net.neuron_count());
    // Another cluster (one node fewer) is partitioned afresh, and replaces the memo.
    auto smaller = doc;
    smaller.clu->nodes.pop_back();
    smaller.clu->links.erase(std::remove_if(smaller.clu->links.begin(), smaller.clu->links.end(),
                                            [&](const auto& l) { return l.from == doc.clu->nodes.back().id ||
                                                                        l.to == doc.clu->nodes.back().id; }),
                             smaller.clu->links.end());
    const auto other = plan_network(smaller, &memo);
    CHECK(other.node_of_neuron == plan_network(smaller).node_of_neuron);
    CHECK(memo.node_of_neuron == other.node_of_neuron);
}

TEST_CASE("a re-plan from a placement reuses the partition planned from the same placement, and only that") {
    // A re-balance plans its proposal while the network runs; the install that applies it, in
    // the pause, finds it in the memo instead of partitioning again.
    const auto doc = protocol::load_document(std::string(DNNC_SOURCE_DIR) + "/examples/cuba/cuba.xml");
    auto placed = placement_of(plan_network(doc));
    auto changed = doc;
    changed.clu->nodes.back().capacity *= 2;
    partition_memo memo;
    const auto proposal = plan_network(changed, &memo, &placed);
    CHECK(memo.node_of_neuron == proposal.node_of_neuron);
    memo.node_of_neuron.assign(memo.node_of_neuron.size(), 0);  // marks a reuse
    CHECK(plan_network(changed, &memo, &placed).neurons_per_node[0] == proposal.net.neuron_count());
    // Another migration weight, another placement, or none: partitioned afresh.
    for (int k = 0; k < 3; ++k) {
        memo.node_of_neuron.assign(memo.node_of_neuron.size(), 0);
        auto other = placed;
        if (k == 0) other.migration_weight = 2;
        if (k == 1) std::swap(other.node_of_neuron.front(), other.node_of_neuron.back());
        INFO(k);
        const auto again = k == 2 ? plan_network(changed, &memo) : plan_network(changed, &memo, &other);
        CHECK(again.neurons_per_node[0] < again.net.neuron_count());
    }
}

TEST_CASE("a dense layer that fits on a node stays whole, a larger one is split into row blocks") {
    auto doc = protocol::load_document(std::string(DNNC_SOURCE_DIR) + "/examples/mlp/mlp.xml");
    doc.clu->nodes.resize(2);  // two nodes of equal capacity
    doc.clu->links = {{doc.clu->nodes[0].id, doc.clu->nodes[1].id, 0.0, std::nullopt, {}}};
    doc.clu->lead = doc.clu->nodes[0].id;
    const auto plan = plan_network(doc);
    auto nodes_of = [&](const std::string& population) {
        std::set<std::uint32_t> nodes;
        const auto& g = plan.net.groups[plan.net.group_index.at(population)];
        for (auto i = g.first; i < g.first + g.size; ++i) nodes.insert(plan.node_of_neuron[i]);
        return nodes.size();
    };
    CHECK(nodes_of("h2") == 1);  // 256 x 512 weights: fits in half the network
    CHECK(nodes_of("out") == 1);
    CHECK(nodes_of("h1") == 2);  // 512 x 784 weights: more than a node's share
}

TEST_CASE("a node's load follows from the rules: exact counts, expected ones for random projections") {
    for (const std::string example : {"xor/xor.xml", "tree7/tree7.xml", "mlp/mlp.xml", "cuba/cuba.xml"}) {
        INFO(example);
        const auto plan = plan_of(example);
        const auto loads = loads_of(plan);
        const auto net = model::expand(*plan.doc.net, plan.doc.file);
        std::vector<double> synapses(loads.size(), 0.0);
        std::vector<std::uint64_t> neurons(loads.size(), 0), dense(loads.size(), 0);
        for (model::neuron_index i = 0; i < net.neuron_count(); ++i) {
            synapses[plan.node_of_neuron[i]] += static_cast<double>(net.in_begin[i + 1] - net.in_begin[i]);
            ++neurons[plan.node_of_neuron[i]];
        }
        std::vector<double> longest(loads.size(), 0.0);
        for (model::neuron_index i = 0; i < net.neuron_count(); ++i)
            longest[plan.node_of_neuron[i]] = std::max(longest[plan.node_of_neuron[i]], static_cast<double>(net.in_begin[i + 1] - net.in_begin[i]));
        for (const auto& d : net.dense)
            for (auto t : d.targets) dense[plan.node_of_neuron[t]] += d.sources.size();
        bool random = false;
        for (const auto& p : plan.doc.net->projections) random |= p.kind == model::projection_kind::random;
        for (std::size_t v = 0; v < loads.size(); ++v) {
            CHECK(loads[v].neurons == neurons[v]);
            CHECK(loads[v].dense_weights == dense[v]);
            CHECK_FALSE(loads[v].plastic);
            INFO("longest row " << longest[v] << ", bound " << loads[v].longest_row);
            if (random) {  // a sample of about n synapses lies within a few sqrt(n) of n
                CHECK(std::abs(loads[v].synapses - synapses[v]) <= 5 * std::sqrt(synapses[v]) + 1);
                CHECK(loads[v].longest_row >= longest[v]);
                CHECK(loads[v].longest_row <= longest[v] + 6 * std::sqrt(longest[v]) + 1);
            } else {
                CHECK(loads[v].synapses == synapses[v]);
                CHECK(loads[v].longest_row == longest[v]);
            }
        }
    }
}

// A node resolves the synapse models its connections name from its share alone.
TEST_CASE("every node's share carries the network's synapse models") {
    auto doc = protocol::load_document(std::string(DNNC_SOURCE_DIR) + "/examples/tree7/tree7.xml");
    doc.net->synapse_models.push_back({"short", "tsodyks2_synapse", {{"U", 0.2}, {"tau_fac", 100}}, {}});
    const auto all = node_configs(doc);
    REQUIRE(all.size() > 1);
    for (const auto& config : all) {
        const auto* c = &config;
        REQUIRE(c->share);
        CHECK(c->share->synapse_models == doc.net->synapse_models);
    }
}

// A node rewires its own neurons' synapses from its share alone: the populations' calcium and
// synaptic elements and the <structural-plasticity> travel with it.
TEST_CASE("every node's share carries the network's structural plasticity") {
    auto doc = protocol::load_document(std::string(DNNC_SOURCE_DIR) + "/examples/tree7/tree7.xml");
    model::population& l1 = doc.net->populations.at(1);
    l1.synaptic_elements.push_back({"Axon", {0.25, 0, 0.05, false, 0.5, 2}, {}});
    l1.synaptic_elements.push_back({"Den", {}, {}});
    l1.tau_ca = 500;
    l1.beta_ca = 0.01;
    model::structural_plasticity sp;
    sp.update_interval_ms = 100;
    sp.seed = 3;
    sp.synapses.push_back({"s", "Axon", "Den", "", 2.5, 1, 1.0, {}});
    doc.net->structural = sp;
    const auto all = node_configs(doc);
    REQUIRE(all.size() > 1);
    for (const auto& config : all) {
        const auto* c = &config;
        REQUIRE(c->share);
        CHECK(c->share->structural == doc.net->structural);
        CHECK(c->share->populations.at(1) == l1);
    }
}

// The memory check counts what plastic synapses cost: their own weight and delay on every
// node, and a rule's per-synapse state (tsodyks2_synapse: 12 bytes) on the targets' nodes.
TEST_CASE("a node's load counts a plastic network's synapses as keeping their own values, and the rules' state") {
    auto doc = protocol::load_document(std::string(DNNC_SOURCE_DIR) + "/examples/stdp/stdp.xml");
    doc.clu = model::cluster{"a", {{"a", "127.0.0.1", 0, 1, {}}, {"b", "127.0.0.1", 0, 1, {}}}, {{"a", "b", 0.0, std::nullopt, {}}}, {}};
    const auto stdp_only = loads_of(plan_network(doc));
    for (const auto& load : stdp_only) {
        CHECK(load.values_per_synapse);  // no distribution in the network: only plasticity asks for it
        CHECK(load.plastic);
        CHECK(load.rule_state_bytes == 0);
    }
    doc.net->projections[1].synapse_model = "tsodyks2_synapse";  // E_I: 40 synapses into each of 100 I neurons
    const auto plan = plan_network(doc);
    const auto loads = loads_of(plan);
    double state = 0;
    for (std::size_t v = 0; v < loads.size(); ++v) {
        std::uint64_t inhibitory = 0;
        for (std::size_t i = 400; i < 500; ++i) inhibitory += plan.node_of_neuron[i] == v;
        CHECK(loads[v].rule_state_bytes == 12.0 * 40 * static_cast<double>(inhibitory));
        state += loads[v].rule_state_bytes;
    }
    CHECK(state == 12.0 * 4000);
}
