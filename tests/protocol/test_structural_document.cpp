// The document layer of structural plasticity: synaptic elements, calcium and
// <structural-plasticity> are read as written, round-trip (also in a node's share), and every
// unsound one is refused with a located error.
#include "dnnc/model/check.hpp"
#include "dnnc/protocol/xml.hpp"
#include "network_problems.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace dnnc;
using namespace dnnc::model;
using namespace dnnc::protocol;

namespace {

// NEST's examples/structural_plasticity.py in small: excitatory and inhibitory
// iaf_psc_alpha populations whose synapses grow from their synaptic elements.
const char* const brunel_like = R"(<?xml version="1.0"?>
<dnnc xmlns="urn:dnnc:1">
  <network name="sp" dt="0.1">
    <population id="E" size="800" model="iaf_psc_alpha" tau_Ca="10000" beta_Ca="0.001">
      <synaptic-element name="Den_ex" growth_rate="0.0001" eta="0" eps="0.05" continuous="false"/>
      <synaptic-element name="Den_in" growth_rate="0.0001" eta="0" eps="0.05" continuous="false"/>
      <synaptic-element name="Axon_ex" growth_rate="0.0001" eta="0" eps="0.05" continuous="false"/>
    </population>
    <population id="I" size="200" model="iaf_psc_alpha" tau_Ca="10000" beta_Ca="0.001">
      <synaptic-element name="Den_ex" growth_rate="0.0004" eta="0" eps="0.2" continuous="false"/>
      <synaptic-element name="Den_in" growth_rate="0.0001" eta="0" eps="0.2" continuous="false"/>
      <synaptic-element name="Axon_in" growth_rate="0.0001" eta="0" eps="0.2" continuous="false"/>
    </population>
    <poisson to="E I" rate="10000" weight="1" seed="1"/>
    <structural-plasticity structural_plasticity_update_interval="10000" seed="7">
      <structural-synapse id="synapse_ex" pre_synaptic_element="Axon_ex" post_synaptic_element="Den_ex" weight="585" delay-ms="1"/>
      <structural-synapse id="synapse_in" pre_synaptic_element="Axon_in" post_synaptic_element="Den_in" weight="-585" delay-ms="1"
                          synapse-model="static_synapse"/>
    </structural-plasticity>
  </network>
</dnnc>
)";

// What the loader says about `body` (lines from 2 on) inside a network: the first problem.
diagnostic first_problem(const std::string& body, const std::string& after_network = "") {
    return test::network_problems(body, "sp.xml", after_network).front();
}

// Two populations with one element each and the structural synapse that uses both: sound.
const std::string axon_and_dendrite = R"(<population id="E" size="4" model="iaf_psc_alpha">
<synaptic-element name="Axon"/>
</population>
<population id="D" size="4" model="iaf_psc_exp">
<synaptic-element name="Den"/>
</population>)";  // lines 2-7
const std::string axon_to_dendrite = R"(<structural-plasticity>
<structural-synapse id="s" pre_synaptic_element="Axon" post_synaptic_element="Den"/>
</structural-plasticity>)";  // lines 8-10 after axon_and_dendrite

// A population E with one element whose attributes are `curve`, used by a structural synapse.
std::string with_curve(const std::string& curve) {
    return "<population id=\"E\" size=\"4\" model=\"iaf_psc_alpha\">\n<synaptic-element name=\"A\" " + curve +
           "/>\n</population>\n<structural-plasticity><structural-synapse id=\"s\" pre_synaptic_element=\"A\" "
           "post_synaptic_element=\"A\"/></structural-plasticity>";
}

// The two populations above, `before` them, and one structural synapse with the attributes
// `synapse` (line 9, or 10 after a line `before`); with `second`, the attributes of a
// structural synapse 't' after it.
std::string with_synapse(const std::string& synapse, const std::string& before = "", const std::string& second = "") {
    return before + axon_and_dendrite +
           "\n<structural-plasticity>\n<structural-synapse id=\"s\" pre_synaptic_element=\"Axon\" post_synaptic_element=\"Den\" " +
           synapse + "/>\n" + (second.empty() ? "" : "<structural-synapse id=\"t\" " + second + "/>\n") + "</structural-plasticity>";
}

