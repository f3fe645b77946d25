// Exporting a network as GraphML, DOT and JSON: structure, values of a snapshot, the node
// assignment, escaping, the DOT synapse limit, and errors for state that does not fit.
#include "dnnc/protocol/export.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace dnnc;
using namespace dnnc::model;
using namespace dnnc::protocol;

namespace {

// A network as export_network takes it: the compact form its synapses are drawn from, and
// its neurons and dense blocks (here its whole expansion, whose synapses export ignores).
struct exportable {
    network compact;
    expanded_network net;
};

exportable exportable_of(const document& doc) { return {*doc.net, expand(*doc.net, doc.file)}; }

exportable xor_network() { return exportable_of(load_document(std::string(DNNC_SOURCE_DIR) + "/examples/xor/xor.xml")); }

// a, b, h1, h2, out: inputs and h1 on n0, the rest on n1.
node_assignment xor_nodes() { return {{"n0", "n1"}, {0, 0, 0, 1, 1}}; }

// Three lif neurons driven by `in`, two of them with state.
const char* const lif_text = R"(<dnnc xmlns="urn:dnnc:1">
  <network name="small">
    <neuron id="in" model="linear"/>
    <population id="exc" size="3" model="lif"/>
    <projection from="in" to="exc" kind="all" weight="0.25" delay="2"/>
    <synapse from="exc[0]" to="exc[1]" weight="-1.5"/>
  </network>
  <state tick="17">
    <neuron id="in" output="0.5"/>
    <neuron id="exc[0]" output="1" state="-60 0.5 0.125 3" history="1 0"/>
    <neuron id="exc[2]" output="0" state="-52.25 0 0 0" history="0 0"/>
  </state>
</dnnc>)";

std::string export_to_string(const exportable& e, const snapshot_state* state, const node_assignment* nodes,
                             export_format format, std::uint64_t max_dot_synapses = 0) {
    std::ostringstream out;
    export_options options;
    options.format = format;
    options.max_dot_synapses = max_dot_synapses;
    export_network(out, e.compact, e.net, state, nodes, options);
    return out.str();
}

std::size_t occurrences(const std::string& text, const std::string& what) {
    std::size_t count = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++count;
    return count;
}

// Whether xmllint (when installed) finds the text well-formed; true without xmllint.
bool well_formed_xml(const std::string& text) {
    if (std::system("command -v xmllint > /dev/null 2>&1") != 0) return true;
    const std::string path = "/tmp/dnnc-test-export-" + std::to_string(getpid()) + ".graphml";
    std::ofstream(path) << text;
    const int status = std::system(("xmllint --noout " + path + " 2> /dev/null").c_str());
    std::remove(path.c_str());
    return status == 0;
}

}  // namespace

TEST_CASE("format names parse, and an unknown one is a usage error") {
    CHECK(parse_export_format("graphml") == export_format::graphml);
    CHECK(parse_export_format("dot") == export_format::dot);
    CHECK(parse_export_format("json") == export_format::json);
    CHECK_THROWS_AS(parse_export_format("svg"), usage_error);
    CHECK_THROWS_AS(parse_export_format("JSON"), usage_error);
}

TEST_CASE("JSON of the XOR network lists every neuron and synapse") {
    const auto net = xor_network();
    const auto nodes = xor_nodes();
    const auto j = nlohmann::json::parse(export_to_string(net, nullptr, &nodes, export_format::json));
    CHECK(j["network"] == "xor");
    CHECK(j["tick"].is_null());
    REQUIRE(j["neurons"].size() == 5);
    CHECK(j["neurons"][2]["id"] == "h1");
    CHECK(j["neurons"][2]["index"] == 2);
    CHECK(j["neurons"][2]["model"] == "step");
    CHECK(j["neurons"][2]["group"] == "h1");
    CHECK(j["neurons"][2]["node"] == "n0");
    CHECK(j["neurons"][4]["node"] == "n1");
    CHECK(j["neurons"][4]["output"].is_null());
    CHECK(j["neurons"][4]["state"].is_null());
    REQUIRE(j["synapses"].size() == 6);
    CHECK(j["synapses"][5] == nlohmann::json{{"from", "h2"}, {"to", "out"}, {"weight", -1}, {"delay", 1}});
    REQUIRE(j["nodes"].size() == 2);
    CHECK(j["nodes"][0] == nlohmann::json{{"id", "n0"}, {"neurons", 3}});
    CHECK(j["nodes"][1] == nlohmann::json{{"id", "n1"}, {"neurons", 2}});

    const auto bare = nlohmann::json::parse(export_to_string(net, nullptr, nullptr, export_format::json));
    CHECK(bare["neurons"][0]["node"].is_null());
    CHECK(bare["nodes"].empty());
}

