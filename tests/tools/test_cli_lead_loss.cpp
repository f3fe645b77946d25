// Lead loss on real clusters: kill -9 the lead mid-run; its standby (the lead's first child
// in the broadcast tree) takes over from the last replicated checkpoint, and the outputs and
// spikes equal those of a run without the failure, the rows before the checkpoint included;
// also when the lead, or a worker, dies in the middle of a re-balance.
#include "cluster_fixture.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <csignal>
#include <filesystem>
#include <future>
#include <regex>
#include <thread>

using namespace dnnc::test;
using nlohmann::json;

namespace {

std::string at(int port) { return " --lead 127.0.0.1:" + std::to_string(port); }

json status_of(int port) {
    const auto r = run_command(dnnc_binary() + " status --json" + at(port));
    return r.exit_code == 0 ? json::parse(r.out) : json();
}

// Polls the node at `port` until `done` holds for its status (at most `seconds`).
json wait_for(int port, const std::function<bool(const json&)>& done, int seconds = 20) {
    json s;
    for (int i = 0; i < seconds * 20; ++i) {
        s = status_of(port);
        if (!s.is_null() && done(s)) return s;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL("timed out; last status: " << s.dump());
    return s;
}

// A free run of 100 neurons on a (the lead), b (its standby) and c, linked by `links`,
// started once the nodes are up; returns when b holds a replicated checkpoint.
std::string free_run_on_three(const scratch_dir& dir, std::vector<int>& ports, const std::vector<std::string>& links) {
    return dir.file("net.xml", cluster_document({{"a"}, {"b"}, {"c"}}, links, ports, 100,
                                                "  <run probes=\"2\" heartbeat-timeout=\"400\" checkpoint-every=\"50\" tick-period=\"2\"/>\n"));
}
void start_replicated(const std::string& config, const std::vector<int>& ports, const std::string& options) {
    must(dnnc_binary() + " submit " + config + options + " --to 127.0.0.1:" + std::to_string(ports[0]));
    must(dnnc_binary() + " start" + options + at(ports[0]));
    wait_for(ports[1], [](const json& s) { return s.contains("replica") && s["replica"]["checkpoint_tick"] >= 50; });
}

// A free run of 300 neurons on a (the lead), b (its standby) and c, all linked, paced at
// 1 ms a tick with a checkpoint every 50 ticks; the nodes' state folders in `dir`.
std::string fully_linked_free_run(const scratch_dir& dir, std::vector<int>& ports) {
    const auto config = dir.file(
        "net.xml", cluster_document({{"a"}, {"b"}, {"c"}},
                                    {R"(<link from="a" to="b"/>)", R"(<link from="b" to="c"/>)", R"(<link from="a" to="c"/>)"},
                                    ports, 300, "  <run probes=\"2\" heartbeat-timeout=\"400\" checkpoint-every=\"50\" tick-period=\"1\"/>\n"));
    setenv("XDG_STATE_HOME", dir.path.c_str(), 1);
    return config;
}

// The outputs the test saved in dir/out.csv equal those of a run of `config` without any
// failure or change, as many ticks long.
void check_outputs_of_straight_run(const scratch_dir& dir, const std::string& config) {
    const auto rows = slurp((dir.path / "out.csv").string());
    const auto ticks = std::count(rows.begin(), rows.end(), '\n') - 1;
    REQUIRE(ticks > 100);
    const auto straight = (dir.path / "straight.csv").string();
    must(dnnc_binary() + " run " + config + " --nodes 1 --ticks " + std::to_string(ticks) + " --output " + straight);
    CHECK(rows == slurp(straight));
}

// Re-balances the cluster's network to `capacity` ("c=3") and kills node `victim` with
// SIGKILL `after_ms` into it; the re-balance's result.
command_result rebalance_killing(const local_cluster_guard& cluster, int lead_port, const std::string& capacity,
                                 const std::string& victim, int after_ms) {
    auto moving = std::async(std::launch::async, [&] { return run_command(dnnc_binary() + " rebalance --capacity " + capacity + at(lead_port)); });
    std::this_thread::sleep_for(std::chrono::milliseconds(after_ms));
    REQUIRE(kill(pid_in(cluster.up.out, victim), SIGKILL) == 0);
    return moving.get();
}

// Lets the run at `lead_port` go on 20 ticks more, freezes it and saves its outputs in
// dir/out.csv.
void run_on_and_save_outputs(const scratch_dir& dir, int lead_port) {
    const auto before = status_of(lead_port)["tick"].get<int>();
    wait_for(lead_port, [&](const json& s) { return s["tick"].get<int>() > before + 20; });
    must(dnnc_binary() + " freeze" + at(lead_port));
    must(dnnc_binary() + " output -o " + (dir.path / "out.csv").string() + at(lead_port));
}

}  // namespace

TEST_CASE("kill -9 the lead of a free-running network: its standby takes over and the outputs equal a run without the failure") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    std::vector<int> ports;
    const auto config = dir.file(
        "net.xml", cluster_document({{"a"}, {"b"}, {"c"}},
                                    {R"(<link from="a" to="b"/>)", R"(<link from="b" to="c"/>)", R"(<link from="a" to="c"/>)"},
                                    ports, 300, "  <run probes=\"2\" heartbeat-timeout=\"400\" checkpoint-every=\"50\" tick-period=\"1\"/>\n"));
    const auto inputs = dir.file("in.csv", "tick,target,value\n0,p[3],1\n0,p[100],-1\n");
    setenv("XDG_STATE_HOME", dir.path.c_str(), 1);
    {
        local_cluster_guard cluster(config);
        REQUIRE(cluster.up.exit_code == 0);
        must(dnnc + " submit " + config + " --to 127.0.0.1:" + std::to_string(ports[0]));
        must(dnnc + " input " + inputs + at(ports[0]));
        must(dnnc + " start" + at(ports[0]));
        CHECK(status_of(ports[0])["standby_node"] == "b");
        // b holds the lead's checkpoints and rows, on its own disk too.
        const auto held = wait_for(ports[1], [](const json& s) { return s.contains("replica") && s["replica"]["checkpoint_tick"] >= 100; });
        CHECK(held["replica"]["lead"] == "a");
        CHECK(held["replica"]["rows"].get<int>() >= 100);
        CHECK(std::filesystem::exists(dir.path / "dnnc" / "replicas" / "it"));

        REQUIRE(kill(pid_in(cluster.up.out, "a"), SIGKILL) == 0);
        // Any node names the new lead. A loaded machine (two cores, a full ctest -j2) once took
        // more than 20 s to answer here: the takeover may take up to a minute.
        wait_for(ports[2], [](const json& s) { return s.value("lead", "") == "b"; }, 60);
        const auto lead = wait_for(ports[1], [](const json& s) { return s.value("role", "") == "lead" && s.value("state", "") == "running"; }, 60);
        CHECK(lead["dead"].empty());
        CHECK(lead["nodes"].size() == 2);
        const auto c_text = run_command(dnnc + " status" + at(ports[2]));
        CHECK_THAT(c_text.out, Catch::Contains("lead b (127.0.0.1:" + std::to_string(ports[1]) + ")"));
        // It carries the free run on; commands go to it.
        const auto before = status_of(ports[1])["tick"].get<int>();
        wait_for(ports[1], [&](const json& s) { return s["tick"].get<int>() > before + 20; });
        must(dnnc + " freeze" + at(ports[1]));
        must(dnnc + " output -o " + (dir.path / "out.csv").string() + at(ports[1]));
    }
    const auto rows = slurp((dir.path / "out.csv").string());
    const auto ticks = std::count(rows.begin(), rows.end(), '\n') - 1;
    REQUIRE(ticks > 100);
    const auto straight = (dir.path / "straight.csv").string();
    must(dnnc + " run " + config + " --nodes 1 --ticks " + std::to_string(ticks) + " --input " + inputs + " --output " + straight);
    CHECK(rows == slurp(straight));
}