struct bad_case {
    const char* name;
    std::string body;
    int line;
    const char* message;
    std::string after_network = "";
};

}  // namespace

TEST_CASE("structural plasticity is read with its values and NEST's defaults") {
    const document doc = parse_document(brunel_like, "sp.xml");
    CHECK_NOTHROW(check_document(doc));
    const network& net = *doc.net;
    REQUIRE(net.populations.size() == 2);
    const population& e = net.populations[0];
    CHECK(e.tau_ca == 10000);
    CHECK(e.beta_ca == 0.001);
    REQUIRE(e.synaptic_elements.size() == 3);
    CHECK(e.synaptic_elements[2].name == "Axon_ex");
    CHECK(e.synaptic_elements[2].where.line == 7);
    const growth_curve& c = e.synaptic_elements[0].curve;
    CHECK(c.growth_rate == 0.0001);
    CHECK(c.eta == 0);
    CHECK(c.eps == 0.05);
    CHECK_FALSE(c.continuous);
    CHECK(c.tau_vacant == 0.1);  // NEST's default
    CHECK(c.z == 0);
    CHECK(net.populations[1].synaptic_elements[0].curve.growth_rate == 0.0004);
    REQUIRE(net.structural);
    CHECK(net.structural->update_interval_ms == 10000);
    CHECK(net.structural->seed == 7);
    CHECK(net.structural->where.line == 15);
    REQUIRE(net.structural->synapses.size() == 2);
    const structural_synapse& ex = net.structural->synapses[0];
    CHECK(ex.id == "synapse_ex");
    CHECK(ex.pre_element == "Axon_ex");
    CHECK(ex.post_element == "Den_ex");
    CHECK(ex.weight == 585);
    CHECK(ex.delay_ms == 1.0);
    CHECK(delay_ticks(ex, net.dt) == 10);
    CHECK(ex.synapse_model.empty());
    CHECK(net.structural->synapses[1].synapse_model == "static_synapse");

    // Every default, as NEST has it.
    const document bare = parse_document(R"(<dnnc xmlns="urn:dnnc:1"><network name="b">
      <population id="P" size="2" model="iaf_psc_delta"><synaptic-element name="X"/></population>
      <structural-plasticity><structural-synapse id="s" pre_synaptic_element="X" post_synaptic_element="X"/></structural-plasticity>
    </network></dnnc>)", "bare.xml");
    CHECK_NOTHROW(check_document(bare));
    const population& p = bare.net->populations[0];
    CHECK(p.tau_ca == 10000);
    CHECK(p.beta_ca == 0.001);
    CHECK(p.synaptic_elements[0].curve == growth_curve{});
    CHECK(bare.net->structural->update_interval_ms == 10000);
    CHECK(bare.net->structural->seed == 0);
    const structural_synapse& s = bare.net->structural->synapses[0];
    CHECK(s.weight == 1);
    CHECK(s.delay == 1);
    CHECK_FALSE(s.delay_ms);

    // A network without it has none.
    CHECK_FALSE(parse_document(R"(<dnnc xmlns="urn:dnnc:1"><network name="n"><neuron id="a"/></network></dnnc>)", "n.xml").net->structural);
}

