// The planning graph: the neuron graph itself where the network is small and deterministic,
// bounded whatever the synapse count, exact rule arithmetic, one-to-one chains kept whole.
#include "dnnc/plan/planning_graph.hpp"

#include "dnnc/plan/neuron_graph.hpp"
#include "dnnc/partitioner/physical.hpp"
#include "dnnc/model/check.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

#include <cmath>

#include <map>
#include <numeric>
#include <string>

using namespace dnnc;

namespace {

model::network network_of(const std::string& body) {
    const auto doc = protocol::parse_document("<dnnc xmlns=\"urn:dnnc:1\"><network name=\"t\">" + body + "</network></dnnc>",
                                              "t.xml");
    model::check_network(*doc.net);
    return *doc.net;
}

partitioner::weight_t total_edge_weight(const partitioner::graph& g) {
    partitioner::weight_t total = 0;
    for (partitioner::vertex_id v = 0; v < g.vertex_count(); ++v)
        total += std::accumulate(g.edge_weights_begin(v), g.edge_weights_begin(v) + (g.neighbors_end(v) - g.neighbors_begin(v)),
                                 partitioner::weight_t{0});
    return total / 2;
}

std::map<std::pair<partitioner::vertex_id, partitioner::vertex_id>, partitioner::weight_t> edges_of(const partitioner::graph& g) {
    std::map<std::pair<partitioner::vertex_id, partitioner::vertex_id>, partitioner::weight_t> edges;
    for (partitioner::vertex_id v = 0; v < g.vertex_count(); ++v)
        for (auto it = g.neighbors_begin(v); it != g.neighbors_end(v); ++it)
            edges[{v, *it}] = g.edge_weights_begin(v)[it - g.neighbors_begin(v)];
    return edges;
}

// Whether the document's planning graph is its neuron graph, unit for unit.
void check_is_neuron_graph(const model::document& doc) {
    const auto cluster = plan::physical_of(*doc.clu);
    const auto planned = plan::planning_graph_of(*doc.net, cluster);
    const auto neurons = plan::units_of(model::expand(*doc.net, doc.file), cluster);
    CHECK(planned.chunk == 1);
    CHECK(planned.g.vertex_weights() == neurons.g.vertex_weights());
    CHECK(edges_of(planned.g) == edges_of(neurons.g));
    CHECK(planned.unit_first == neurons.first_neuron);
}

}  // namespace

TEST_CASE("without random projections, a small network's planning graph is its neuron graph") {
    for (const std::string name : {"xor/xor.xml", "tree7/tree7.xml", "mlp/mlp.xml", "mixed/mixed.xml"}) {
        INFO(name);
        const auto doc = protocol::load_document(std::string(DNNC_SOURCE_DIR) + "/examples/" + name);
        bool random = false;
        for (const auto& p : doc.net->projections) random |= p.kind == model::projection_kind::random;
        if (!random) check_is_neuron_graph(doc);
    }
}

TEST_CASE("small random projections are drawn as the nodes draw them: the planning graph is the neuron graph") {
    const auto doc = protocol::load_document(std::string(DNNC_SOURCE_DIR) + "/examples/cuba/cuba.xml");
    check_is_neuron_graph(doc);
    // With no budget to draw in, the same network is planned from its expected counts.
    plan::planning_options options;
    options.max_drawn = 0;
    CHECK(plan::planning_graph_of(*doc.net, plan::physical_of(*doc.clu), options).chunk > 1);
}

TEST_CASE("drawn projections that name a synapse model are drawn as the nodes draw them") {
    auto doc = protocol::load_document(std::string(DNNC_SOURCE_DIR) + "/examples/cuba/cuba.xml");
    doc.net->synapse_models.push_back({"short", "tsodyks2_synapse", {{"U", 0.2}}, {}});
    doc.net->projections[0].synapse_model = "short";
    doc.net->projections[1].synapse_model = "tsodyks2_synapse";
    model::check_document(doc);
    check_is_neuron_graph(doc);
}

