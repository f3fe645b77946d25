// The document layer of growing populations: <grow> is read with its location, round-trips
// (also in a node's share), and every grow the network cannot take is refused with a located
// error that says why. Documents with grows go through parse and check only here: their
// members are numbered by the expander.
#include "dnnc/model/check.hpp"
#include "dnnc/protocol/xml.hpp"
#include "network_problems.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace dnnc;
using namespace dnnc::model;
using namespace dnnc::protocol;

namespace {

// Two populations joined by rules that take new members, E grown once already and twice
// more on schedule.
const char* const growing = R"(<?xml version="1.0"?>
<dnnc xmlns="urn:dnnc:1">
  <network name="g" dt="0.1">
    <population id="E" size="80" model="iaf_psc_alpha"/>
    <population id="I" size="20" model="iaf_psc_alpha"/>
    <spike-source id="S" size="4" rate="10"/>
    <projection from="E" to="I" kind="fixed-indegree" indegree="5" weight="2" delay-ms="1.5"/>
    <projection from="I" to="E" kind="random" p="0.1" weight="-4"/>
    <projection from="S" to="E" kind="all"/>
    <input id="in" neurons="E[0:4]"/>
    <record neurons="E I"/>
    <grow population="E" add="10" at-ms="0" applied="true"/>
    <grow population="E" add="5" at-ms="12.5"/>
    <grow population="I" add="1" at-ms="12.5"/>
  </network>
</dnnc>
)";

// What the loader says about `body` (lines from 2 on) inside a network: every problem.
std::vector<diagnostic> problems_of(const std::string& body) { return test::network_problems(body, "grow.xml"); }

// Two iaf_psc_alpha populations, E (8) and I (2), on lines 2 and 3.
const std::string two_populations = "<population id=\"E\" size=\"8\" model=\"iaf_psc_alpha\"/>\n"
                                    "<population id=\"I\" size=\"2\" model=\"iaf_psc_alpha\"/>\n";

struct bad_case {
    const char* name;
    std::string body;
    int line;
    const char* message;
};

}  // namespace

TEST_CASE("grows are read in document order with their values, defaults and locations") {
    const document doc = parse_document(growing, "g.xml");
    CHECK_NOTHROW(check_document(doc));
    const auto& grows = doc.net->grows;
    REQUIRE(grows.size() == 3);
    CHECK(grows[0].population == "E");
    CHECK(grows[0].add == 10);
    CHECK(grows[0].at_ms == 0);
    CHECK(grows[0].applied);
    CHECK(grows[0].where.file == "g.xml");
    CHECK(grows[0].where.line == 12);
    CHECK(grows[0].where.column == 5);
    CHECK(grows[1].add == 5);
    CHECK(grows[1].at_ms == 12.5);
    CHECK_FALSE(grows[1].applied);
    CHECK(grows[2].population == "I");
    CHECK(grows[2].where.line == 14);

    const document bare = parse_document(R"(<dnnc xmlns="urn:dnnc:1"><network name="b">
      <population id="P" size="2"/><grow population="P" add="3"/></network></dnnc>)", "bare.xml");
    CHECK_NOTHROW(check_document(bare));
    REQUIRE(bare.net->grows.size() == 1);
    CHECK(bare.net->grows[0].at_ms == 0);
    CHECK_FALSE(bare.net->grows[0].applied);

    CHECK(parse_document(R"(<dnnc xmlns="urn:dnnc:1"><network name="n"><neuron id="a"/></network></dnnc>)", "n.xml").net->grows.empty());
}