TEST_CASE("structural plasticity round-trips, in a document and in a node's share") {
    document doc = parse_document(brunel_like, "sp.xml");
    // Every attribute away from its default.
    synaptic_element& x = doc.net->populations[1].synaptic_elements[2];
    x.curve = {0.25, -0.5, 1.5, false, 0.75, 3.5};
    doc.net->populations[1].tau_ca = 2500.5;
    doc.net->populations[1].beta_ca = 0.125;
    doc.net->structural->update_interval_ms = 100.5;
    doc.net->structural->synapses[1].delay_ms.reset();
    doc.net->structural->synapses[1].delay = 3;
    CHECK_NOTHROW(check_document(doc));

    const std::string written = serialize(doc);
    const document again = parse_document(written, "again.xml");
    CHECK(again == doc);
    CHECK(serialize(again) == written);
    CHECK_THAT(written, Catch::Contains(R"(<synaptic-element name="Axon_in" growth_rate="0.25" eta="-0.5" eps="1.5" continuous="false" tau_vacant="0.75" z="3.5"/>)"));
    CHECK_THAT(written, Catch::Contains(R"(<structural-plasticity structural_plasticity_update_interval="100.5" seed="7">)"));
    CHECK_THAT(written, Catch::Contains(R"(delay="3" synapse-model="static_synapse"/>)"));
    CHECK_THAT(written, Catch::Contains(R"(tau_Ca="2500.5" beta_Ca="0.125")"));
    // Defaults are left out.
    CHECK_THAT(written, !Catch::Contains(R"(tau_Ca="10000")"));
    CHECK_THAT(written, !Catch::Contains(R"(tau_vacant="0.1")"));

    // A document that changes nothing writes no element of its own.
    network plain = *doc.net;
    plain.structural.reset();
    for (auto& p : plain.populations) p.synaptic_elements.clear();
    document bare;
    bare.net = plain;
    CHECK_THAT(serialize(bare), !Catch::Contains("structural"));

    // A node receives the elements and <structural-plasticity> in its share.
    node_config config;
    config.node = "n0";
    config.network = "sp";
    config.lead = "n0";
    config.port = 7100;
    config.neurons.push_back({"E[0]", 0, 0, 0, false, false, doc.net->populations[0].params});
    config.share = *doc.net;
    node_config child = config;
    child.node = "n1";
    child.port = 7101;
    config.children.push_back(child);
    const node_config received = parse_node_config(serialize(config));
    CHECK(received == config);
    REQUIRE(received.share);
    CHECK(received.share->structural == doc.net->structural);
    CHECK(received.share->populations[1].synaptic_elements == doc.net->populations[1].synaptic_elements);
    CHECK(received.children.at(0).share->structural == doc.net->structural);
}

