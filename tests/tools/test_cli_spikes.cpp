// Spike recording through the command line on real local clusters: `dnnc run --spikes`
// writes the same file on 1 and 3 nodes, equal to the non-zero outputs of the same neurons;
// <record> slices record only themselves; the JSON summary counts what the CSV holds; a
// running cluster's spikes are read (and forgotten) with `dnnc output --spikes`; bad
// <record>s are located errors.
#include "cluster_fixture.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

using namespace dnnc::test;
using nlohmann::json;

namespace {

// A CUBA-like network: 800 lif neurons (640 excitatory), p = 0.05, every neuron an output;
// `extra` goes inside <network>, `cluster` after it.
std::string cuba_like(const std::string& extra = "", const std::string& cluster = "") {
    return R"(<dnnc xmlns="urn:dnnc:1">
  <network name="cuba">
    <population id="P" size="800" model="lif" seed="42" refractory="50" v-init="-60" v-init-max="-50"/>
    <neuron id="solo" model="lif" refractory="30"/>
    <projection from="P[0:640]" to="P" kind="random" p="0.05" weight="1.62" seed="1"/>
    <projection from="P[640:800]" to="P" kind="random" p="0.05" weight="-9" seed="2"/>
    <projection from="P[0:640]" to="solo" kind="random" p="0.1" weight="0.5" seed="3"/>
    <output id="all" neurons="P solo"/>
)" + extra + "  </network>\n" +
           cluster + "  <run send=\"nonzero\"/>\n</dnnc>\n";
}

std::string dnnc_run(const scratch_dir& dir, const std::string& doc, const std::string& args, const std::string& spikes) {
    const auto r = run_command(dnnc_binary() + " run " + doc + " " + args + " --spikes " + (dir.path / spikes).string());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return slurp((dir.path / spikes).string());
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

std::string t_ms(long tick, double dt) {
    char text[32];
    std::snprintf(text, sizeof text, "%.10g", static_cast<double>(tick) * dt);
    return text;
}

// The spikes the output CSV shows (tick,P[0],...,P[799],solo): its non-zero values, as
// spike rows.
std::string spikes_from_outputs(const std::string& outputs) {
    const auto lines = lines_of(outputs);
    std::string rows = "t_ms,population,index\n";
    for (std::size_t k = 1; k < lines.size(); ++k) {
        std::istringstream row(lines[k]);
        std::string cell;
        std::getline(row, cell, ',');
        const long tick = std::stol(cell);
        std::vector<std::string> fired;
        for (int column = 0; std::getline(row, cell, ','); ++column) {
            if (std::stod(cell) == 0) continue;
            // Rows go by global index: the explicit neuron `solo` (0) before P's members.
            if (column == 800)
                fired.insert(fired.begin(), t_ms(tick, 0.1) + ",solo,0\n");
            else
                fired.push_back(t_ms(tick, 0.1) + ",P," + std::to_string(column) + "\n");
        }
        for (const auto& f : fired) rows += f;
    }
    return rows;
}

}  // namespace

TEST_CASE("the spikes file is the same on 1 and 3 nodes and equals the non-zero outputs") {
    scratch_dir dir;
    const auto doc = dir.file("cuba.xml", cuba_like());
    const auto outputs = (dir.path / "out.csv").string();
    const auto one = dnnc_run(dir, doc, "--nodes 1 --ticks 400 --output " + outputs, "one.csv");
    CHECK(one == spikes_from_outputs(slurp(outputs)));
    const auto rows = lines_of(one);
    CHECK(rows.size() > 100);
    CHECK(std::count_if(rows.begin(), rows.end(), [](const std::string& r) { return r.find(",solo,0") != std::string::npos; }) > 0);
    CHECK(dnnc_run(dir, doc, "--nodes 3 --ticks 400", "three.csv") == one);
    // A batched run records lane 0: with no inputs every lane is the unbatched run.
    CHECK(dnnc_run(dir, doc, "--nodes 2 --batch 3 --ticks 400", "batched.csv") == one);
}