TEST_CASE("JSON carries the values of a snapshot, with named lif variables") {
    const document doc = parse_document(lif_text, "small.xml");
    const auto net = exportable_of(doc);
    const auto j = nlohmann::json::parse(export_to_string(net, &*doc.state, nullptr, export_format::json));
    CHECK(j["tick"] == 17);
    REQUIRE(j["neurons"].size() == 4);
    CHECK(j["neurons"][0]["output"] == 0.5);
    CHECK(j["neurons"][0]["state"] == nlohmann::json::object());
    const auto& e0 = j["neurons"][1];
    CHECK(e0["id"] == "exc[0]");
    CHECK(e0["group"] == "exc");
    CHECK(e0["model"] == "lif");
    CHECK(e0["output"] == 1);
    CHECK(e0["state"] == nlohmann::json{{"v", -60}, {"ge", 0.5}, {"gi", 0.125}, {"refractory", 3}});
    CHECK(e0["history"] == nlohmann::json{1, 0});
    CHECK(j["neurons"][2]["output"].is_null());
    CHECK(j["neurons"][3]["state"]["v"] == -52.25);
    REQUIRE(j["synapses"].size() == 4);
    CHECK(j["synapses"][0] == nlohmann::json{{"from", "in"}, {"to", "exc[0]"}, {"weight", 0.25}, {"delay", 2}});
    CHECK(j["synapses"][2]["from"] == "exc[0]");
    CHECK(j["synapses"][2]["weight"] == -1.5);
}

TEST_CASE("JSON escapes quotes, backslashes and control characters") {
    auto net = xor_network();
    net.net.name = "say \"hi\"\\\n\t\x01";
    const node_assignment nodes{{"n\"0", "n1"}, {0, 0, 0, 1, 1}};
    const auto j = nlohmann::json::parse(export_to_string(net, nullptr, &nodes, export_format::json));
    CHECK(j["network"] == net.net.name);
    CHECK(j["neurons"][0]["node"] == "n\"0");
    CHECK(j["nodes"][0]["id"] == "n\"0");
}

