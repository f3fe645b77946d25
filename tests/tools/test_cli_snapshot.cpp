// The snapshot guarantee on real clusters: N ticks straight equal K ticks, freeze, snapshot,
// restore on another cluster (4 -> 3 -> 1 nodes, other capacities), the rest — outputs
// and final state bit for bit. Bad snapshots change nothing on a running cluster.
#include "cluster_fixture.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <csignal>
#include <filesystem>
#include <regex>
#include <thread>

using namespace dnnc::test;
using nlohmann::json;

namespace {

// Submits `config` to its cluster's lead (ports[0]) and runs `ticks` ticks.
void submit_and_step(const std::string& config, const std::vector<int>& ports, int ticks) {
    must(dnnc_binary() + " submit " + config + to_of(ports));
    must(dnnc_binary() + " step " + std::to_string(ticks) + lead_of(ports));
}

// The <state> part of a snapshot file.
std::string state_of(const std::string& xml) {
    const auto from = xml.find("<state");
    REQUIRE(from != std::string::npos);
    return xml.substr(from);
}
}  // namespace

TEST_CASE("running N ticks equals K ticks, snapshot, restore on 3 nodes, then on 1 node, and the rest") {
    for (const auto& [example, n, k, m] : std::vector<std::tuple<std::string, int, int, int>>{
             {"cuba/cuba.xml", 600, 250, 200}, {"associative/associative.xml", 40, 11, 17}, {"tree7/tree7.xml", 30, 7, 9}}) {
        INFO(example);
        scratch_dir dir;
        const auto dnnc = dnnc_binary();
        std::vector<int> straight_ports, four, three, one;
        const auto straight = dir.file("straight.xml", with_cluster(example, {2}, straight_ports));
        const auto first = dir.file("four.xml", with_cluster(example, {1, 2, 3, 4}, four));
        const auto second = dir.file("three.xml", with_cluster(example, {3, 1, 2}, three));
        const auto third = dir.file("one.xml", with_cluster(example, {1}, one));
        const auto out = [&](const std::string& name) { return (dir.path / name).string(); };

        // Straight through.
        {
            local_cluster_guard c(straight);
            REQUIRE(c.up.exit_code == 0);
            must(dnnc + " submit " + straight + to_of(straight_ports));
            must(dnnc + " step " + std::to_string(n) + lead_of(straight_ports));
            must(dnnc + " output -o " + out("straight.csv") + lead_of(straight_ports));
            must(dnnc + " snapshot -o " + out("straight-end.xml") + lead_of(straight_ports));
        }
        // K ticks on four nodes, snapshot (binary).
        {
            local_cluster_guard c(first);
            REQUIRE(c.up.exit_code == 0);
            must(dnnc + " submit " + first + to_of(four));
            must(dnnc + " step " + std::to_string(k) + lead_of(four));
            must(dnnc + " output -o " + out("part1.csv") + lead_of(four));
            must(dnnc + " snapshot -o " + out("k.dnncs") + lead_of(four));
        }
        // M more on three nodes of other capacities, snapshot (XML).
        {
            local_cluster_guard c(second);
            REQUIRE(c.up.exit_code == 0);
            must(dnnc + " restore " + out("k.dnncs") + " --cluster " + second + to_of(three));
            must(dnnc + " step " + std::to_string(m) + lead_of(three));
            must(dnnc + " output -o " + out("part2.csv") + lead_of(three));
            must(dnnc + " snapshot -o " + out("km.xml") + lead_of(three));
        }
        // The rest on one node.
        {
            local_cluster_guard c(third);
            REQUIRE(c.up.exit_code == 0);
            must(dnnc + " restore " + out("km.xml") + " --cluster " + third + to_of(one));
            must(dnnc + " step " + std::to_string(n - k - m) + lead_of(one));
            must(dnnc + " output -o " + out("part3.csv") + lead_of(one));
            must(dnnc + " snapshot -o " + out("chained-end.xml") + lead_of(one));
        }
        auto body = [&](const std::string& name) {
            const auto text = slurp(out(name));
            return text.substr(text.find('\n') + 1);
        };
        const auto header_and_rows = slurp(out("part1.csv"));
        CHECK(header_and_rows + body("part2.csv") + body("part3.csv") == slurp(out("straight.csv")));
        CHECK(state_of(slurp(out("chained-end.xml"))) == state_of(slurp(out("straight-end.xml"))));
    }
}

