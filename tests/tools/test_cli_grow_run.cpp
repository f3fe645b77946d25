// Growing populations on real local clusters: a document's scheduled grows give the same
// spikes on 1, 2 and 3 nodes and leave what the grown populations do not reach as it was;
// `dnnc grow` on a running cluster, then a snapshot restored on another cluster, goes on
// bit for bit; a grow the lead refuses (no such population, a spike source, an end of a
// dense projection, more than the nodes' memory) exits 2 with its reason, and the run steps
// on with the neurons it had.
#include "grow_fixture.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <future>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace dnnc::test;
using json = nlohmann::json;

namespace {

// The tests' network (tests/data/growing_brunel.xml: E 400 and I 100 joined by rules that
// take new members, Q 50 on its own, all driven and recorded) with `extra` at the end of
// the network (grows, more populations).
std::string brunel(const std::string& extra = "") { return with_in_network(slurp(source_path("tests/data/growing_brunel.xml")), extra); }

const std::string scheduled_grows = R"(    <grow population="E" add="40" at-ms="20"/>
    <grow population="I" add="10" at-ms="35"/>
)";

}  // namespace

TEST_CASE("a document's scheduled grows give the same spikes on 1, 2 and 3 nodes, and change nothing a grown population does not reach") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    const auto out = [&](const std::string& name) { return (dir.path / name).string(); };
    const auto plain = dir.file("plain.xml", brunel());
    const auto grown = dir.file("grown.xml", brunel(scheduled_grows));
    must(dnnc + " run " + plain + " --nodes 1 --ticks 600 --spikes " + out("plain.csv"));
    for (const int k : {1, 2, 3})
        must(dnnc + " run " + grown + " --nodes " + std::to_string(k) + " --ticks 600 --spikes " + out("grown" + std::to_string(k) + ".csv"));
    const auto without = slurp(out("plain.csv")), with = slurp(out("grown1.csv"));
    REQUIRE(rows_of(with) > 1000);
    CHECK(slurp(out("grown2.csv")) == with);
    CHECK(slurp(out("grown3.csv")) == with);

    // The new members of E spike, from their grow's tick on, and no member past them does.
    // (I's new members get no excitatory synapse: E's fixed out-degree sources reach the
    // targets there were at their own grow, so they stay below threshold here.)
    const auto rows = spikes_in(with);
    CHECK(spikes_of(rows, "E", 400, 440) > 0);
    CHECK(spikes_of(rows, "E", 440) == 0);
    CHECK(spikes_of(rows, "I", 110) == 0);
    for (const auto& s : rows) {
        if (s.population == "E" && s.index >= 400) CHECK(s.t_ms >= 20.0);
        if (s.population == "I" && s.index >= 100) CHECK(s.t_ms >= 35.0);
    }
    // Q is reached by no grown population; before the first grow nothing differs.
    const auto q = [](const spike& s) { return s.population == "Q"; };
    CHECK(rows_of(rows_where(with, q)) > 10);
    CHECK(rows_where(with, q) == rows_where(without, q));
    const auto before_growth = [](const spike& s) { return s.t_ms < 20.0; };
    CHECK(rows_of(rows_where(with, before_growth)) > 100);
    CHECK(rows_where(with, before_growth) == rows_where(without, before_growth));
    // E and I differ after it: the grown members take part.
    CHECK(with != without);
}

