// Plastic synapses through the command line on real local clusters: dnnc run gives the same
// spikes and the same learned weights (--weights) on 1, 2, 3 and 4 nodes, and with the weights
// sampled along the way (--weights-every) the same as without; a cluster driven
// by hand gives them too through dnnc weights --lead, for one projection or all; reading
// weights while the network runs, naming a projection that is not plastic, or a plastic
// network under window sync are refused with exit 2, and the cluster keeps running. A
// snapshot taken on 4 nodes (binary or XML) restored on 2 continues as a straight run, and
// one whose synapse state does not fit its network is refused, leaving the cluster as it was;
// recovery from a dead node restores the last checkpoint's learned state, and so does the
// standby when the lead of a dnnc run is killed.
#include "cluster_fixture.hpp"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <future>
#include <regex>
#include <sstream>
#include <thread>

using namespace dnnc::test;

namespace {

const std::string example = source_path("examples/stdp/stdp.xml");

// The stdp example on three local nodes that fail over quickly, with the run settings
// `settings`; the nodes' state folders (checkpoints, replicas) in `dir`.
std::string on_three_nodes(const scratch_dir& dir, std::vector<int>& ports, const std::string& settings) {
    setenv("XDG_STATE_HOME", dir.path.c_str(), 1);
    return dir.file("net.xml", std::regex_replace(with_cluster("stdp/stdp.xml", {1, 1, 1}, ports), std::regex("<run probes=\"2\"/>"),
                                                  "<run probes=\"2\" heartbeat-timeout=\"400\" " + settings + "/>"));
}

std::size_t rows_of(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) - 1; }

}  // namespace

TEST_CASE("dnnc run gives the same spikes and learned weights of a plastic network on 1, 2, 3 and 4 nodes") {
    scratch_dir dir;
    std::string spikes, weights;
    for (int nodes = 1; nodes <= 4; ++nodes) {
        INFO(nodes << " nodes");
        const auto s = (dir.path / ("s" + std::to_string(nodes) + ".csv")).string();
        const auto w = (dir.path / ("w" + std::to_string(nodes) + ".csv")).string();
        const auto r = run_command(dnnc_binary() + " run " + example + " --nodes " + std::to_string(nodes) +
                                   " --ticks 3000 --spikes " + s + " --weights " + w);
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(r.out.find("weights: " + w + " (20000 synapses)") != std::string::npos);
        if (nodes == 1) {
            spikes = slurp(s);
            weights = sorted_csv(slurp(w));
            REQUIRE(weights.rfind("projection,source,target,weight\nE_E,E[0],E[", 0) == 0);
            REQUIRE(rows_of(weights) == 20000);
            REQUIRE(rows_of(spikes) > 2000);
            continue;
        }
        CHECK(slurp(s) == spikes);
        CHECK(sorted_csv(slurp(w)) == weights);
    }
    // The weights did change: not every E_E weight is still the 1.5 it was built with.
    std::istringstream in(weights);
    std::string line;
    std::size_t changed = 0;
    while (std::getline(in, line))
        if (line.rfind("E_E,", 0) == 0 && line.substr(line.rfind(',') + 1) != "1.5") ++changed;
    CHECK(changed > 10000);
}

TEST_CASE("dnnc run --weights-every writes the weights after every T ticks and changes neither the spikes nor the final weights") {
    scratch_dir dir;
    auto run = [&](const std::string& name, int nodes, int ticks, const std::string& more) {
        const auto r = run_command(dnnc_binary() + " run " + example + " --nodes " + std::to_string(nodes) + " --ticks " +
                                   std::to_string(ticks) + " --spikes " + (dir.path / (name + ".csv")).string() + " --weights " +
                                   (dir.path / ("w" + name + ".csv")).string() + more);
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        return r.out;
    };
    run("straight", 1, 2500, "");
    run("first", 1, 1000, "");
    // Steps of 1,000, 1,000 and 500 ticks, the weights written after the first two.
    const auto out = run("sampled", 3, 2500, " --weights-every 1000");
    const auto sample = [&](int tick) { return (dir.path / ("wsampled-" + std::to_string(tick) + ".csv")).string(); };
    CHECK(out.find("weights every 1000 ticks: " + sample(1000) + " ... " + sample(2000) + " (2 files)") != std::string::npos);
    CHECK(slurp((dir.path / "sampled.csv").string()) == slurp((dir.path / "straight.csv").string()));
    CHECK(sorted_csv(slurp((dir.path / "wsampled.csv").string())) == sorted_csv(slurp((dir.path / "wstraight.csv").string())));
    CHECK(sorted_csv(slurp(sample(1000))) == sorted_csv(slurp((dir.path / "wfirst.csv").string())));
    CHECK(rows_of(slurp(sample(2000))) == 20000);
    CHECK(sorted_csv(slurp(sample(2000))) != sorted_csv(slurp(sample(1000))));
    CHECK_FALSE(std::filesystem::exists(sample(2500)));

    const auto alone = run_command(dnnc_binary() + " run " + example + " --nodes 1 --ticks 10 --weights-every 5");
    CHECK(alone.exit_code == 2);
    CHECK(alone.err.find("--weights") != std::string::npos);
}