TEST_CASE("every unsound piece of structural plasticity is refused with a located error") {
    const bad_case cases[] = {
        {"duplicate element",
         "<population id=\"E\" size=\"4\" model=\"iaf_psc_alpha\">\n<synaptic-element name=\"A\"/>\n<synaptic-element name=\"A\"/>\n"
         "</population>\n<structural-plasticity><structural-synapse id=\"s\" pre_synaptic_element=\"A\" post_synaptic_element=\"A\"/>"
         "</structural-plasticity>",
         4, "population 'E': synaptic element 'A' is declared twice (first at line 3)"},
        {"element on a rate model",
         "<population id=\"R\" size=\"4\" model=\"tanh\">\n<synaptic-element name=\"A\"/>\n</population>\n"
         "<structural-plasticity><structural-synapse id=\"s\" pre_synaptic_element=\"A\" post_synaptic_element=\"A\"/>"
         "</structural-plasticity>",
         3, "population 'R' is of model tanh; only populations of spiking models (lif, iaf_psc_exp"},
        {"element on a spike source", "<spike-source id=\"S\" size=\"2\">\n<synaptic-element name=\"A\"/>\n</spike-source>", 3,
         "no declaration found for element 'synaptic-element'"},
        {"pre element of no population", with_synapse("", "", "pre_synaptic_element=\"Axn\" post_synaptic_element=\"Den\""), 10,
         "structural-synapse 't': pre_synaptic_element 'Axn' is declared by no population (no <synaptic-element name=\"Axn\">)"},
        {"post element of no population", with_synapse("", "", "pre_synaptic_element=\"Axon\" post_synaptic_element=\"Dn\""), 10,
         "structural-synapse 't': post_synaptic_element 'Dn' is declared by no population"},
        {"element used by no structural synapse",
         "<population id=\"E\" size=\"4\" model=\"iaf_psc_alpha\">\n<synaptic-element name=\"A\"/>\n<synaptic-element name=\"B\"/>\n"
         "</population>\n<structural-plasticity><structural-synapse id=\"s\" pre_synaptic_element=\"A\" post_synaptic_element=\"A\"/>"
         "</structural-plasticity>",
         4, "element 'B' of population 'E' is used by no <structural-synapse>"},
        {"elements without structural-plasticity", axon_and_dendrite, 3,
         "population 'E' has synaptic elements, and the network has no <structural-plasticity> to grow synapses from them"},
        {"structural-plasticity without elements",
         "<population id=\"E\" size=\"4\" model=\"iaf_psc_alpha\"/>\n" + axon_to_dendrite, 3,
         "structural-plasticity: no population has a <synaptic-element> to grow synapses from"},
        {"eta equal to eps", with_curve("eta=\"0.3\" eps=\"0.3\""), 3,
         "population 'E': synaptic element 'A': eta and eps must differ (the growth curve's width zeta"},
        {"growth_rate infinite", with_curve("growth_rate=\"INF\""), 3, "synaptic element 'A': growth_rate must be a finite number"},
        {"eps not a number", with_curve("eps=\"NaN\""), 3, "synaptic element 'A': eps must be a finite number"},
        {"tau_vacant zero", with_curve("tau_vacant=\"0\""), 3, "synaptic element 'A': tau_vacant must lie in (0, 1], not 0"},
        {"tau_vacant above one", with_curve("tau_vacant=\"1.5\""), 3, "tau_vacant must lie in (0, 1], not 1.5"},
        {"z negative", with_curve("z=\"-1\""), 3, "synaptic element 'A': z must be >= 0, not -1"},
        {"unknown growth curve", with_curve("growth_curve=\"linear\""), 3, "'linear' not in enumeration"},
        {"tau_Ca zero", "<population id=\"E\" size=\"4\" model=\"iaf_psc_alpha\" tau_Ca=\"0\"/>", 2,
         "population 'E': tau_Ca must be a positive number (ms)"},
        {"beta_Ca negative", "<population id=\"E\" size=\"4\" model=\"iaf_psc_alpha\" beta_Ca=\"-0.001\"/>", 2,
         "population 'E': beta_Ca must be a positive number"},
        {"update interval not whole ticks",
         axon_and_dendrite + "\n<structural-plasticity structural_plasticity_update_interval=\"0.15\">\n"
                             "<structural-synapse id=\"s\" pre_synaptic_element=\"Axon\" post_synaptic_element=\"Den\"/>\n"
                             "</structural-plasticity>",
         8, "structural-plasticity: structural_plasticity_update_interval must be a positive whole number of ticks of 0.1 ms (got 0.15)"},
        {"update interval zero",
         axon_and_dendrite + "\n<structural-plasticity structural_plasticity_update_interval=\"0\">\n"
                             "<structural-synapse id=\"s\" pre_synaptic_element=\"Axon\" post_synaptic_element=\"Den\"/>\n"
                             "</structural-plasticity>",
         8, "structural_plasticity_update_interval must be a positive whole number of ticks of 0.1 ms (got 0)"},
        {"delay zero", with_synapse("delay=\"0\""), 9, "structural-synapse 's': delay must be at least 1 tick (got 0)"},
        {"delay beyond the limit", with_synapse("delay=\"70000\""), 9,
         "structural-synapse 's': delay 70000 exceeds the limit of 65535 ticks"},
        {"delay-ms below a tick", with_synapse("delay-ms=\"0.04\""), 9,
         "structural-synapse 's': delay-ms 0.04 is a delay below one tick (dt 0.1 ms)"},
        {"delay and delay-ms", with_synapse("delay=\"2\" delay-ms=\"0.2\""), 9,
         "delay given both in ticks (delay) and in ms (delay-ms)"},
        {"weight infinite", with_synapse("weight=\"-INF\""), 9, "structural-synapse 's': weight must be a finite number"},
        {"plastic synapse model", with_synapse("synapse-model=\"stdp_synapse\""), 9,
         "structural-synapse 's': synapse-model 'stdp_synapse' (stdp_synapse) is plastic; structural synapses are static for now"},
        {"plastic own synapse model", with_synapse("synapse-model=\"short\"", "<synapse-model id=\"short\" model=\"tsodyks2_synapse\"/>\n"), 10,
         "structural-synapse 's': synapse-model 'short' (tsodyks2_synapse) is plastic; structural synapses are static for now"},
        {"unknown synapse model", with_synapse("synapse-model=\"nope\""), 9,
         "structural-synapse 's': synapse-model 'nope' names no <synapse-model> and no synapse model (static_synapse"},
        {"duplicate structural synapse id",
         axon_and_dendrite + "\n<structural-plasticity>\n"
                             "<structural-synapse id=\"s\" pre_synaptic_element=\"Axon\" post_synaptic_element=\"Den\"/>\n"
                             "<structural-synapse id=\"s\" pre_synaptic_element=\"Den\" post_synaptic_element=\"Axon\"/>\n"
                             "</structural-plasticity>",
         10, "duplicate structural-synapse id 's' (first defined at line 9)"},
        {"two structural-plasticity elements", axon_and_dendrite + "\n" + axon_to_dendrite + "\n" + axon_to_dendrite, 11,
         "a network has at most one <structural-plasticity> (the first is at line 8)"},
        {"no structural synapse", axon_and_dendrite + "\n<structural-plasticity>\n</structural-plasticity>", 9,
         "empty content is not valid for content model '(structural-synapse+)'"},
        {"batch", axon_and_dendrite + "\n" + axon_to_dendrite, 8,
         "structural-plasticity: the run has batch 4; structural plasticity rewires one network, so it runs with batch 1",
         "\n<run batch=\"4\"/>"},
        {"window sync", axon_and_dendrite + "\n" + axon_to_dendrite, 8,
         "structural-plasticity: the run has sync=\"window\"; structural plasticity runs in lockstep", "\n<run sync=\"window\"/>"},
    };
    for (const auto& c : cases) {
        INFO(c.name);
        const diagnostic first = first_problem(c.body, c.after_network);
        CHECK(first.where.file == "sp.xml");
        CHECK(first.where.line == c.line);
        CHECK(first.where.column > 0);
        CHECK_THAT(first.message, Catch::Contains(c.message));
    }
}

TEST_CASE("synaptic elements of a spike source, built in code, are refused") {
    document doc = parse_document(brunel_like, "sp.xml");
    population source;
    source.id = "S";
    source.size = 3;
    source.params.model = neuron_model::spike_source;
    source.where = {"sp.xml", 30, 5};
    source.synaptic_elements.push_back({"Axon_ex", growth_curve{}, {"sp.xml", 31, 7}});
    doc.net->populations.push_back(source);
    try {
        check_network(*doc.net);
        FAIL("accepted");
    } catch (const config_error& e) {
        REQUIRE(e.problems().size() == 1);
        CHECK(e.problems()[0].where.line == 31);
        CHECK_THAT(e.problems()[0].message, Catch::Contains("spike source 'S' is of model spike-source; only populations of spiking models"));
    }
}

TEST_CASE("a batch of one and structural plasticity run together") {
    const std::string text = std::string(brunel_like).replace(std::string(brunel_like).find("</dnnc>"), 7, "<run batch=\"1\"/></dnnc>");
    CHECK_NOTHROW(check_document(parse_document(text, "sp.xml")));
}