TEST_CASE("dnnc grow on a running cluster, then a snapshot restored on another cluster goes on bit for bit") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    const auto out = [&](const std::string& name) { return (dir.path / name).string(); };
    std::vector<int> two, three;
    const auto first = dir.file("two.xml", on_cluster(brunel(), 2, two));
    const auto second = dir.file("three.xml", on_cluster(brunel(), 3, three));
    const auto taken = 50.0;  // ms: the snapshot's tick is 500
    std::string original_after;
    {
        local_cluster_guard c(first);
        INFO(c.up.err);
        REQUIRE(c.up.exit_code == 0);
        must(dnnc + " submit " + first + to_of(two));
        must(dnnc + " step 200" + lead_of(two));
        const auto e = json_of(dnnc + " grow E 40 --json" + lead_of(two));
        CHECK(e["population"] == "E");
        CHECK(e["added"] == 40);
        CHECK(e["size"] == 440);
        CHECK(e["first_new"] == "E[400]");
        CHECK(e["tick"] == 200);
        CHECK(tick_and_neurons(two) == std::pair<std::int64_t, std::size_t>{200, 590});
        must(dnnc + " step 200" + lead_of(two));
        const auto i = json_of(dnnc + " grow I 10 --json" + lead_of(two));
        CHECK(i["size"] == 110);
        CHECK(i["first_new"] == "I[100]");
        CHECK(i["tick"] == 400);
        must(dnnc + " step 100" + lead_of(two));
        CHECK(tick_and_neurons(two) == std::pair<std::int64_t, std::size_t>{500, 600});
        must(dnnc + " output --spikes -o " + out("before.csv") + lead_of(two));
        const auto before = spikes_in(slurp(out("before.csv")));
        CHECK(spikes_of(before, "E", 400, 440) > 0);
        CHECK(spikes_of(before, "E", 440) == 0);
        CHECK(spikes_of(before, "I", 110) == 0);
        must(dnnc + " freeze" + lead_of(two));
        must(dnnc + " snapshot -o " + out("k.dnncs") + lead_of(two));
        must(dnnc + " step 300" + lead_of(two));
        must(dnnc + " output --spikes -o " + out("original.csv") + lead_of(two));
        original_after = rows_where(slurp(out("original.csv")), [&](const spike& s) { return s.t_ms >= taken - 0.05; });
    }
    REQUIRE(rows_of(original_after) > 500);
    CHECK(spikes_of(spikes_in(original_after), "E", 400, 440) > 0);
    {
        local_cluster_guard c(second);
        INFO(c.up.err);
        REQUIRE(c.up.exit_code == 0);
        must(dnnc + " restore " + out("k.dnncs") + " --cluster " + second + to_of(three));
        CHECK(tick_and_neurons(three) == std::pair<std::int64_t, std::size_t>{500, 600});
        must(dnnc + " step 300" + lead_of(three));
        must(dnnc + " output --spikes -o " + out("restored.csv") + lead_of(three));
    }
    CHECK(rows_where(slurp(out("restored.csv")), [&](const spike& s) { return s.t_ms >= taken - 0.05; }) == original_after);
}

TEST_CASE("a grow the lead refuses exits 2 with its reason, and the run steps on with the neurons it had") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    const auto out = [&](const std::string& name) { return (dir.path / name).string(); };
    // A spike source that drives E (a dense projection of weights from a file is refused in
    // "the ends of a dense projection grow" below).
    const std::string more = R"(    <spike-source id="S" size="4" rate="10"/>
    <projection from="S" to="E" kind="all" weight="0.1"/>
)";
    std::vector<int> ports;
    const auto config = dir.file("two.xml", on_cluster(brunel(more), 2, ports));
    local_cluster_guard c(config);
    INFO(c.up.err);
    REQUIRE(c.up.exit_code == 0);
    must(dnnc + " submit " + config + to_of(ports));
    must(dnnc + " step 100" + lead_of(ports));
    const auto [tick, neurons] = tick_and_neurons(ports);
    CHECK(tick == 100);
    struct refusal {
        std::string arguments, says;
    };
    for (const auto& r : std::vector<refusal>{{"Z 3", "grow of 'Z': no population 'Z'"},
                                              {"S 2", "'S' is a spike source"},
                                              {"E 0", "whole number >= 1"},
                                              {"E -3", "whole number >= 1"}}) {
        INFO("dnnc grow " << r.arguments);
        const auto refused = run_command(dnnc + " grow" + lead_of(ports) + " " + r.arguments);
        INFO(refused.err);
        CHECK(refused.exit_code == 2);
        CHECK(refused.out.empty());
        CHECK_THAT(refused.err, Catch::Contains(r.says));
        must(dnnc + " step 10" + lead_of(ports));
    }
    CHECK(tick_and_neurons(ports) == std::pair<std::int64_t, std::size_t>{tick + 40, neurons});
    must(dnnc + " output --spikes -o " + out("spikes.csv") + lead_of(ports));
    const auto rows = spikes_in(slurp(out("spikes.csv")));
    CHECK(rows.size() > 100);
    CHECK(spikes_of(rows, "E", 400) == 0);
    CHECK(spikes_of(rows, "S", 4) == 0);
}