TEST_CASE("<record> of slices records only them, and the JSON summary counts what the CSV holds") {
    scratch_dir dir;
    const auto all = dnnc_run(dir, dir.file("all.xml", cuba_like()), "--nodes 1 --ticks 400", "all.csv");
    const auto doc = dir.file("slice.xml", cuba_like("    <record neurons=\"P[100:300] solo\"/>\n    <record neurons=\"P[700:800]\"/>\n"));
    const auto csv = (dir.path / "slice.csv").string();
    const auto r = run_command(dnnc_binary() + " run " + doc + " --nodes 3 --ticks 400 --json --spikes " + csv);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);

    // The full recording, cut down to the slices.
    std::string expected = "t_ms,population,index\n";
    std::map<std::string, long> counted;
    for (const auto& line : lines_of(all)) {
        const auto population = line.substr(line.find(',') + 1, line.rfind(',') - line.find(',') - 1);
        if (population != "P" && population != "solo") continue;
        const long index = std::stol(line.substr(line.rfind(',') + 1));
        if (population == "P" && !((index >= 100 && index < 300) || index >= 700)) continue;
        expected += line + "\n";
        ++counted[population];
    }
    CHECK(slurp(csv) == expected);
    CHECK(counted["P"] > 20);

    const auto summary = json::parse(r.out);
    REQUIRE(summary["populations"].size() == 2);
    std::map<std::string, json> by_id;
    for (const auto& p : summary["populations"]) by_id[p["id"].get<std::string>()] = p;
    CHECK(by_id["P"]["neurons"] == 300);
    CHECK(by_id["solo"]["neurons"] == 1);
    for (const auto& [id, p] : by_id) {
        INFO(id);
        CHECK(p["spikes"].get<long>() == counted[id]);
        CHECK(p["rate_hz"].get<double>() == Approx(static_cast<double>(counted[id]) / p["neurons"].get<double>() / 0.04));
    }
}

TEST_CASE("a running cluster's spikes are read with dnnc output --spikes, and then forgotten") {
    scratch_dir dir;
    std::vector<int> ports{free_port(), free_port()};
    const std::string cluster = "  <cluster lead=\"a\">\n    <node id=\"a\" port=\"" + std::to_string(ports[0]) +
                                "\"/>\n    <node id=\"b\" port=\"" + std::to_string(ports[1]) +
                                "\"/>\n    <link from=\"a\" to=\"b\"/>\n  </cluster>\n";
    const auto config = dir.file("c.xml", cuba_like("    <record/>\n", cluster));
    const auto reference = dnnc_run(dir, dir.file("plain.xml", cuba_like()), "--nodes 1 --ticks 300", "ref.csv");

    local_cluster_guard up(config);
    REQUIRE(up.up.exit_code == 0);
    const std::string lead = " --lead 127.0.0.1:" + std::to_string(ports[0]);
    REQUIRE(run_command(dnnc_binary() + " submit " + config + " --to 127.0.0.1:" + std::to_string(ports[0])).exit_code == 0);
    REQUIRE(run_command(dnnc_binary() + " step 300 --json" + lead).exit_code == 0);
    REQUIRE(run_command(dnnc_binary() + " freeze" + lead).exit_code == 0);
    const auto read = run_command(dnnc_binary() + " output --spikes" + lead);
    INFO(read.err);
    REQUIRE(read.exit_code == 0);
    CHECK(read.out == reference);
    const auto again = run_command(dnnc_binary() + " output --spikes" + lead);
    REQUIRE(again.exit_code == 0);
    CHECK(again.out == "t_ms,population,index\n");
}

TEST_CASE("a network without outputs runs on several nodes and records its spikes") {
    // Regression: the lead restarted a tick's row at each report when it had no values, so
    // a row never completed on more than one node.
    scratch_dir dir;
    auto text = cuba_like();
    text.erase(text.find("    <output"), text.find('\n', text.find("    <output")) - text.find("    <output") + 1);
    REQUIRE(text.find("<output") == std::string::npos);
    const auto doc = dir.file("silent.xml", text);
    const auto one = dnnc_run(dir, doc, "--nodes 1 --ticks 200", "one.csv");
    CHECK(lines_of(one).size() > 20);
    CHECK(dnnc_run(dir, doc, "--nodes 2 --ticks 200 --timeout 20", "two.csv") == one);
}