TEST_CASE("a snapshot needs a frozen network, and bad snapshots change nothing on the cluster") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    std::vector<int> ports;
    const auto config = dir.file("net.xml", with_cluster("associative/associative.xml", {1, 1}, ports));
    local_cluster_guard c(config);
    REQUIRE(c.up.exit_code == 0);
    submit_and_step(config, ports, 5);
    const auto good = (dir.path / "good.dnncs").string();
    must(dnnc + " snapshot -o " + good + lead_of(ports));

    std::string bytes = slurp(good);
    const auto flipped = dir.file("flipped.dnncs", bytes.substr(0, bytes.size() / 2) + "X" + bytes.substr(bytes.size() / 2 + 1));
    const auto truncated = dir.file("truncated.dnncs", bytes.substr(0, bytes.size() - 40));
    must(dnnc + " snapshot -o " + (dir.path / "good.xml").string() + lead_of(ports));
    std::string snapshot_xml = slurp((dir.path / "good.xml").string());
    const auto unknown = dir.file("unknown.xml", std::regex_replace(snapshot_xml, std::regex("id=\"m3\" output"), "id=\"zz\" output"));
    const auto no_tick = dir.file("no-tick.xml", std::regex_replace(snapshot_xml, std::regex(" tick=\"5\""), ""));
    // Regression: validate read a binary snapshot as XML.
    const auto valid = run_command(dnnc + " validate " + good);
    CHECK(valid.exit_code == 0);
    CHECK_THAT(valid.out, Catch::Contains("valid"));
    for (const auto& bad : {flipped, truncated, unknown, no_tick}) {
        INFO(bad);
        CHECK(run_command(dnnc + " validate " + bad).exit_code == 2);
        const auto r = run_command(dnnc + " restore " + bad + " --replace" + to_of(ports));
        CHECK(r.exit_code == 2);
        CHECK_FALSE(r.err.empty());
    }
    const auto s = json::parse(run_command(dnnc + " status --json" + lead_of(ports)).out);
    CHECK(s["tick"] == 4);
    CHECK(s["state"] == "frozen");

    // Running: no snapshot.
    must(dnnc + " start" + lead_of(ports));
    const auto running = run_command(dnnc + " snapshot -o " + (dir.path / "x.xml").string() + lead_of(ports));
    CHECK(running.exit_code != 0);
    CHECK_THAT(running.err, Catch::Contains("frozen"));
    must(dnnc + " freeze" + lead_of(ports));
}

TEST_CASE("periodic checkpoints, and recovery from a dead node equals a run without the failure") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    std::vector<int> ports;
    const auto config = dir.file(
        "net.xml", cluster_document({{"a"}, {"b"}, {"c"}},
                                    {R"(<link from="a" to="b"/>)", R"(<link from="b" to="c"/>)", R"(<link from="a" to="c"/>)"},
                                    ports, 300, "  <run probes=\"2\" heartbeat-timeout=\"400\" checkpoint-every=\"50\" tick-period=\"1\"/>\n"));
    const auto inputs = dir.file("in.csv", "tick,target,value\n0,p[3],1\n0,p[100],-1\n");
    // The nodes' state folders, where checkpoints go, are in the scratch folder.
    setenv("XDG_STATE_HOME", dir.path.c_str(), 1);
    const auto checkpoints = (dir.path / "dnnc" / "checkpoints" / "ckpt").string();
    {
        local_cluster_guard cluster(config);
        REQUIRE(cluster.up.exit_code == 0);
        must(dnnc + " submit " + config + to_of(ports));
        must(dnnc + " input " + inputs + lead_of(ports));
        const auto outside = run_command(dnnc + " checkpoint --every 50 --dir " + (dir.path / "ckpt").string() + lead_of(ports));
        CHECK(outside.exit_code != 0);
        CHECK_THAT(outside.err, Catch::Contains("checkpoints stay in the lead's state folder"));
        must(dnnc + " checkpoint --every 50 --keep 2 --dir ckpt" + lead_of(ports));
        must(dnnc + " start" + lead_of(ports));
        // Wait for at least two checkpoints, then kill c behind the lead's back.
        wait_for_checkpoints(checkpoints, 2);
        REQUIRE(kill(pid_in(cluster.up.out, "c"), SIGKILL) == 0);
        json s;
        for (int i = 0; i < 50; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            s = json::parse(run_command(dnnc + " status --json" + lead_of(ports)).out);
            if (s["state"] == "failed") break;
        }
        REQUIRE(s["state"] == "failed");
        // A checkpoint written as c died appears a moment before the oldest is removed: the
        // folder settles at the newest two.
        std::size_t kept = 0;
        for (int i = 0; i < 40; ++i) {
            kept = 0;
            for (const auto& e : std::filesystem::directory_iterator(checkpoints)) {
                CHECK_THAT(e.path().filename().string(), Catch::StartsWith("checkpoint-"));
                ++kept;
            }
            if (kept == 2) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        CHECK(kept == 2);

        const auto recovered = run_command(dnnc + " recover --json" + lead_of(ports));
        INFO(recovered.err);
        REQUIRE(recovered.exit_code == 0);
        const auto r = json::parse(recovered.out);
        CHECK(r["removed"] == json::array({"c"}));
        CHECK(r["nodes"].size() == 2);
        CHECK(r["tick"].get<int>() % 50 == 0);
        must(dnnc + " step 60" + lead_of(ports));
        must(dnnc + " output -o " + (dir.path / "out.csv").string() + lead_of(ports));
    }
    const auto rows = slurp((dir.path / "out.csv").string());
    const auto ticks = std::count(rows.begin(), rows.end(), '\n') - 1;
    const auto straight = (dir.path / "straight.csv").string();
    must(dnnc + " run " + config + " --nodes 1 --ticks " + std::to_string(ticks) + " --input " + inputs + " --output " + straight);
    CHECK(rows == slurp(straight));
}