TEST_CASE("dnnc weights reads a frozen cluster's learned weights, for one projection or all, and refuses what it cannot") {
    scratch_dir dir;
    std::vector<int> ports{free_port(), free_port(), free_port()};
    std::string doc = slurp(example);
    const std::string cluster = "  <cluster lead=\"a\">\n    <node id=\"a\" port=\"" + std::to_string(ports[0]) + "\"/>\n    <node id=\"b\" port=\"" +
                                std::to_string(ports[1]) + "\"/>\n    <node id=\"c\" port=\"" + std::to_string(ports[2]) +
                                "\"/>\n    <link from=\"a\" to=\"b\"/>\n    <link from=\"b\" to=\"c\"/>\n  </cluster>\n";
    doc.insert(doc.find("  <run"), cluster);
    const auto config = dir.file("c.xml", doc);
    const auto reference = (dir.path / "ref.csv").string();
    REQUIRE(run_command(dnnc_binary() + " run " + example + " --nodes 1 --ticks 2000 --weights " + reference).exit_code == 0);

    local_cluster_guard up(config);
    REQUIRE(up.up.exit_code == 0);
    const std::string lead = " --lead 127.0.0.1:" + std::to_string(ports[0]);
    REQUIRE(run_command(dnnc_binary() + " submit " + config + " --to 127.0.0.1:" + std::to_string(ports[0])).exit_code == 0);
    REQUIRE(run_command(dnnc_binary() + " step 2000 --json" + lead).exit_code == 0);
    REQUIRE(run_command(dnnc_binary() + " freeze" + lead).exit_code == 0);
    const auto all = (dir.path / "all.csv").string(), inhibitory = (dir.path / "ie.csv").string();
    const auto read = run_command(dnnc_binary() + " weights -o " + all + lead);
    INFO(read.err);
    REQUIRE(read.exit_code == 0);
    CHECK(sorted_csv(slurp(all)) == sorted_csv(slurp(reference)));
    REQUIRE(run_command(dnnc_binary() + " weights --projection I_E -o " + inhibitory + lead).exit_code == 0);
    const auto only = slurp(inhibitory);
    CHECK(rows_of(only) == 4000);
    CHECK(only.find("E_E,") == std::string::npos);

    const auto static_one = run_command(dnnc_binary() + " weights --projection E_I -o " + inhibitory + lead);
    CHECK(static_one.exit_code == 2);
    CHECK(static_one.err.find("no plastic projection 'E_I'") != std::string::npos);
    REQUIRE(run_command(dnnc_binary() + " start" + lead).exit_code == 0);
    const auto running = run_command(dnnc_binary() + " weights -o " + all + lead);
    CHECK(running.exit_code != 0);
    CHECK(running.err.find("freeze it first") != std::string::npos);
    REQUIRE(run_command(dnnc_binary() + " freeze" + lead).exit_code == 0);
    CHECK(run_command(dnnc_binary() + " weights -o " + all + lead).exit_code == 0);
}

TEST_CASE("a plastic network under window sync is refused with its location, exit 2") {
    scratch_dir dir;
    std::string doc = slurp(example);
    doc.replace(doc.find("sync=\"lockstep\""), 15, "sync=\"window\"");
    const auto r = run_command(dnnc_binary() + " run " + dir.file("w.xml", doc) + " --nodes 2 --ticks 10");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("w.xml:") != std::string::npos);
    CHECK(r.err.find("lockstep") != std::string::npos);
}

TEST_CASE("a plastic network snapshotted on 4 nodes and restored on 2 learns on as a straight run") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    const auto out = [&](const std::string& name) { return (dir.path / name).string(); };
    must(dnnc + " run " + example + " --nodes 1 --ticks 2000 --weights " + out("straight.csv"));
    std::vector<int> four, two;
    const auto first = dir.file("four.xml", with_cluster("stdp/stdp.xml", {1, 1, 1, 1}, four));
    const auto second = dir.file("two.xml", with_cluster("stdp/stdp.xml", {2, 1}, two));
    {
        local_cluster_guard c(first);
        REQUIRE(c.up.exit_code == 0);
        must(dnnc + " submit " + first + to_of(four));
        must(dnnc + " step 1200" + lead_of(four));
        must(dnnc + " snapshot -o " + out("k.dnncs") + lead_of(four));
        must(dnnc + " snapshot -o " + out("k.xml") + lead_of(four));
    }
    const std::string xml = slurp(out("k.xml"));
    CHECK(xml.find("<trace tau=\"20\"") != std::string::npos);
    CHECK(xml.find(" synapses=\"") != std::string::npos);
    local_cluster_guard c(second);
    REQUIRE(c.up.exit_code == 0);
    for (const char* snapshot : {"k.dnncs", "k.xml"}) {
        INFO(snapshot);
        must(dnnc + " restore " + out(snapshot) + " --replace --cluster " + second + to_of(two));
        must(dnnc + " step 800" + lead_of(two));
        must(dnnc + " weights -o " + out("restored.csv") + lead_of(two));
        CHECK(sorted_csv(slurp(out("restored.csv"))) == sorted_csv(slurp(out("straight.csv"))));
    }

    // One synapse value short: refused with exit 2, and the cluster still holds what it ran.
    const auto bad = dir.file("bad.xml", std::regex_replace(xml, std::regex(" synapses=\"([^\"]*) [^ \"]+\""), " synapses=\"$1\"",
                                                             std::regex_constants::format_first_only));
    REQUIRE(slurp(bad) != xml);
    const auto refused = run_command(dnnc + " restore " + bad + " --replace --cluster " + second + to_of(two));
    INFO(refused.err);
    CHECK(refused.exit_code == 2);
    CHECK_THAT(refused.err, Catch::Contains("does not match its network"));
    const auto status = nlohmann::json::parse(run_command(dnnc + " status --json" + lead_of(two)).out);
    CHECK(status["tick"] == 1999);
    must(dnnc + " weights -o " + out("after.csv") + lead_of(two));
    CHECK(sorted_csv(slurp(out("after.csv"))) == sorted_csv(slurp(out("straight.csv"))));
}