TEST_CASE("dnnc run goes on when its lead is killed mid-run, with the outputs and spikes of a run without the failure") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    // A quarter-size Brunel network, recording 200 neurons, on three linked nodes.
    std::string text = slurp(source_path("examples/brunel/brunel_small.xml"));
    std::vector<int> ports{free_port(), free_port(), free_port()};
    std::string cluster = "<cluster lead=\"a\">\n";
    for (int i = 0; i < 3; ++i)
        cluster += "<node id=\"" + std::string(1, static_cast<char>('a' + i)) + "\" port=\"" + std::to_string(ports[i]) + "\"/>\n";
    cluster += "<link from=\"a\" to=\"b\"/><link from=\"b\" to=\"c\"/><link from=\"a\" to=\"c\"/></cluster>";
    text = std::regex_replace(text, std::regex("<cluster[\\s\\S]*</cluster>"), cluster);
    text = std::regex_replace(text, std::regex("<run [^>]*/>"),
                              "<run sync=\"lockstep\" send=\"nonzero\" probes=\"2\" heartbeat-timeout=\"400\" checkpoint-every=\"2000\"/>");
    text = std::regex_replace(text, std::regex("<output "), "<record neurons=\"E[0:200]\"/>\n<output ");
    const auto config = dir.file("brunel.xml", text);
    setenv("XDG_STATE_HOME", dir.path.c_str(), 1);
    const std::string ticks = " --ticks 30000";
    const auto straight = dir.path / "straight";
    must(dnnc + " run " + config + ticks + " --output " + (straight.string() + ".csv") + " --spikes " + (straight.string() + "-spikes.csv"));

    const auto failed = dir.path / "failed";
    auto run = std::async(std::launch::async, [&] {
        return run_command(dnnc + " run " + config + ticks + " --output " + (failed.string() + ".csv") + " --spikes " +
                           (failed.string() + "-spikes.csv"));
    });
    // Once the run is past a few checkpoints, its lead goes.
    const auto s = wait_for(ports[0], [](const json& st) { return st.value("tick", 0) > 5000; }, 60);
    REQUIRE(kill(s["pid"].get<int>(), SIGKILL) == 0);
    const auto r = run.get();
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("took over the run"));
    CHECK_THAT(r.out, Catch::Contains("on 2 nodes"));
    CHECK(slurp(failed.string() + ".csv") == slurp(straight.string() + ".csv"));
    CHECK(slurp(failed.string() + "-spikes.csv") == slurp(straight.string() + "-spikes.csv"));
}