TEST_CASE("checkpoint-every writes checkpoints when dnnc step drives the clock, and checkpoint --now one of the frozen network") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    std::vector<int> ports;
    const auto config = dir.file("net.xml", two_linked_nodes(ports, 100, "  <run probes=\"2\" checkpoint-every=\"50\"/>\n"));
    setenv("XDG_STATE_HOME", dir.path.c_str(), 1);
    local_cluster_guard cluster(config);
    REQUIRE(cluster.up.exit_code == 0);
    must(dnnc + " submit " + config + to_of(ports));
    must(dnnc + " step 120" + lead_of(ports));
    const auto folder = dir.path / "dnnc" / "checkpoints" / "it";
    CHECK(std::filesystem::exists(folder / "checkpoint-50.dnncs"));
    CHECK(std::filesystem::exists(folder / "checkpoint-100.dnncs"));
    // One now, of the frozen network; refused while it runs, and a checkpoint command needs
    // --every or --now.
    must(dnnc + " checkpoint --now" + lead_of(ports));
    CHECK(std::filesystem::exists(folder / "checkpoint-120.dnncs"));
    must(dnnc + " start" + lead_of(ports));
    const auto running = run_command(dnnc + " checkpoint --now" + lead_of(ports));
    CHECK(running.exit_code == 2);
    CHECK_THAT(running.err, Catch::Contains("must be frozen"));
    const auto neither = run_command(dnnc + " checkpoint" + lead_of(ports));
    CHECK(neither.exit_code == 2);
    CHECK_THAT(neither.err, Catch::Contains("--every T or --now"));
    must(dnnc + " freeze" + lead_of(ports));
}

TEST_CASE("the lead holds a bounded number of output rows and dnnc output says how many it missed") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    std::vector<int> ports;
    // 4 output columns of 4 bytes: 1K holds 64 rows.
    const auto config = dir.file("net.xml", two_linked_nodes(ports, 100, "  <run probes=\"2\"/>\n"));
    local_cluster_guard cluster(config, "--output-memory 1K");
    REQUIRE(cluster.up.exit_code == 0);
    must(dnnc + " submit " + config + to_of(ports));
    must(dnnc + " step 100" + lead_of(ports));
    const auto late = run_command(dnnc + " output" + lead_of(ports));
    CHECK(late.exit_code == 1);
    CHECK_THAT(late.err, Catch::Contains("missed the output rows of ticks 0..35"));
    CHECK_THAT(late.err, Catch::Contains("missed 36 output rows"));
    CHECK(std::count(late.out.begin(), late.out.end(), '\n') == 1 + 64);
    const auto recent = run_command(dnnc + " output --from 36" + lead_of(ports));
    CHECK(recent.exit_code == 0);
    CHECK(recent.out == late.out);
}

TEST_CASE("a batched run refuses snapshots and inputs for lanes it does not have, and goes on") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    std::vector<int> ports;
    auto text = with_cluster("associative/associative.xml", {1, 1}, ports);
    text = std::regex_replace(text, std::regex("<run probes=\"2\"/>"), "<run probes=\"2\" batch=\"3\"/>");
    const auto config = dir.file("net.xml", text);
    local_cluster_guard c(config);
    REQUIRE(c.up.exit_code == 0);
    submit_and_step(config, ports, 3);
    const auto snapshot = run_command(dnnc + " snapshot -o " + (dir.path / "s.dnncs").string() + lead_of(ports));
    CHECK(snapshot.exit_code != 0);
    CHECK_THAT(snapshot.err, Catch::Contains("batch 3"));
    CHECK_FALSE(std::filesystem::exists(dir.path / "s.dnncs"));
    const auto lanes = dir.file("lanes.csv", "tick,target,value,lane\n5,m0,1,3\n");
    const auto input = run_command(dnnc + " input " + lanes + lead_of(ports));
    CHECK(input.exit_code != 0);
    CHECK_THAT(input.err, Catch::Contains("lane 3 is out of range; the run has batch 3"));
    must(dnnc + " step 2" + lead_of(ports));
    const auto out = run_command(dnnc + " output" + lead_of(ports));
    REQUIRE(out.exit_code == 0);
    CHECK(out.out.rfind("tick,lane,", 0) == 0);
    CHECK(std::count(out.out.begin(), out.out.end(), '\n') == 1 + 5 * 3);
}