TEST_CASE("grows round-trip, in a document and in a node's share") {
    const document doc = parse_document(growing, "g.xml");
    const std::string written = serialize(doc);
    const document again = parse_document(written, "again.xml");
    CHECK(again == doc);
    CHECK(again.net->grows == doc.net->grows);
    CHECK(serialize(again) == written);
    CHECK_THAT(written, Catch::Contains(R"(<grow population="E" add="10" applied="true"/>)"));  // at-ms 0 left out
    CHECK_THAT(written, Catch::Contains(R"(<grow population="E" add="5" at-ms="12.5"/>)"));

    // A grow counts in a network's equality.
    document other = doc;
    other.net->grows[2].applied = true;
    CHECK_FALSE(other == doc);

    node_config config;
    config.node = "n0";
    config.network = "g";
    config.lead = "n0";
    config.port = 7100;
    config.share = *doc.net;
    const node_config received = parse_node_config(serialize(config));
    CHECK(received == config);
    REQUIRE(received.share);
    CHECK(received.share->grows == doc.net->grows);
}

TEST_CASE("a population that rules of any size reach grows") {
    // One-to-one between two populations grown alike, fixed-outdegree, list, static and
    // plastic synapse models (named or of the document's own), single synapses onto members,
    // records and inputs: none is sized once.
    const std::string body = two_populations +
                             "<population id=\"F\" size=\"8\"/>\n"
                             "<synapse-model id=\"short\" model=\"tsodyks2_synapse\"/>\n"
                             "<projection from=\"E\" to=\"F\" kind=\"one-to-one\"/>\n"
                             "<projection from=\"E\" to=\"I\" kind=\"fixed-outdegree\" outdegree=\"1\" synapse-model=\"static_synapse\"/>\n"
                             "<projection from=\"E\" to=\"I\" kind=\"all\" synapse-model=\"stdp_synapse\"/>\n"
                             "<projection from=\"E\" to=\"E\" kind=\"random\" p=\"0.5\" synapse-model=\"short\"/>\n"
                             "<synapse from=\"E[0]\" to=\"I[1]\" synapse-model=\"stdp_synapse\"/>\n"
                             "<input id=\"x\" neurons=\"E\"/>\n<record neurons=\"E[0:2]\" variables=\"V_m\"/>\n"
                             "<grow population=\"E\" add=\"3\" at-ms=\"0.05\"/>\n<grow population=\"F\" add=\"3\" at-ms=\"0.05\"/>\n"
                             "<grow population=\"I\" add=\"1\" at-ms=\"1e3\"/>";
    const std::string text = "<dnnc xmlns=\"urn:dnnc:1\"><network name=\"t\">\n" + body + "\n</network></dnnc>\n";
    CHECK_NOTHROW(check_document(parse_document(text, "grow.xml")));
}