TEST_CASE("a standby taking over from the lead of a frozen network leaves it frozen at the same tick") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    std::vector<int> ports;
    const auto config = dir.file(
        "net.xml", cluster_document({{"a"}, {"b"}, {"c"}}, {R"(<link from="a" to="b"/>)", R"(<link from="a" to="c"/>)"}, ports, 300,
                                    "  <run probes=\"2\" heartbeat-timeout=\"400\" checkpoint-every=\"50\"/>\n"));
    const auto inputs = dir.file("in.csv", "tick,target,value\n0,p[3],1\n0,p[100],-1\n");
    setenv("XDG_STATE_HOME", dir.path.c_str(), 1);
    {
        local_cluster_guard cluster(config);
        REQUIRE(cluster.up.exit_code == 0);
        must(dnnc + " submit " + config + " --to 127.0.0.1:" + std::to_string(ports[0]));
        must(dnnc + " input " + inputs + at(ports[0]));
        must(dnnc + " step 120" + at(ports[0]));  // checkpoints at 50 and 100, frozen at 119
        REQUIRE(kill(pid_in(cluster.up.out, "a"), SIGKILL) == 0);
        const auto s = wait_for(ports[1], [](const json& st) { return st.value("role", "") == "lead" && st["tick"] == 119; });
        CHECK(s["state"] == "frozen");
        CHECK(s["nodes"].size() == 1);  // c was linked to b only through a: cut off, left out
        must(dnnc + " output -o " + (dir.path / "out.csv").string() + at(ports[1]));
    }
    const auto straight = (dir.path / "straight.csv").string();
    must(dnnc + " run " + config + " --nodes 1 --ticks 120 --input " + inputs + " --output " + straight);
    CHECK(slurp((dir.path / "out.csv").string()) == slurp(straight));
}

TEST_CASE("idle connections flooding the lead lock out neither dnnc nor its standby, and no standby takes over") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    std::vector<int> ports;
    const auto config = free_run_on_three(dir, ports, {R"(<link from="a" to="b"/>)", R"(<link from="a" to="c"/>)"});
    const std::string with_secret = " --secret-file " + dir.file("secret", "correct horse battery staple\n");
    setenv("XDG_STATE_HOME", dir.path.c_str(), 1);
    local_cluster_guard cluster(config, with_secret);
    REQUIRE(cluster.up.exit_code == 0);
    start_replicated(config, ports, with_secret);
    // 300 connections that never send a byte, more than the 256 a node takes from one
    // address, held for many heartbeat timeouts.
    boost::asio::io_context io;
    std::vector<boost::asio::ip::tcp::socket> idle;
    for (int k = 0; k < 300; ++k) {
        idle.emplace_back(io);
        idle.back().connect({boost::asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(ports[0])});
    }
    for (int k = 0; k < 10; ++k) {
        const auto r = run_command(dnnc + " status --json" + with_secret + at(ports[0]));
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(json::parse(r.out).value("role", "") == "lead");
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    const auto lead = json::parse(run_command(dnnc + " status --json" + with_secret + at(ports[0])).out);
    CHECK(lead["state"] == "running");
    CHECK(lead["dead"].empty());
    // The standby still watches a and holds its replica; nobody else leads.
    const auto standby = json::parse(run_command(dnnc + " status --json" + with_secret + at(ports[1])).out);
    CHECK(standby.value("role", "") != "lead");
    CHECK(standby["replica"]["lead"] == "a");
    CHECK(json::parse(run_command(dnnc + " status --json" + with_secret + at(ports[2])).out)["lead"] == "a");
}

