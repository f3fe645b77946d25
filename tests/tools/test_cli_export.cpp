// `dnnc export` as a user runs it: each format on the XOR example, the node assignment from
// its cluster, snapshot values, exit codes for bad formats, files and outputs, and the
// network a running lead holds.
#include "cluster_fixture.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace dnnc::test;

namespace {

std::string temp_path(const std::string& name) {
    return "/tmp/dnnc-test-export-" + std::to_string(getpid()) + "-" + name;
}


std::size_t occurrences(const std::string& text, const std::string& what) {
    std::size_t count = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++count;
    return count;
}

const std::string xor_file = source_path("examples/xor/xor.xml");

}  // namespace

TEST_CASE("dnnc export writes the XOR example as JSON with its node assignment") {
    const std::string out = temp_path("xor.json");
    const auto r = run_command(dnnc_binary() + " export " + xor_file + " --format json -o " + out);
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
    const auto j = nlohmann::json::parse(slurp(out));
    std::remove(out.c_str());
    CHECK(j["network"] == "xor");
    REQUIRE(j["neurons"].size() == 5);
    CHECK(j["synapses"].size() == 6);
    REQUIRE(j["nodes"].size() == 2);
    CHECK(j["nodes"][0]["neurons"].get<int>() + j["nodes"][1]["neurons"].get<int>() == 5);
    for (const auto& n : j["neurons"]) CHECK((n["node"] == "n0" || n["node"] == "n1"));
}

TEST_CASE("dnnc export writes GraphML and DOT, the format following the extension when not given") {
    const std::string graphml = temp_path("xor.graphml");
    const auto g = run_command(dnnc_binary() + " export " + xor_file + " -o " + graphml);
    CHECK(g.exit_code == 0);
    const std::string text = slurp(graphml);
    std::remove(graphml.c_str());
    CHECK_THAT(text, Catch::Contains("<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\""));
    CHECK_THAT(text, Catch::Contains("<key id=\"node\" for=\"node\""));
    CHECK(occurrences(text, "<node id=") == 5);
    CHECK(occurrences(text, "<edge ") == 6);

    const std::string dot = temp_path("xor.txt");
    const auto d = run_command(dnnc_binary() + " export " + xor_file + " --format dot -o " + dot);
    CHECK(d.exit_code == 0);
    const std::string picture = slurp(dot);
    std::remove(dot.c_str());
    CHECK_THAT(picture, Catch::StartsWith("digraph \"xor\" {"));
    CHECK_THAT(picture, Catch::Contains("subgraph \"cluster_n0\""));
    CHECK_THAT(picture, Catch::Contains("subgraph \"cluster_n1\""));
    for (const char* neuron : {"a", "b", "h1", "h2", "out"}) {
        CHECK_THAT(picture, Catch::Contains("\"" + std::string(neuron) + "\" [label="));
    }
    CHECK(occurrences(picture, " -> ") == 6);

    const auto s = run_command(dnnc_binary() + " export " + xor_file + " --format dot --max-synapses 1 -o -");
    CHECK(s.exit_code == 0);
    CHECK(occurrences(s.out, " -> ") == 1);
    CHECK_THAT(s.out, Catch::Contains("first 1 of 6 synapses shown"));
}

TEST_CASE("dnnc export shows the values of a snapshot document") {
    const std::string in = temp_path("snap.xml");
    std::ofstream(in) << R"(<dnnc xmlns="urn:dnnc:1">
  <network name="s"><population id="p" size="2" model="lif"/><synapse from="p[0]" to="p[1]" weight="2"/></network>
  <state tick="9">
    <neuron id="p[0]" output="1" state="-60 0.5 0 3"/>
    <neuron id="p[1]" output="0" state="-51 2 0 0" history="1"/>
  </state>
</dnnc>)";
    const auto r = run_command(dnnc_binary() + " export " + in + " --format json -o -");
    std::remove(in.c_str());
    CHECK(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["tick"] == 9);
    CHECK(j["neurons"][1]["state"]["v"] == -51);
    CHECK(j["neurons"][0]["state"]["refractory"] == 3);
    CHECK(j["neurons"][0]["node"].is_null());
}

TEST_CASE("dnnc export refuses bad formats, files and outputs") {
    const auto format = run_command(dnnc_binary() + " export " + xor_file + " --format svg -o " + temp_path("x.svg"));
    CHECK(format.exit_code == 2);
    CHECK_THAT(format.err, Catch::Contains("unknown export format 'svg'"));

    const auto guess = run_command(dnnc_binary() + " export " + xor_file + " -o " + temp_path("x.txt"));
    CHECK(guess.exit_code == 2);
    CHECK_THAT(guess.err, Catch::Contains("give --format"));

    const auto missing = run_command(dnnc_binary() + " export " + source_path("examples/none.xml") +
                                     " --format json -o " + temp_path("x.json"));
    CHECK(missing.exit_code == 2);

    const auto bad = run_command(dnnc_binary() + " export " + source_path("tests/data/bad/delay_zero.xml") +
                                 " --format json -o " + temp_path("x.json"));
    CHECK(bad.exit_code == 2);
    CHECK_THAT(bad.err, Catch::Contains("delay must be at least 1 tick"));

    const auto no_input = run_command(dnnc_binary() + " export --format json -o " + temp_path("x.json"));
    CHECK(no_input.exit_code == 2);

    const auto unwritable = run_command(dnnc_binary() + " export " + xor_file + " --format json -o /nonexistent/x.json");
    CHECK(unwritable.exit_code == 1);
    CHECK_THAT(unwritable.err, Catch::Contains("cannot write /nonexistent/x.json"));
}

TEST_CASE("dnnc export --lead writes the frozen network with its values and the lead's placement") {
    scratch_dir dir;
    std::vector<int> ports;
    const auto config = dir.file("net.xml", cluster_document({{"n0", 2}, {"n1", 1}}, {"<link from=\"n0\" to=\"n1\"/>"},
                                                             ports, 60, "<run probes=\"2\"/>\n"));
    const std::string lead = "127.0.0.1:" + std::to_string(ports[0]);
    local_cluster_guard c(config);
    REQUIRE(c.up.exit_code == 0);
    REQUIRE(run_command(dnnc_binary() + " submit " + config + " --to " + lead).exit_code == 0);
    REQUIRE(run_command(dnnc_binary() + " start --lead " + lead).exit_code == 0);

    const auto running = run_command(dnnc_binary() + " export --lead " + lead + " --format json -o -");
    CHECK(running.exit_code == 2);  // refused: the command comes at the wrong time
    CHECK_THAT(running.err, Catch::Contains("frozen"));

    REQUIRE(run_command(dnnc_binary() + " freeze --lead " + lead).exit_code == 0);
    const auto r = run_command(dnnc_binary() + " export --lead " + lead + " --format json -o -");
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    const auto status = nlohmann::json::parse(run_command(dnnc_binary() + " status --json --lead " + lead).out);
    CHECK(j["network"] == "it");
    CHECK(j["tick"] == status["tick"].get<std::int64_t>() + 1);
    REQUIRE(j["neurons"].size() == 60);
    for (const auto& n : j["neurons"]) CHECK(n["output"].is_number());
    // The nodes hold as many neurons as the lead placed on them.
    REQUIRE(j["nodes"].size() == 2);
    for (std::size_t k = 0; k < 2; ++k) {
        CHECK(j["nodes"][k]["id"] == status["nodes"][k]["id"]);
        CHECK(j["nodes"][k]["neurons"] == status["nodes"][k]["neurons"]);
    }
}