TEST_CASE("GraphML declares its keys and holds every neuron and synapse") {
    const auto net = xor_network();
    const auto nodes = xor_nodes();
    const std::string g = export_to_string(net, nullptr, &nodes, export_format::graphml);
    CHECK(well_formed_xml(g));
    CHECK_THAT(g, Catch::StartsWith("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
    CHECK_THAT(g, Catch::Contains("<graph id=\"network\" edgedefault=\"directed\">"));
    for (const char* key : {"label", "index", "model", "group", "node"}) {
        CHECK_THAT(g, Catch::Contains("<key id=\"" + std::string(key) + "\" for=\"node\""));
    }
    CHECK_THAT(g, Catch::Contains("<key id=\"weight\" for=\"edge\" attr.name=\"weight\" attr.type=\"double\"/>"));
    CHECK_THAT(g, Catch::Contains("<key id=\"delay\" for=\"edge\" attr.name=\"delay\" attr.type=\"int\"/>"));
    CHECK_THAT(g, Catch::Contains("<data key=\"network\">xor</data>"));
    // Without a snapshot there are no value keys.
    CHECK(g.find("key id=\"output\"") == std::string::npos);
    CHECK(g.find("key id=\"tick\"") == std::string::npos);
    CHECK(occurrences(g, "<node id=") == 5);
    CHECK(occurrences(g, "<edge ") == 6);
    CHECK_THAT(g, Catch::Contains("<node id=\"n4\"><data key=\"label\">out</data><data key=\"index\">4</data>"
                                  "<data key=\"model\">step</data><data key=\"group\">out</data>"
                                  "<data key=\"node\">n1</data></node>"));
    CHECK_THAT(g, Catch::Contains("<edge source=\"n3\" target=\"n4\"><data key=\"weight\">-1</data>"
                                  "<data key=\"delay\">1</data></edge>"));
}

TEST_CASE("GraphML carries snapshot values and escapes XML special characters") {
    const document doc = parse_document(lif_text, "small.xml");
    auto net = exportable_of(doc);
    net.net.name = "a<b & \"c\" 'd'>";
    const node_assignment nodes{{"left&right", "n<1>"}, {0, 0, 1, 1}};
    const std::string g = export_to_string(net, &*doc.state, &nodes, export_format::graphml);
    CHECK(well_formed_xml(g));
    CHECK_THAT(g, Catch::Contains("<data key=\"network\">a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;</data>"));
    CHECK_THAT(g, Catch::Contains("<data key=\"node\">left&amp;right</data>"));
    CHECK_THAT(g, Catch::Contains("<data key=\"node\">n&lt;1&gt;</data>"));
    CHECK_THAT(g, Catch::Contains("<data key=\"tick\">17</data>"));
    for (const char* key : {"output", "v", "ge", "gi", "refractory"}) {
        CHECK_THAT(g, Catch::Contains("<key id=\"" + std::string(key) + "\" for=\"node\" attr.name=\"" + key +
                                      "\" attr.type=\"double\"/>"));
    }
    CHECK_THAT(g, Catch::Contains("<data key=\"label\">exc[0]</data>"));
    CHECK_THAT(g, Catch::Contains("<data key=\"output\">1</data><data key=\"v\">-60</data>"
                                  "<data key=\"ge\">0.5</data><data key=\"gi\">0.125</data>"
                                  "<data key=\"refractory\">3</data>"));
    CHECK_THAT(g, Catch::Contains("<data key=\"output\">0.5</data></node>"));
    CHECK_THAT(g, Catch::Contains("<data key=\"weight\">0.25</data><data key=\"delay\">2</data>"));
}

TEST_CASE("DOT has one cluster per node holding its neurons, and every synapse") {
    const auto net = xor_network();
    const auto nodes = xor_nodes();
    const std::string d = export_to_string(net, nullptr, &nodes, export_format::dot);
    CHECK_THAT(d, Catch::StartsWith("digraph \"xor\" {"));
    const auto n0 = d.find("subgraph \"cluster_n0\" {");
    const auto n1 = d.find("subgraph \"cluster_n1\" {");
    REQUIRE(n0 != std::string::npos);
    REQUIRE(n1 != std::string::npos);
    CHECK_THAT(d, Catch::Contains("label=\"n0 (3 neurons)\""));
    CHECK_THAT(d, Catch::Contains("label=\"n1 (2 neurons)\""));
    for (const char* neuron : {"a", "b", "h1", "h2", "out"}) {
        const auto at = d.find("\"" + std::string(neuron) + "\" [label=\"" + neuron + "\\n");
        REQUIRE(at != std::string::npos);
        // Inside the cluster of its node.
        const bool on_n0 = std::string(neuron) == "a" || std::string(neuron) == "b" || std::string(neuron) == "h1";
        CHECK((at > n1) == !on_n0);
        CHECK(at > n0);
    }
    CHECK(occurrences(d, " -> ") == 6);
    CHECK_THAT(d, Catch::Contains("\"a\" -> \"h1\" [label=\"1\""));
    CHECK_THAT(d, Catch::Contains("\"h2\" -> \"out\" [label=\"-1\", penwidth=3, color=\"#d62728\""));
    CHECK(occurrences(d, "{") == occurrences(d, "}"));

    const std::string bare = export_to_string(net, nullptr, nullptr, export_format::dot);
    CHECK(bare.find("subgraph") == std::string::npos);
    CHECK(occurrences(bare, " -> ") == 6);
}

TEST_CASE("DOT quotes population members, shows values, and escapes quotes") {
    const document doc = parse_document(lif_text, "small.xml");
    auto net = exportable_of(doc);
    net.net.name = "say \"hi\"";
    const std::string d = export_to_string(net, &*doc.state, nullptr, export_format::dot);
    CHECK_THAT(d, Catch::StartsWith("digraph \"say \\\"hi\\\"\" {"));
    CHECK_THAT(d, Catch::Contains("label=\"say \\\"hi\\\", tick 17\""));
    CHECK_THAT(d, Catch::Contains("\"exc[0]\" [label=\"exc[0]\\nlif\\ny=1\\nv=-60 ge=0.5 gi=0.125 refractory=3\""));
    CHECK_THAT(d, Catch::Contains("\"exc[1]\" [label=\"exc[1]\\nlif\","));
    CHECK_THAT(d, Catch::Contains("\"in\" -> \"exc[2]\" [label=\"0.25, d=2\""));
    CHECK_THAT(d, Catch::Contains("\"exc[0]\" -> \"exc[1]\""));
}

TEST_CASE("DOT writes at most the given number of synapses and says so") {
    const auto net = xor_network();
    const std::string d = export_to_string(net, nullptr, nullptr, export_format::dot, 2);
    CHECK(occurrences(d, " -> ") == 2);
    CHECK_THAT(d, Catch::Contains("first 2 of 6 synapses shown"));
    CHECK_THAT(d, Catch::StartsWith("// Only the first 2 of 6 synapses are written"));
    const std::string all = export_to_string(net, nullptr, nullptr, export_format::dot, 6);
    CHECK(occurrences(all, " -> ") == 6);
    CHECK(all.find("first") == std::string::npos);
}

TEST_CASE("the cells of dense blocks are exported as synapses marked dense") {
    const document doc = parse_document(R"(<dnnc xmlns="urn:dnnc:1"><network name="d">
        <population id="x" size="3"/><population id="y" size="2" model="relu"/>
        <projection from="x" to="y" kind="dense" init="normal" scale="0.5" seed="3"/></network></dnnc>)",
                                        "d.xml");
    const auto net = exportable_of(doc);
    REQUIRE(net.net.dense.size() == 1);
    const auto j = nlohmann::json::parse(export_to_string(net, nullptr, nullptr, export_format::json));
    REQUIRE(j["synapses"].size() == 6);
    CHECK(j["synapses"][0]["from"] == "x[0]");
    CHECK(j["synapses"][0]["to"] == "y[0]");
    CHECK(j["synapses"][0]["dense"] == true);
    CHECK(static_cast<float>(j["synapses"][0]["weight"].get<double>()) == net.net.dense[0].weights[0]);
    CHECK(j["synapses"][5]["from"] == "x[2]");
    CHECK(j["synapses"][5]["to"] == "y[1]");
    const std::string g = export_to_string(net, nullptr, nullptr, export_format::graphml);
    CHECK(well_formed_xml(g));
    CHECK_THAT(g, Catch::Contains("<key id=\"dense\" for=\"edge\""));
    CHECK(occurrences(g, "<data key=\"dense\">true</data>") == 6);
    CHECK(occurrences(export_to_string(net, nullptr, nullptr, export_format::dot), "style=dashed") == 6);
}

TEST_CASE("state that does not fit the network, or a bad assignment, is refused") {
    const document doc = parse_document(lif_text, "small.xml");
    const auto net = exportable_of(doc);
    std::ostringstream out;
    export_options options;

    snapshot_state unknown = *doc.state;
    unknown.neurons.push_back({"exc[3]", 0, {}, {}, {"small.xml", 12, 5}, {}, {}, {}});
    try {
        export_network(out, net.compact, net.net, &unknown, nullptr, options);
        FAIL("no error");
    } catch (const config_error& e) {
        CHECK_THAT(e.what(), Catch::Contains("small.xml:12:5: state of 'exc[3]': the network has no such neuron"));
    }

    snapshot_state twice = *doc.state;
    twice.neurons.push_back(twice.neurons[0]);
    CHECK_THROWS_AS(export_network(out, net.compact, net.net, &twice, nullptr, options), config_error);

    snapshot_state short_state = *doc.state;
    short_state.neurons[1].state = {-60, 0.5};
    try {
        export_network(out, net.compact, net.net, &short_state, nullptr, options);
        FAIL("no error");
    } catch (const config_error& e) {
        CHECK_THAT(e.what(), Catch::Contains("a lif neuron has 4 state variables (v, ge, gi, refractory), not 2"));
    }

    const node_assignment too_short{{"n0"}, {0, 0, 0}};
    CHECK_THROWS_AS(export_network(out, net.compact, net.net, nullptr, &too_short, options), usage_error);
    const node_assignment bad_node{{"n0"}, {0, 0, 1, 0}};
    CHECK_THROWS_AS(export_network(out, net.compact, net.net, nullptr, &bad_node, options), usage_error);
    CHECK(out.str().empty());
}

TEST_CASE("a failing stream is an io_error") {
    const auto net = xor_network();
    std::ofstream closed;
    export_options options;
    CHECK_THROWS_AS(export_network(closed, net.compact, net.net, nullptr, nullptr, options), io_error);
}

TEST_CASE("with half weights an export shows each weight as the engine keeps it") {
    const auto e = exportable_of(parse_document(R"(<dnnc xmlns="urn:dnnc:1"><network name="h">
        <population id="p" size="2" model="lif"/>
        <projection from="p[0]" to="p[1]" kind="all" weight="0.1"/>
        <synapse from="p[1]" to="p[0]" weight="-351.24"/>
      </network></dnnc>)", "h.xml"));
    for (const bool half : {false, true}) {
        std::ostringstream out;
        export_options options;
        options.half_weights = half;
        export_network(out, e.compact, e.net, nullptr, nullptr, options);
        const auto j = nlohmann::json::parse(out.str());
        REQUIRE(j["synapses"].size() == 2);
        INFO("half " << half);
        CHECK(j["synapses"][0]["weight"].get<float>() == (half ? -351.25f : -351.24f));
        CHECK(j["synapses"][1]["weight"].get<float>() == (half ? 0.0999755859375f : 0.1f));
    }
}