TEST_CASE("a lead cut off past its standby's timeout comes back to find the standby leading, and stops: one lead") {
    scratch_dir dir;
    std::vector<int> ports;
    const auto config =
        free_run_on_three(dir, ports, {R"(<link from="a" to="b"/>)", R"(<link from="b" to="c"/>)", R"(<link from="a" to="c"/>)"});
    setenv("XDG_STATE_HOME", dir.path.c_str(), 1);
    local_cluster_guard cluster(config);
    REQUIRE(cluster.up.exit_code == 0);
    start_replicated(config, ports, "");
    // The lead stops answering (its link cut, as far as the others can tell) for longer
    // than the timeout; b takes over; then the lead goes on where it stopped.
    const int a = pid_in(cluster.up.out, "a");
    REQUIRE(kill(a, SIGSTOP) == 0);
    const auto taken = wait_for(ports[1], [](const json& s) { return s.value("role", "") == "lead" && s.value("state", "") == "running"; }, 30);
    REQUIRE(kill(a, SIGCONT) == 0);
    // a learns from the nodes that b leads now and stops leading.
    wait_for(ports[0], [](const json& s) { return s.value("role", "") != "lead"; }, 30);
    std::this_thread::sleep_for(std::chrono::seconds(1));
    int leads = 0;
    for (int port : ports) leads += status_of(port).value("role", "") == "lead";
    CHECK(leads == 1);
    const auto after = status_of(ports[1]);
    CHECK(after.value("role", "") == "lead");
    CHECK(after.value("state", "") == "running");
    CHECK(status_of(ports[2]).value("lead", "") == "b");
    // b's run goes on.
    const auto tick = after["tick"].get<int>();
    wait_for(ports[1], [&](const json& s) { return s["tick"].get<int>() > tick + 20; });
}

TEST_CASE("kill -9 the lead in the middle of a re-balance: its standby finishes it or rolls it back, and the outputs equal a run without either") {
    // The re-balance takes about 100 ms here: a dies before its snapshot, during it, while
    // it reinstalls the network (the standby keeps the replica it held until the new run's
    // has come), or after.
    const int kill_after_ms = GENERATE(20, 50, 80, 150);
    INFO("a killed " << kill_after_ms << " ms after the re-balance began");
    scratch_dir dir;
    std::vector<int> ports;
    const auto config = fully_linked_free_run(dir, ports);
    {
        local_cluster_guard cluster(config);
        REQUIRE(cluster.up.exit_code == 0);
        start_replicated(config, ports, "");
        rebalance_killing(cluster, ports[0], "c=3", "a", kill_after_ms);
        wait_for(ports[1], [](const json& s) { return s.value("role", "") == "lead" && s.value("state", "") == "running"; }, 60);
        run_on_and_save_outputs(dir, ports[1]);
    }
    check_outputs_of_straight_run(dir, config);
}

TEST_CASE("kill -9 a worker in the middle of a re-balance: the run goes on (changed, rolled back or recovered) with the outputs of a run without either") {
    // The re-balance takes about 100 ms here: c dies before its snapshot, during it or
    // during the install, or after.
    const int kill_after_ms = GENERATE(20, 50, 80, 150);
    INFO("c killed " << kill_after_ms << " ms after the re-balance began");
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    std::vector<int> ports;
    const auto config = fully_linked_free_run(dir, ports);
    {
        local_cluster_guard cluster(config);
        REQUIRE(cluster.up.exit_code == 0);
        start_replicated(config, ports, "");
        const auto moved = rebalance_killing(cluster, ports[0], "b=3", "c", kill_after_ms);
        INFO("dnnc rebalance: " << moved.exit_code << " " << moved.out << moved.err);
        // Done without c, back at the tick it began on without c, or (c lost before the
        // snapshot) the run failed, and recovers from its last checkpoint like any run.
        if (wait_for(ports[0], [](const json& s) { return s.contains("state"); })["state"] == "failed" ||
            status_of(ports[0])["nodes"].size() == 3) {
            wait_for(ports[0], [](const json& s) { return s["dead"].size() == 1; });
            must(dnnc + " recover" + at(ports[0]));
        }
        const auto s = wait_for(ports[0], [](const json& st) { return st.value("state", "") != "failed"; });
        CHECK(s["nodes"].size() == 2);
        if (s["state"] != "running") must(dnnc + " start" + at(ports[0]));
        run_on_and_save_outputs(dir, ports[0]);
    }
    check_outputs_of_straight_run(dir, config);
}