TEST_CASE("bad recordings are refused: located errors for <record>, exit 2") {
    scratch_dir dir;
    const auto unknown = dir.file("unknown.xml", cuba_like("    <record neurons=\"P[0:10] Q\"/>\n"));
    const auto r = run_command(dnnc_binary() + " run " + unknown + " --nodes 1 --ticks 10 --spikes " + (dir.path / "s.csv").string());
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(unknown + ":9:5: record: no neuron or population 'Q'"));

    const auto rates = dir.file("rates.xml", R"(<dnnc xmlns="urn:dnnc:1"><network name="r">
  <population id="p" size="4" model="tanh"/></network></dnnc>)");
    const auto none = run_command(dnnc_binary() + " run " + rates + " --nodes 1 --ticks 10 --spikes " + (dir.path / "s.csv").string());
    CHECK(none.exit_code == 2);
    CHECK_THAT(none.err, Catch::Contains("no neuron of a spiking model"));
}

TEST_CASE("a spike source read from a CSV beside the document drives the network alike on 1 and 3 nodes") {
    scratch_dir dir;
    // Spikes of 20 sources over 30 ms, each (tick, index) once, in no particular order.
    std::string input = "t_ms,index\n";
    std::vector<std::pair<long, int>> listed;
    for (int k = 0; k < 300; ++k) {
        const long tick = (k * 7919L) % 300;
        const int index = (k * 13) % 20;
        if (std::find(listed.begin(), listed.end(), std::make_pair(tick, index)) != listed.end()) continue;
        listed.emplace_back(tick, index);
        input += t_ms(tick, 0.1) + "," + std::to_string(index) + "\n";
    }
    dir.file("in.csv", input);
    const auto doc = dir.file("driven.xml", R"(<dnnc xmlns="urn:dnnc:1">
  <network name="driven">
    <spike-source id="S" size="20" file="in.csv"/>
    <population id="P" size="200" model="iaf_psc_delta" V_th="-69" seed="5"/>
    <projection from="S" to="P" kind="fixed-outdegree" outdegree="40" weight="0.6" delay-ms="1.5" seed="1"/>
    <projection from="P" to="P" kind="random" p="0.05" weight="0.2" seed="2"/>
    <record neurons="S P"/>
  </network>
  <run sync="lockstep" send="nonzero"/>
</dnnc>
)");
    const auto one = dnnc_run(dir, doc, "--nodes 1 --ticks 400", "one.csv");
    CHECK(dnnc_run(dir, doc, "--nodes 3 --ticks 400", "three.csv") == one);
    // The sources' recorded spikes are the listed ones, by tick and index.
    std::sort(listed.begin(), listed.end());
    std::string expected;
    for (const auto& [tick, index] : listed) expected += t_ms(tick, 0.1) + ",S," + std::to_string(index) + "\n";
    std::string sources, targets;
    for (const auto& line : lines_of(one))
        (line.find(",S,") != std::string::npos ? sources : targets) += line + "\n";
    CHECK(sources == expected);
    CHECK(lines_of(targets).size() > 100);  // P spikes, driven by S

    // A bad row is located in the CSV; exit 2.
    dir.file("in.csv", "t_ms,index\n1.0,3\n2.0,20\n");
    const auto bad = run_command(dnnc_binary() + " run " + doc + " --nodes 1 --ticks 10");
    CHECK(bad.exit_code == 2);
    CHECK_THAT(bad.err, Catch::Contains((dir.path / "in.csv").string() + ":3:5: index 20 is out of range; the spike source has 20 members"));
}

// Regression: with every spiking-model neuron recorded and a spike source that is not, the
// node passed the source's spikes on too, and dnnc run failed ("a spike of neuron N, which
// it does not record").
TEST_CASE("recording every neuron but an unrecorded spike source records only those neurons") {
    scratch_dir dir;
    dir.file("in.csv", "t_ms,index\n0.5,0\n1.0,1\n3,2\n");
    const auto doc = dir.file("t.xml", R"(<dnnc xmlns="urn:dnnc:1">
  <network name="t" dt="0.1">
    <spike-source id="S" size="3" file="in.csv"/>
    <population id="P" size="1" model="iaf_psc_exp" V_th="-69.9"/>
    <projection from="S" to="P" kind="all" delay="1" weight="200"/>
    <record neurons="P"/>
  </network>
  <run sync="lockstep" send="nonzero"/>
</dnnc>
)");
    const auto spikes = dnnc_run(dir, doc, "--nodes 1 --ticks 60", "s.csv");
    CHECK(spikes.find(",S,") == std::string::npos);
    CHECK(spikes.find(",P,0") != std::string::npos);
}