TEST_CASE("a grow past the memory the nodes have is refused with the numbers, and the run goes on") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    std::vector<int> ports;
    const auto config = dir.file("two.xml", on_cluster(brunel(), 2, ports));
    local_cluster_guard c(config, "--memory-limit 32M");
    INFO(c.up.err);
    REQUIRE(c.up.exit_code == 0);
    must(dnnc + " submit " + config + to_of(ports));
    must(dnnc + " step 100" + lead_of(ports));
    const auto refused = run_command(dnnc + " grow E 1000000" + lead_of(ports));
    INFO(refused.err);
    CHECK(refused.exit_code == 2);
    CHECK_THAT(refused.err, Catch::Contains("does not fit in memory"));
    CHECK(std::regex_search(refused.err, std::regex("would hold about [0-9]+ synapses, needing about [0-9]+ MiB; its limit is 32 MiB")));
    must(dnnc + " step 100" + lead_of(ports));
    CHECK(tick_and_neurons(ports) == std::pair<std::int64_t, std::size_t>{200, 550});
    // A grow that fits still goes through afterwards.
    CHECK(json_of(dnnc + " grow E 4 --json" + lead_of(ports))["size"] == 404);
    CHECK(tick_and_neurons(ports) == std::pair<std::int64_t, std::size_t>{200, 554});
}

TEST_CASE("a population with synaptic elements grows into structural plasticity alike on 1 and 2 nodes, its update rows kept") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    const auto out = [&](const std::string& name) { return (dir.path / name).string(); };
    // Updates every 100 ms; E's 8 new members join at 250 ms with calcium 0 and their
    // elements' initial counts, and take part in the pairings from the next update on.
    std::string text = small_growing_network();
    text.replace(text.find("  </network>"), 0, "    <grow population=\"E\" add=\"8\" at-ms=\"250\"/>\n");
    const auto doc = dir.file("growing.xml", text);
    for (const int k : {1, 2})
        must(dnnc + " run " + doc + " --nodes " + std::to_string(k) + " --ticks 8000 --spikes " + out("s" + std::to_string(k) + ".csv") +
             " --structure " + out("st" + std::to_string(k) + ".csv"));
    CHECK(slurp(out("s2.csv")) == slurp(out("s1.csv")));
    const auto structure = slurp(out("st1.csv"));
    CHECK(slurp(out("st2.csv")) == structure);
    // Every update's rows, those before the grow too: 0, 100, ..., 700 ms for E and I.
    CHECK(rows_of(structure) == 16);
    CHECK_THAT(structure, Catch::Contains("\n200,E,"));
    CHECK(spikes_of(spikes_in(slurp(out("s1.csv"))), "E", 80) > 0);
}