TEST_CASE("rule arithmetic: exact counts for all and one-to-one, expected counts for random") {
    // a = neurons 0..99, b = 100..199.
    const auto net = network_of(R"(<population id="a" size="100" model="linear"/>
        <population id="b" size="100" model="linear"/>
        <projection from="a" to="b" kind="all"/>
        <projection from="a" to="a" kind="all" autapses="false"/>
        <projection from="a[0:50]" to="b[50:100]" kind="one-to-one"/>
        <projection from="b" to="a" kind="random" p="0.25" seed="3"/>)");
    plan::planning_options options;
    options.max_edges = 1'000'000;  // one neuron per segment
    options.max_drawn = 0;          // random projections by their expected counts
    options.fan_in_share = 1;
    const auto g = plan::planning_graph_of(net, partitioner::complete_cluster(2), options);
    REQUIRE(g.chunk == 1);
    // all: 100 x 100; all without autapses: 100 x 99 (inside a's units, so no edge between
    // different units except the 9,900); one-to-one 50; random 0.25 x 100 x 100 = 2,500
    // expected, each pair rounded up to 1 since 0.25 < 0.5.
    CHECK(total_edge_weight(g.g) == 10'000 + 9'900 + 50 + 10'000);
    // Fan-in (share 1): a[i] gets 99 + 25 = 124, b[i] gets 100, and b[50..99] one more.
    const auto& w = g.g.vertex_weights();
    CHECK(w[0] == 1 + 124);
    CHECK(w[100] == 1 + 100);
    CHECK(w[150] == 1 + 101);
}

TEST_CASE("fixed out-degree and fixed total number: fan-in expected per target, exact in total, drawn or expected") {
    for (const char* rule : {R"(kind="fixed-outdegree" outdegree="10")", R"(kind="fixed-total-number" n="1000")"}) {
        const auto net = network_of(std::string(R"(<population id="a" size="100" model="linear"/><population id="b" size="50" model="linear"/>
            <projection from="a" to="b" seed="1" )") + rule + "/>");
        for (const std::size_t drawn : {std::size_t{0}, std::size_t{500'000}}) {
            INFO(rule << ", draw budget " << drawn);
            plan::planning_options options;
            options.max_drawn = drawn;
            options.max_edges = 1'000'000;
            options.fan_in_share = 1;
            const auto g = plan::planning_graph_of(net, partitioner::complete_cluster(2), options);
            REQUIRE(g.chunk == 1);
            double fan_in = 0;
            bool spread = false;
            for (std::size_t t = 100; t < 150; ++t) {
                fan_in += static_cast<double>(g.g.vertex_weights()[t]) - 1;
                spread |= g.g.vertex_weights()[t] != 1 + 20;
            }
            CHECK(fan_in == 1000);  // 100 x 10, or 1,000: 20 per target expected
            CHECK(spread == (drawn > 0));
            if (drawn == 0) CHECK(total_edge_weight(g.g) == 100 * 50);  // 0.2 expected per pair, each at least 1
            else CHECK(total_edge_weight(g.g) == 1000);                    // the drawn synapses, repeats summed
        }
    }
}

TEST_CASE("fixed in-degree: every target's fan-in is exact, drawn or expected") {
    const auto net = network_of(R"(<population id="a" size="100" model="linear"/><population id="b" size="50" model="linear"/>
        <projection from="a" to="b" kind="fixed-indegree" indegree="20" seed="1"/>)");
    for (const std::size_t drawn : {std::size_t{0}, std::size_t{500'000}}) {
        INFO("draw budget " << drawn);
        plan::planning_options options;
        options.max_drawn = drawn;
        options.max_edges = 1'000'000;
        options.fan_in_share = 1;
        const auto g = plan::planning_graph_of(net, partitioner::complete_cluster(2), options);
        REQUIRE(g.chunk == 1);
        for (std::size_t t = 100; t < 150; ++t) CHECK(g.g.vertex_weights()[t] == 1 + 20);
        if (drawn == 0) CHECK(total_edge_weight(g.g) == 100 * 50);  // 0.2 expected per pair, each at least 1
        else CHECK(total_edge_weight(g.g) == 20 * 50);                 // the 1,000 drawn synapses, repeats summed
    }
}

TEST_CASE("the planning graph stays within its budget whatever the synapse count") {
    // 1.2 million neurons, 10^9 synapses by rule.
    const auto net = network_of(R"(<population id="e" size="960000" model="lif"/>
        <population id="i" size="240000" model="lif"/>
        <projection from="e" to="e" kind="random" p="0.000694" seed="1"/>
        <projection from="e" to="i" kind="random" p="0.000694" seed="2"/>
        <projection from="i" to="e" kind="random" p="0.000694" seed="3"/>
        <projection from="i" to="i" kind="random" p="0.000694" seed="4"/>)");
    const plan::planning_options options;
    const auto g = plan::planning_graph_of(net, partitioner::complete_cluster(8), options);
    CHECK(g.g.vertex_count() <= options.max_vertices);
    CHECK(g.g.edge_count() <= options.max_edges);
    CHECK(g.g.vertex_count() >= 8 * 32);  // enough units to balance eight nodes
    CHECK(g.neuron_count() == 1'200'000);
    // Every expected synapse is in the graph, as edges between units or inside them.
    const double expected = 0.000694 * 1'200'000.0 * 1'200'000.0;
    partitioner::weight_t inside_weight = 0;  // fan-in / share of every unit
    for (auto w : g.g.vertex_weights()) inside_weight += w;
    CHECK(static_cast<double>(inside_weight) == Approx(1'200'000.0 + expected / 8).epsilon(0.001));
}

TEST_CASE("one-to-one ranges pair whole segments, even when their offsets differ") {
    const auto net = network_of(R"(<population id="a" size="5000" model="linear"/>
        <population id="b" size="6000" model="linear"/>
        <population id="c" size="5000" model="linear"/>
        <projection from="a[0:4000]" to="b[1000:5000]" kind="one-to-one"/>
        <projection from="b[1000:5000]" to="c[333:4333]" kind="one-to-one"/>
        <projection from="a" to="c" kind="random" p="0.001" seed="1"/>
        <projection from="c" to="a" kind="random" p="0.001" seed="2"/>)");
    plan::planning_options options;
    options.max_edges = 2'000;  // forces chunks of many neurons
    options.max_drawn = 0;
    const auto g = plan::planning_graph_of(net, partitioner::complete_cluster(4), options);
    REQUIRE(g.chunk > 1);
    auto starts_segment = [&](std::uint64_t neuron) {
        return std::binary_search(g.segment_first.begin(), g.segment_first.end(), static_cast<model::neuron_index>(neuron));
    };
    const std::uint64_t a = 0, b = 5000, c = 11000;
    for (std::uint64_t k = 0; k < 4000; ++k) {
        INFO(k);
        REQUIRE(starts_segment(a + k) == starts_segment(b + 1000 + k));
        REQUIRE(starts_segment(b + 1000 + k) == starts_segment(c + 333 + k));
    }
    // Placed on four nodes, the chains stay whole: each pair's segments are joined by the
    // heaviest edges of the graph.
    const auto placed = plan::place(g, partitioner::complete_cluster(4));
    const auto node_of = g.spread(placed.node_of_unit);
    std::size_t cut = 0;
    for (std::uint64_t k = 0; k < 4000; ++k) cut += node_of[a + k] != node_of[b + 1000 + k];
    CHECK(cut < 4000 / 20);
}

TEST_CASE("more nodes than units: units go round-robin and the extra nodes idle") {
    const auto net = network_of(R"(<neuron id="x" model="linear"/><neuron id="y" model="linear"/>
        <synapse from="x" to="y"/>)");
    const auto g = plan::planning_graph_of(net, partitioner::complete_cluster(3));
    const auto placed = plan::place(g, partitioner::complete_cluster(3));
    CHECK(placed.node_of_unit == std::vector<std::uint32_t>{0, 1});
    CHECK(placed.quality.edge_cut == 1);
}

TEST_CASE("physical_of takes link capacities from bandwidths, none when no link declares one") {
    dnnc::model::cluster model;
    model.lead = "a";
    model.nodes = {{"a", "127.0.0.1", 1, 1.0, {}}, {"b", "127.0.0.1", 2, 1.0, {}}, {"c", "127.0.0.1", 3, 1.0, {}}};
    model.links = {{"a", "b", 0, std::nullopt, {}}, {"b", "c", 0, std::nullopt, {}}};
    CHECK(plan::physical_of(model).link_capacity.empty());
    model.links[1].bandwidth_bps = 1e7;
    const auto c = plan::physical_of(model);
    REQUIRE(c.link_capacity.size() == 2);
    CHECK(std::isinf(c.link_capacity[0]));
    CHECK(c.link_capacity[1] == 1e7);
}

TEST_CASE("physical_of maps a DNNC cluster and locates unknown nodes") {
    dnnc::model::cluster model;
    model.lead = "a";
    model.nodes = {{"a", "127.0.0.1", 1, 2.0, {}}, {"b", "127.0.0.1", 2, 1.0, {}}};
    model.links = {{"a", "b", 0, std::nullopt, {}}};
    const auto c = plan::physical_of(model);
    CHECK(c.names == std::vector<std::string>{"a", "b"});
    CHECK(c.capacity == std::vector<double>{2.0, 1.0});
    REQUIRE(c.links.size() == 1);
    model.links.push_back({"a", "zz", 0, std::nullopt, {"c.xml", 7, 3}});
    try {
        plan::physical_of(model);
        FAIL("no error");
    } catch (const dnnc::config_error& e) {
        CHECK(e.problems()[0].where.line == 7);
    }
}