TEST_CASE("every grow the network cannot take is refused with a located error saying why") {
    const bad_case cases[] = {
        {"unknown population", two_populations + "<grow population=\"Q\" add=\"1\"/>", 4, "grow of 'Q': no population 'Q'"},
        {"a neuron", "<neuron id=\"a\"/>\n<grow population=\"a\" add=\"1\"/>", 3,
         "grow of 'a': 'a' is a <neuron>; only a <population> grows"},
        {"a Poisson spike source", "<spike-source id=\"S\" size=\"2\" rate=\"10\"/>\n<grow population=\"S\" add=\"1\"/>", 3,
         "grow of 'S': 'S' is a spike source; growing a spike source is not supported: its spikes are given"},
        {"a spike source of listed spikes",
         "<spike-source id=\"S\" size=\"2\"><spike t-ms=\"1\" index=\"0\"/></spike-source>\n<grow population=\"S\" add=\"2\"/>", 3,
         "growing a spike source is not supported: its spikes are given"},
        {"add zero", two_populations + "<grow population=\"E\" add=\"0\"/>", 4, "grow of 'E': add must be at least 1 (got 0)"},
        {"add negative", two_populations + "<grow population=\"E\" add=\"-3\"/>", 4, "grow of 'E': add must be at least 1 (got -3)"},
        {"add not a number", two_populations + "<grow population=\"E\" add=\"many\"/>", 4, "'many'"},
        {"no add", two_populations + "<grow population=\"E\"/>", 4, "missing required attribute 'add'"},
        {"at-ms negative", two_populations + "<grow population=\"E\" add=\"1\" at-ms=\"-1\"/>", 4,
         "grow of 'E': at-ms must be a finite number >= 0 (ms)"},
        {"at-ms infinite", two_populations + "<grow population=\"E\" add=\"1\" at-ms=\"INF\"/>", 4,
         "grow of 'E': at-ms must be a finite number >= 0 (ms)"},
        {"at-ms past every tick", two_populations + "<grow population=\"E\" add=\"1\" at-ms=\"1e300\"/>", 4,
         "grow of 'E': at-ms 1e+300 lies past the latest tick a network reaches"},
        {"at-ms decreasing",
         two_populations + "<grow population=\"E\" add=\"1\" at-ms=\"5\"/>\n<grow population=\"I\" add=\"1\" at-ms=\"2\"/>", 5,
         "grow of 'I': at-ms 2 comes before the at-ms 5 of the <grow> at line 4; grows are listed in time order"},
        {"applied after scheduled",
         two_populations + "<grow population=\"E\" add=\"1\" at-ms=\"1\"/>\n<grow population=\"I\" add=\"1\" at-ms=\"1\" applied=\"true\"/>",
         5, "grow of 'I': an applied <grow> after the scheduled one at line 4; applied grows come first"},
        {"end of a dense projection of weights from a file",
         two_populations + "<projection from=\"I\" to=\"E\" kind=\"dense\" weights=\"w.csv\"/>\n<grow population=\"E\" add=\"1\"/>", 5,
         "grow of 'E': 'E' is an end of projection from 'I' to 'E' (line 4), which is dense with weights from w.csv: the file has none "
         "for new members"},
        {"past the neuron limit",
         "<population id=\"E\" size=\"99999999\"/>\n<grow population=\"E\" add=\"1\" applied=\"true\"/>\n<grow population=\"E\" add=\"1\"/>",
         4, "grow of 'E' brings the network to 100000001 neurons; the limit is 100000000"},
        {"the largest add",
         "<population id=\"E\" size=\"2\"/>\n<grow population=\"E\" add=\"9223372036854775807\"/>\n"
         "<grow population=\"E\" add=\"9223372036854775807\"/>",
         3, "grow of 'E' brings the network to 9223372036854775809 neurons; the limit is 100000000"},
    };
    for (const auto& c : cases) {
        INFO(c.name);
        const auto found = problems_of(c.body);
        const diagnostic& first = found.front();
        CHECK(first.where.file == "grow.xml");
        CHECK(first.where.line == c.line);
        CHECK(first.where.column > 0);
        CHECK_THAT(first.message, Catch::Contains(c.message));
    }
}

TEST_CASE("every problem of every grow is reported, in document order") {
    const auto found = problems_of(two_populations +
                                   "<projection from=\"E\" to=\"I\" kind=\"dense\" weights=\"w.csv\"/>\n"
                                   "<output id=\"o\" neurons=\"E\"/>\n"
                                   "<grow population=\"E\" add=\"0\" at-ms=\"3\"/>\n"
                                   "<grow population=\"I\" add=\"2\" at-ms=\"1\" applied=\"true\"/>");
    REQUIRE(found.size() == 5);
    CHECK(found[0].where.line == 6);
    CHECK_THAT(found[0].message, Catch::Contains("which is dense"));
    CHECK_THAT(found[1].message, Catch::Contains("add must be at least 1 (got 0)"));
    CHECK(found[2].where.line == 7);
    CHECK_THAT(found[2].message, Catch::Contains("grow of 'I': 'I' is an end of projection from 'E' to 'I'"));
    CHECK_THAT(found[3].message, Catch::Contains("at-ms 1 comes before the at-ms 3"));
    CHECK_THAT(found[4].message, Catch::Contains("an applied <grow> after the scheduled one at line 6"));
}