TEST_CASE("an output of a population the document grows has the grown columns from the start, and dnnc grow widens it unless by slice") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    const auto out = [&](const std::string& name) { return (dir.path / name).string(); };
    const auto grown = dir.file("grown.xml", brunel("    <output id=\"o\" neurons=\"Q[0] E\"/>\n" + scheduled_grows));
    for (const int k : {1, 3})
        must(dnnc + " run " + grown + " --nodes " + std::to_string(k) + " --ticks 300 --output " + out("o" + std::to_string(k) + ".csv"));
    const auto rows = slurp(out("o1.csv"));
    CHECK(slurp(out("o3.csv")) == rows);
    std::istringstream in(rows);
    std::string header, line;
    std::getline(in, header);
    // Q[0], E[0..439]: E's 40 members grown at 20 ms are columns from the first row on.
    CHECK(std::count(header.begin(), header.end(), ',') == 1 + 440);  // tick, Q[0], E[0..439]
    CHECK_THAT(header, Catch::EndsWith(",E[439]"));
    std::size_t before = 0, grown_spikes = 0;
    while (std::getline(in, line)) {
        std::vector<std::string> cells;
        std::istringstream fields(line);
        for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
        REQUIRE(cells.size() == 442);
        const bool early = std::stoll(cells[0]) < 200;  // ticks before the grow at 20 ms
        for (std::size_t c = 402; c < cells.size(); ++c) {  // E[400..439]
            if (early) before += std::stod(cells[c]) != 0;
            else grown_spikes += std::stod(cells[c]) != 0;
        }
    }
    CHECK(before == 0);
    CHECK(grown_spikes > 0);

    // Outside the document's schedule, `dnnc grow` widens the output: the rows before it read
    // 0 in the new columns, and every row is the bits of the same grow scheduled in the
    // document at that tick (tick 50 = 5 ms).
    std::vector<int> ports;
    const auto doc = dir.file("cluster.xml", on_cluster(brunel("    <output id=\"o\" neurons=\"Q[0] E\"/>\n"), 1, ports));
    local_cluster_guard cluster(doc);
    REQUIRE(cluster.up.exit_code == 0);
    must(dnnc + " submit " + doc + to_of(ports));
    must(dnnc + " step 50" + lead_of(ports));
    // A reader that follows the rows as CSV under one header stops at the wider ones.
    auto follower = std::async(std::launch::async, [&] {
        return run_command("timeout 60 " + dnnc + " output --follow -o " + out("followed.csv") + lead_of(ports));
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    CHECK(json_of(dnnc + " grow E 10 --json" + lead_of(ports))["size"] == 410);
    must(dnnc + " step 50" + lead_of(ports));
    const auto followed = follower.get();
    CHECK(followed.exit_code == 1);
    CHECK_THAT(followed.err, Catch::Contains("the outputs' columns changed at tick 50"));
    CHECK(tick_and_neurons(ports).second == 560);
    must(dnnc + " output -o " + out("widened.csv") + lead_of(ports));
    const auto widened = slurp(out("widened.csv"));
    const auto scheduled = dir.file("scheduled.xml", brunel("    <output id=\"o\" neurons=\"Q[0] E\"/>\n"
                                                              "    <grow population=\"E\" add=\"10\" at-ms=\"5\"/>\n"));
    must(dnnc + " run " + scheduled + " --nodes 2 --ticks 100 --output " + out("scheduled.csv"));
    CHECK(widened == slurp(out("scheduled.csv")));
    CHECK_THAT(widened, Catch::StartsWith("tick,Q[0],E[0],"));
    CHECK(widened.substr(0, widened.find('\n')).find(",E[409]") != std::string::npos);

    // An output of E's members by slice keeps its columns: E grows under it.
    auto sliced_text = slurp(doc);
    sliced_text.replace(sliced_text.find("neurons=\"Q[0] E\""), 16, "neurons=\"Q[0] E[0:5]\"");
    const auto sliced = dir.file("sliced.xml", sliced_text);
    must(dnnc + " submit --replace " + sliced + to_of(ports));
    must(dnnc + " step 50" + lead_of(ports));
    CHECK(json_of(dnnc + " grow E 10 --json" + lead_of(ports))["size"] == 410);
    must(dnnc + " step 50" + lead_of(ports));
    CHECK(tick_and_neurons(ports) == std::pair<std::int64_t, std::size_t>{100, 560});
    must(dnnc + " output -o " + out("sliced.csv") + lead_of(ports));
    const auto sliced_rows = slurp(out("sliced.csv"));
    CHECK_THAT(sliced_rows, Catch::StartsWith("tick,Q[0],E[0],E[1],E[2],E[3],E[4]\n"));
    CHECK(std::count(sliced_rows.begin(), sliced_rows.end(), '\n') == 1 + 100);
}

TEST_CASE("two clusters of one user grow at the same tick at the same time, each from its own scratch files") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    std::vector<int> first_ports, second_ports;
    const auto first = dir.file("first.xml", on_cluster(brunel(), 2, first_ports));
    const auto second = dir.file("second.xml", on_cluster(brunel(), 2, second_ports));
    local_cluster_guard a(first), b(second);
    INFO(a.up.err << b.up.err);
    REQUIRE(a.up.exit_code == 0);
    REQUIRE(b.up.exit_code == 0);
    for (const auto* ports : {&first_ports, &second_ports}) {
        must(dnnc + " submit " + (ports == &first_ports ? first : second) + to_of(*ports));
        must(dnnc + " step 100" + lead_of(*ports));
    }
    // Both leads snapshot, change and restore tick 100 in the same state folder at once.
    for (int round = 0; round < 3; ++round) {
        auto grow_at = [&](const std::vector<int>& ports) { return std::async(std::launch::async, [&] { return run_command(dnnc + " grow E 5" + lead_of(ports)); }); };
        auto x = grow_at(first_ports), y = grow_at(second_ports);
        for (auto* f : {&x, &y}) {
            const auto r = f->get();
            INFO(r.err);
            CHECK(r.exit_code == 0);
        }
    }
    CHECK(tick_and_neurons(first_ports) == std::pair<std::int64_t, std::size_t>{100, 565});
    CHECK(tick_and_neurons(second_ports) == std::pair<std::int64_t, std::size_t>{100, 565});
}

TEST_CASE("the ends of a dense projection grow: its weights stay, grown members' are drawn by member, alike on 1 and 3 nodes and by dnnc grow") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    const auto out = [&](const std::string& name) { return (dir.path / name).string(); };
    // Rate neurons joined both ways by dense projections (LibTorch); A grows at tick 20 (a
    // source end, then a target end), B at tick 40.
    const std::string network = R"(<dnnc xmlns="urn:dnnc:1">
  <network name="dense-grow" dt="1">
    <population id="A" size="30" model="tanh" bias="0.2"/>
    <population id="B" size="12" model="tanh" bias="-0.1"/>
    <projection from="A" to="B" kind="dense" init="normal" seed="3"/>
    <projection from="B" to="A" kind="dense" init="uniform" seed="4" scale="0.3"/>
    <output id="o" neurons="A B"/>
  </network>