TEST_CASE("dnnc output prints every tick of a batched run, however many replies it takes") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    std::vector<int> ports;
    // 100 outputs x 2,000 lanes: 200,000 values per tick, four ticks per reply at most.
    auto text = two_linked_nodes(ports, 120, "  <run probes=\"2\" batch=\"2000\"/>\n");
    text = std::regex_replace(text, std::regex("neurons=\"p\\[0:4\\]\""), "neurons=\"p[0:100]\"");
    const auto config = dir.file("wide.xml", text);
    local_cluster_guard c(config);
    REQUIRE(c.up.exit_code == 0);
    submit_and_step(config, ports, 10);
    const auto out = run_command(dnnc + " output" + lead_of(ports));
    REQUIRE(out.exit_code == 0);
    CHECK(std::count(out.out.begin(), out.out.end(), '\n') == 1 + 10 * 2000);
    CHECK(out.out.find("\n9,1999,") != std::string::npos);

    // More values per tick than a report may carry is refused at submit.
    auto wider = std::regex_replace(text, std::regex("batch=\"2000\""), "batch=\"4096\"");
    wider = std::regex_replace(wider, std::regex("size=\"120\""), "size=\"300\"");
    wider = std::regex_replace(wider, std::regex("neurons=\"p\\[0:100\\]\""), "neurons=\"p[0:300]\"");
    const auto refused = run_command(dnnc + " submit --replace " + dir.file("wider.xml", wider) + to_of(ports));
    CHECK(refused.exit_code != 0);
    CHECK_THAT(refused.err, Catch::Contains("1228800 values per tick, more than 1000000"));
}

TEST_CASE("a snapshot holds its spike sources' spikes: restored after the CSV is gone it goes on as a straight run") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    const auto out = [&](const std::string& name) { return (dir.path / name).string(); };
    const auto spikes_csv = dir.file("input_spikes.csv", slurp(source_path("examples/spike_source/input_spikes.csv")));
    std::vector<int> straight_ports, two, one;
    const auto straight = dir.file("straight.xml", with_cluster("spike_source/spike_source.xml", {1}, straight_ports));
    const auto first = dir.file("two.xml", with_cluster("spike_source/spike_source.xml", {1, 2}, two));
    // The cluster restored onto, without the network (which names the file about to go).
    const auto second = dir.file(
        "one.xml", std::regex_replace(with_cluster("spike_source/spike_source.xml", {1}, one), std::regex("<network[\\s\\S]*</network>"), ""));
    {
        local_cluster_guard c(straight);
        REQUIRE(c.up.exit_code == 0);
        submit_and_step(straight, straight_ports, 1200);
        must(dnnc + " output -o " + out("straight.csv") + lead_of(straight_ports));
    }
    {
        local_cluster_guard c(first);
        REQUIRE(c.up.exit_code == 0);
        submit_and_step(first, two, 700);
        must(dnnc + " output -o " + out("part1.csv") + lead_of(two));
        must(dnnc + " snapshot -o " + out("k.xml") + lead_of(two));
    }
    const auto snapshot = slurp(out("k.xml"));
    CHECK(snapshot.find("input_spikes.csv") == std::string::npos);
    CHECK(snapshot.find("<spike t-ms=\"170\" index=\"0\"/>") != std::string::npos);
    std::filesystem::remove(spikes_csv);
    {
        local_cluster_guard c(second);
        REQUIRE(c.up.exit_code == 0);
        must(dnnc + " restore " + out("k.xml") + " --cluster " + second + to_of(one));
        must(dnnc + " step 500" + lead_of(one));
        must(dnnc + " output -o " + out("part2.csv") + lead_of(one));
    }
    const auto rest = slurp(out("part2.csv"));
    CHECK(slurp(out("part1.csv")) + rest.substr(rest.find('\n') + 1) == slurp(out("straight.csv")));
}