TEST_CASE("recovery of a plastic network from a dead node learns on as a run without the failure") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    std::vector<int> ports;
    const auto config = on_three_nodes(dir, ports, "checkpoint-every=\"50\" tick-period=\"1\"");
    const auto checkpoints = (dir.path / "dnnc" / "checkpoints").string();
    const int total = 1000;
    {
        local_cluster_guard cluster(config);
        REQUIRE(cluster.up.exit_code == 0);
        must(dnnc + " submit " + config + to_of(ports));
        must(dnnc + " start" + lead_of(ports));
        auto checkpoint_files = [&] {
            std::size_t files = 0;
            if (std::filesystem::exists(checkpoints))
                for (const auto& e : std::filesystem::recursive_directory_iterator(checkpoints)) files += e.is_regular_file();
            return files;
        };
        for (int i = 0; i < 200 && checkpoint_files() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        REQUIRE(checkpoint_files() >= 2);
        REQUIRE(kill(pid_in(cluster.up.out, "n2"), SIGKILL) == 0);
        nlohmann::json s = nlohmann::json::object();
        for (int i = 0; i < 50 && s.value("state", "") != "failed"; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            s = nlohmann::json::parse(run_command(dnnc + " status --json" + lead_of(ports)).out);
        }
        REQUIRE(s["state"] == "failed");
        const auto recovered = run_command(dnnc + " recover --json" + lead_of(ports));
        INFO(recovered.err);
        REQUIRE(recovered.exit_code == 0);
        const int tick = nlohmann::json::parse(recovered.out)["tick"].get<int>();
        REQUIRE(tick > 0);
        REQUIRE(tick < total);
        must(dnnc + " step " + std::to_string(total - tick) + lead_of(ports));
        must(dnnc + " weights -o " + (dir.path / "recovered.csv").string() + lead_of(ports));
    }
    const auto straight = (dir.path / "straight.csv").string();
    must(dnnc + " run " + example + " --nodes 1 --ticks " + std::to_string(total) + " --weights " + straight);
    CHECK(sorted_csv(slurp((dir.path / "recovered.csv").string())) == sorted_csv(slurp(straight)));
}

TEST_CASE("dnnc run of a plastic network goes on when its lead is killed, with the spikes and weights of a run without the failure") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    std::vector<int> ports;
    const auto config = on_three_nodes(dir, ports, "checkpoint-every=\"1000\"");
    const auto out = [&](const std::string& name) { return (dir.path / name).string(); };
    const std::string ticks = " --ticks 12000";
    must(dnnc + " run " + config + ticks + " --spikes " + out("straight-spikes.csv") + " --weights " + out("straight.csv"));
    auto run = std::async(std::launch::async, [&] {
        return run_command(dnnc + " run " + config + ticks + " --spikes " + out("failed-spikes.csv") + " --weights " + out("failed.csv"));
    });
    // Once the run is past a few checkpoints, its lead goes.
    int pid = 0;
    for (int i = 0; i < 1200 && pid == 0; ++i) {
        const auto r = run_command(dnnc + " status --json" + lead_of(ports));
        if (r.exit_code == 0) {
            const auto s = nlohmann::json::parse(r.out);
            if (s.value("tick", 0) > 3000) pid = s["pid"].get<int>();
        }
        if (pid == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    REQUIRE(pid > 0);
    REQUIRE(kill(pid, SIGKILL) == 0);
    const auto r = run.get();
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("took over the run"));
    CHECK(slurp(out("failed-spikes.csv")) == slurp(out("straight-spikes.csv")));
    CHECK(sorted_csv(slurp(out("failed.csv"))) == sorted_csv(slurp(out("straight.csv"))));
}