</dnnc>
)";
    const std::string grows = "    <grow population=\"A\" add=\"6\" at-ms=\"20\"/>\n    <grow population=\"B\" add=\"3\" at-ms=\"40\"/>\n";
    const auto plain = dir.file("plain.xml", network);
    const auto grown = dir.file("grown.xml", with_in_network(network, grows));
    must(dnnc + " run " + plain + " --nodes 1 --ticks 60 --output " + out("plain.csv"));
    for (const int k : {1, 3})
        must(dnnc + " run " + grown + " --nodes " + std::to_string(k) + " --ticks 60 --output " + out("grown" + std::to_string(k) + ".csv"));
    const auto rows = slurp(out("grown1.csv"));
    CHECK(slurp(out("grown3.csv")) == rows);
    // Before tick 20 every column of the plain network reads as there; then A's new members
    // change what B sums.
    const auto header = rows.substr(0, rows.find('\n'));
    CHECK_THAT(header, Catch::Contains(",A[29],A[30],") && Catch::EndsWith(",B[11],B[12],B[13],B[14]"));
    const auto plain_rows = slurp(out("plain.csv"));
    auto lines = [](const std::string& csv) {
        std::vector<std::vector<std::string>> table;
        std::istringstream in(csv);
        for (std::string line; std::getline(in, line);) {
            table.emplace_back();
            std::istringstream cells(line);
            for (std::string cell; std::getline(cells, cell, ',');) table.back().push_back(cell);
        }
        return table;
    };
    const auto g = lines(rows), p = lines(plain_rows);
    REQUIRE(g.size() == 61);
    REQUIRE(p.size() == 61);
    auto plain_columns_of = [&](std::size_t r) {
        std::vector<std::string> cells;
        for (const auto& name : p[0]) cells.push_back(g[r][static_cast<std::size_t>(std::find(g[0].begin(), g[0].end(), name) - g[0].begin())]);
        return cells;
    };
    for (std::size_t r = 1; r <= 20; ++r) CHECK(plain_columns_of(r) == p[r]);
    CHECK(plain_columns_of(25) != p[25]);

    // The same grows asked for by dnnc grow on a running cluster: the same rows.
    std::vector<int> ports;
    const auto doc = dir.file("cluster.xml", on_cluster(network, 2, ports));
    local_cluster_guard cluster(doc);
    REQUIRE(cluster.up.exit_code == 0);
    must(dnnc + " submit " + doc + to_of(ports));
    must(dnnc + " step 20" + lead_of(ports));
    CHECK(json_of(dnnc + " grow A 6 --json" + lead_of(ports))["size"] == 36);
    must(dnnc + " step 20" + lead_of(ports));
    CHECK(json_of(dnnc + " grow B 3 --json" + lead_of(ports))["size"] == 15);
    must(dnnc + " step 20" + lead_of(ports));
    must(dnnc + " output -o " + out("asked.csv") + lead_of(ports));
    CHECK(slurp(out("asked.csv")) == rows);

    // Weights from a file have none for new members: refused, and the run goes on.
    const auto weights = dir.file("w.f32", [] {  // B x A as float32
        std::string bytes;
        const float w = 0.01f;
        for (int k = 0; k < 15 * 36; ++k) bytes.append(reinterpret_cast<const char*>(&w), sizeof w);
        return bytes;
    }());
    auto from_file = std::regex_replace(slurp(doc), std::regex(R"(init="normal" seed="3")"), "weights=\"" + weights + "\"");
    from_file = std::regex_replace(from_file, std::regex(R"(size="30")"), "size=\"36\"");
    from_file = std::regex_replace(from_file, std::regex(R"(size="12")"), "size=\"15\"");
    const auto filed = dir.file("filed.xml", from_file);
    must(dnnc + " submit --replace " + filed + to_of(ports));
    must(dnnc + " step 5" + lead_of(ports));
    const auto refused = run_command(dnnc + " grow A 1" + lead_of(ports));
    CHECK(refused.exit_code == 2);
    CHECK_THAT(refused.err, Catch::Contains("which is dense with weights from") && Catch::Contains("the file has none for new members"));
    must(dnnc + " step 5" + lead_of(ports));
    CHECK(tick_and_neurons(ports) == std::pair<std::int64_t, std::size_t>{10, 51});
}
