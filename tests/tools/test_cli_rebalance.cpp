// Re-balancing and membership on real local clusters: a node joins a running 2-node cluster
// (2 -> 3) and another drains, a re-balance to new capacities follows a growth, and a
// running plastic network is re-balanced (one node keeps its engine while the other two
// trade neurons, with engines built ahead) and drained; each run's spikes (and learned
// weights) are bit for bit those of the same run without the change. A re-balance that would move nothing changes
// nothing, a dry run shows without changing; refusals (a node of another cluster, an address
// that does not answer, an id the cluster has, the lead or an unknown node drained, bad
// capacities, no network) exit 2 and the run steps on as it was. With rebalance="auto" the
// lead re-balances by itself when a node computes its ticks much slower than the others, and
// drains a node that a CPU quota holds back. A submit or a freeze sent during a move waits for it.
#include "cluster_fixture.hpp"
#include "grow_fixture.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <regex>
#include <thread>
#include <string>
#include <vector>

using namespace dnnc::test;
using json = nlohmann::json;

namespace {

// The document without its last node (and the link to it): the cluster a run starts on
// while that node waits, up but serving nothing, to join.
std::string without_last_node(const std::string& text, std::size_t nodes) {
    const auto last = "n" + std::to_string(nodes - 1);
    auto out = std::regex_replace(text, std::regex("<node id=\"" + last + "\"[^>]*/>\n"), "");
    return std::regex_replace(out, std::regex("<link from=\"n" + std::to_string(nodes - 2) + "\" to=\"" + last + "\"/>\n"), "");
}

// Each node's neurons, by id (dnnc status).
std::map<std::string, std::size_t> neurons_by_node(const std::vector<int>& ports) {
    std::map<std::string, std::size_t> out;
    const auto status = json_of(dnnc_binary() + " status --json" + lead_of(ports));
    for (const auto& n : status["nodes"])
        out[n["id"].get<std::string>()] = n["neurons"].get<std::size_t>();
    return out;
}

std::size_t total(const std::map<std::string, std::size_t>& by_node) {
    std::size_t sum = 0;
    for (const auto& [id, n] : by_node) sum += n;
    return sum;
}

std::string port_of(const std::vector<int>& ports, std::size_t k) { return "127.0.0.1:" + std::to_string(ports[k]); }

// The scaled microcircuit, every spike recorded, on `nodes` local nodes.
std::string recorded_microcircuit_on(std::size_t nodes, std::vector<int>& ports) {
    return on_cluster(with_in_network(slurp(source_path("examples/microcircuit/microcircuit_scaled.xml")), "    <record/>\n"), nodes, ports);
}

// The document with <run rebalance="auto"> acting after 600 ms when the slowest node's time
// per tick is above `threshold` x the mean, its moves one pause apart (rebalance-pause-share
// 1: the default keeps them 50 pauses apart).
std::string rebalanced_by_load(const std::string& text, const std::string& threshold = "1.15") {
    return std::regex_replace(text, std::regex("send=\"nonzero\""),
                              "send=\"nonzero\" rebalance=\"auto\" rebalance-after=\"600\" rebalance-pause-share=\"1\" "
                              "rebalance-threshold=\"" + threshold + "\"");
}

// The frozen run at `ports` recorded the same spikes as `placed_as_written` (its document
// placed as it says, never moved) does over as many ticks: both written to `dir`.
void check_spikes_of_run_without_moves(const scratch_dir& dir, const std::vector<int>& ports, const std::string& placed_as_written) {
    const auto dnnc = dnnc_binary();
    const auto moved = (dir.path / "moved.csv").string(), unmoved = (dir.path / "unmoved.csv").string();
    must(dnnc + " output --spikes -o " + moved + lead_of(ports));
    const auto ticks = json_of(dnnc + " status --json" + lead_of(ports))["tick"].get<std::int64_t>() + 1;
    must(dnnc + " submit --replace " + placed_as_written + to_of(ports));
    must(dnnc + " step " + std::to_string(ticks) + lead_of(ports));
    must(dnnc + " output --spikes -o " + unmoved + lead_of(ports));
    const auto spikes = slurp(unmoved);
    CHECK(std::count(spikes.begin(), spikes.end(), '\n') > 1000);
    CHECK(slurp(moved) == spikes);
}

// Process `pid` in a cgroup (v1 cpu controller) of its own with `fraction` of a core, for
// as long as this lives; `held` is false where that cannot be made (not root, no such
// controller).
struct cpu_quota {
    std::filesystem::path group;
    bool held = false;
    cpu_quota(int pid, double fraction) {
        const std::filesystem::path cpu = "/sys/fs/cgroup/cpu";
        if (geteuid() != 0 || !std::filesystem::exists(cpu / "cpu.cfs_quota_us")) return;
        group = cpu / ("dnnc-test-" + std::to_string(pid));
        std::error_code failed;
        std::filesystem::create_directory(group, failed);
        if (failed) return;
        held = write(group / "cpu.cfs_period_us", "100000") &&
               write(group / "cpu.cfs_quota_us", std::to_string(static_cast<int>(100000 * fraction))) &&
               write(group / "cgroup.procs", std::to_string(pid));
    }
    ~cpu_quota() {
        if (group.empty()) return;
        std::ifstream tasks(group / "cgroup.procs");
        for (std::string task; tasks >> task;) write("/sys/fs/cgroup/cpu/cgroup.procs", task);
        std::error_code ignored;
        std::filesystem::remove(group, ignored);
    }
    static bool write(const std::filesystem::path& file, const std::string& text) {
        std::ofstream out(file);
        out << text;
        out.flush();
        return static_cast<bool>(out);
    }
};

}  // namespace

TEST_CASE("a node joins a running 2-node cluster and another drains, and the spikes are those of the run without either") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    const auto out = [&](const std::string& name) { return (dir.path / name).string(); };
    std::vector<int> ports;
    const auto three = on_cluster(slurp(source_path("tests/data/growing_brunel.xml")), 3, ports);
    const auto up = dir.file("three.xml", three);
    const auto two = dir.file("two.xml", without_last_node(three, 3));
    local_cluster_guard c(up);  // n2 is up and serves nothing
    INFO(c.up.err);
    REQUIRE(c.up.exit_code == 0);
    // The join while the network runs (the nodes build their engines ahead, the new links
    // measured first), the drain while it is frozen; then the run without either, as long.
    must(dnnc + " submit " + two + to_of(ports));
    must(dnnc + " step 200" + lead_of(ports));
    must(dnnc + " start" + lead_of(ports));
    const auto joined = json_of(dnnc + " join --node n2@" + port_of(ports, 2) + " --link n0 --link n1 --json" + lead_of(ports));
    must(dnnc + " freeze" + lead_of(ports));
    CHECK(joined["joined"] == "n2");
    CHECK(joined["tick"] >= 200);
    for (const auto& n : joined["nodes"]) {
        INFO(n.dump());
        CHECK(n["prepared"] == true);
    }
    auto by_node = neurons_by_node(ports);
    REQUIRE(by_node.size() == 3);
    CHECK(total(by_node) == 550);
    CHECK(by_node["n2"] > 100);  // its share of 550
    // What moved is what n2 took (and little besides).
    CHECK(joined["moved"].get<std::size_t>() <= by_node["n2"] + 30);
    const auto next = json_of(dnnc + " status --json" + lead_of(ports))["tick"].get<std::int64_t>() + 1;
    must(dnnc + " step 200" + lead_of(ports));
    const auto drained = json_of(dnnc + " drain n1 --json" + lead_of(ports));
    CHECK(drained["drained"] == "n1");
    CHECK(drained["released"] == true);
    CHECK(drained["tick"] == next + 200);
    by_node = neurons_by_node(ports);
    CHECK(by_node.size() == 2);
    CHECK(by_node.count("n1") == 0);
    CHECK(total(by_node) == 550);
    // n1 is free: it serves no network, and the run goes on without it.
    const auto n1 = json_of(dnnc + " status --json --lead " + port_of(ports, 1));
    CHECK_FALSE(n1.contains("network"));
    must(dnnc + " step 200" + lead_of(ports));
    must(dnnc + " output --spikes -o " + out("changed.csv") + lead_of(ports));
    const auto ticks = json_of(dnnc + " status --json" + lead_of(ports))["tick"].get<std::int64_t>() + 1;

    must(dnnc + " submit --replace " + two + to_of(ports));
    must(dnnc + " step " + std::to_string(ticks) + lead_of(ports));
    must(dnnc + " output --spikes -o " + out("straight.csv") + lead_of(ports));
    const auto straight = slurp(out("straight.csv"));
    CHECK(std::count(straight.begin(), straight.end(), '\n') > 1000);
    CHECK(slurp(out("changed.csv")) == straight);
}

TEST_CASE("a re-balance moves nothing when nothing changed, a dry run shows, new capacities after a growth keep the spikes") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    const auto out = [&](const std::string& name) { return (dir.path / name).string(); };
    std::vector<int> ports;
    const auto config = dir.file("two.xml", on_cluster(slurp(source_path("tests/data/growing_brunel.xml")), 2, ports));
    local_cluster_guard c(config);
    INFO(c.up.err);
    REQUIRE(c.up.exit_code == 0);
    // The run with the growth and no re-balance.
    must(dnnc + " submit " + config + to_of(ports));
    must(dnnc + " step 200" + lead_of(ports));
    must(dnnc + " grow E 40" + lead_of(ports));
    must(dnnc + " step 300" + lead_of(ports));
    must(dnnc + " output --spikes -o " + out("straight.csv") + lead_of(ports));

    must(dnnc + " submit --replace " + config + to_of(ports));
    must(dnnc + " step 100" + lead_of(ports));
    const auto placed = neurons_by_node(ports);
    const auto nothing = run_command(dnnc + " rebalance" + lead_of(ports));
    INFO(nothing.err);
    CHECK(nothing.exit_code == 0);
    CHECK_THAT(nothing.out, Catch::StartsWith("nothing to move"));
    const auto dry = json_of(dnnc + " rebalance --dry-run --capacity n1=3 --json" + lead_of(ports));
    CHECK(dry["applied"] == false);
    CHECK(dry["moved"].get<std::size_t>() > 100);
    CHECK(neurons_by_node(ports) == placed);
    must(dnnc + " step 100" + lead_of(ports));
    must(dnnc + " grow E 40" + lead_of(ports));
    const auto applied = json_of(dnnc + " rebalance --capacity n1=3 --json" + lead_of(ports));
    CHECK(applied["applied"] == true);
    CHECK(applied["tick"] == 200);
    const auto by_node = neurons_by_node(ports);
    CHECK(total(by_node) == 590);
    CHECK(by_node.at("n1") > 2 * by_node.at("n0"));  // about 3 to 1
    must(dnnc + " step 300" + lead_of(ports));
    must(dnnc + " output --spikes -o " + out("rebalanced.csv") + lead_of(ports));
    CHECK(slurp(out("rebalanced.csv")) == slurp(out("straight.csv")));
}

TEST_CASE("a plastic network re-balanced and drained mid-run learns the same weights and spikes as without the moves") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    const auto out = [&](const std::string& name) { return (dir.path / name).string(); };
    std::vector<int> ports;
    const auto config = dir.file("net.xml", with_cluster("stdp/stdp.xml", {1, 1, 1}, ports));
    local_cluster_guard c(config);
    INFO(c.up.err);
    REQUIRE(c.up.exit_code == 0);
    // The moves first, on the running network (its nodes build their engines ahead), then the
    // same number of ticks without them.
    std::int64_t ticks = 0;
    for (const bool move : {true, false}) {
        INFO((move ? "re-balanced" : "straight"));
        must(dnnc + " submit --replace " + config + to_of(ports));
        if (move) {
            must(dnnc + " step 1000" + lead_of(ports));
            must(dnnc + " start" + lead_of(ports));
            // n0 and n1 trade neurons; n2 keeps its own, and its engine with them.
            const auto moved = json_of(dnnc + " rebalance --capacity n0=1.6 --capacity n1=0.4 --json" + lead_of(ports));
            CHECK(moved["applied"] == true);
            CHECK(moved["moved"].get<std::size_t>() > 100);
            std::map<std::string, json> node;
            for (const auto& n : moved["nodes"]) node[n["id"].get<std::string>()] = n;
            REQUIRE(node.size() == 3);
            CHECK(node["n2"]["before"] == node["n2"]["after"]);
            CHECK(node["n2"]["kept"] == true);
            CHECK(node["n0"]["kept"] == false);
            CHECK(node["n1"]["kept"] == false);
            // The nodes that gain or lose neurons built their engines while the run went on.
            CHECK(node["n0"]["prepared"] == true);
            CHECK(node["n1"]["prepared"] == true);
            CHECK(node["n2"]["prepared"] == false);
            // A drain of n2 while it runs: n0 and n1 take its neurons with engines built ahead,
            // over the link times measured at submit.
            const auto drained = json_of(dnnc + " drain n2 --json" + lead_of(ports));
            CHECK(drained["released"] == true);
            node.clear();
            for (const auto& n : drained["nodes"]) node[n["id"].get<std::string>()] = n;
            CHECK(node["n2"]["after"] == 0);
            CHECK(node["n0"]["prepared"] == true);
            CHECK(node["n1"]["prepared"] == true);
            must(dnnc + " freeze" + lead_of(ports));
            const auto status = json_of(dnnc + " status --json" + lead_of(ports));
            REQUIRE(status["moves"].size() == 2);
            CHECK(status["moves"][0]["nodes"] == moved["nodes"]);
            const auto text = run_command(dnnc + " status" + lead_of(ports)).out;
            CHECK_THAT(text, Catch::Contains("neurons, paused") && Catch::Contains("kept their engines: n2; engines built ahead: n0, n1\n"));
            must(dnnc + " step 1000" + lead_of(ports));
            ticks = json_of(dnnc + " status --json" + lead_of(ports))["tick"].get<std::int64_t>() + 1;
        } else {
            must(dnnc + " step " + std::to_string(ticks) + lead_of(ports));
        }
        const std::string name = move ? "moved" : "straight";
        must(dnnc + " output --spikes -o " + out(name + "-spikes.csv") + lead_of(ports));
        must(dnnc + " freeze" + lead_of(ports));
        must(dnnc + " weights -o " + out(name + "-weights.csv") + lead_of(ports));
    }
    CHECK(slurp(out("moved-spikes.csv")) == slurp(out("straight-spikes.csv")));
    const auto weights = sorted_csv(slurp(out("straight-weights.csv")));
    CHECK(std::count(weights.begin(), weights.end(), '\n') > 20000);
    CHECK(sorted_csv(slurp(out("moved-weights.csv"))) == weights);
}

namespace {
// The scaled microcircuit, every spike recorded, submitted to a local cluster of two nodes.
struct submitted_microcircuit {
    scratch_dir dir;
    std::vector<int> ports;
    std::string doc = dir.file("net.xml", recorded_microcircuit_on(2, ports));
    local_cluster_guard cluster{doc};
    submitted_microcircuit() {
        INFO(cluster.up.err);
        REQUIRE(cluster.up.exit_code == 0);
        must(dnnc_binary() + " submit " + doc + to_of(ports));
    }
    // `dnnc rebalance` to n0's new capacity, under way while this returns.
    std::future<command_result> rebalancing(const std::string& capacity) const {
        return std::async(std::launch::async, [this, capacity] {
            return run_command(dnnc_binary() + " rebalance --capacity n0=" + capacity + " --json" + lead_of(ports));
        });
    }
};
}  // namespace

TEST_CASE("a submit while a re-balance of the running network is under way waits for it, and the cluster steps on") {
    // Regression: a re-balance that builds its engines ahead takes a while, and a submit
    // --replace that came meanwhile interleaved its install with the move's; the run hung.
    const submitted_microcircuit net;
    const auto& ports = net.ports;
    const auto dnnc = dnnc_binary();
    must(dnnc + " start" + lead_of(ports));
    auto moving = net.rebalancing("3");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const auto submitted = run_command(dnnc + " submit --replace " + net.doc + to_of(ports));
    const auto moved = moving.get();
    INFO(moved.err);
    CHECK(moved.exit_code == 0);
    INFO(submitted.err);
    CHECK(submitted.exit_code == 0);
    must(dnnc + " freeze" + lead_of(ports));
    const auto from = json_of(dnnc + " status --json" + lead_of(ports))["tick"].get<std::int64_t>();
    must(dnnc + " step 50" + lead_of(ports));
    CHECK(json_of(dnnc + " status --json" + lead_of(ports))["tick"].get<std::int64_t>() == from + 50);
}

TEST_CASE("a freeze sent while a re-balance is under way waits for it, and the run stays frozen") {
    // Regression: a change resumes, in the run it installs, what the clock was doing when it
    // began; a freeze that came meanwhile froze the old run (or the new one before that
    // resume), and the move then set the network running again: frozen by the user, it ran
    // on, and its status could show the new run's tick 0. Freezes sent at several moments of
    // moves, each move to other capacities.
    const submitted_microcircuit net;
    const auto& ports = net.ports;
    const auto dnnc = dnnc_binary();
    const char* capacities[] = {"3", "0.5", "2", "1"};
    for (int k = 0; k < 4; ++k) {
        must(dnnc + " start" + lead_of(ports));
        auto moving = net.rebalancing(capacities[k]);
        std::this_thread::sleep_for(std::chrono::milliseconds(30 + 60 * k));
        const auto frozen = run_command(dnnc + " freeze --json" + lead_of(ports));
        const auto moved = moving.get();
        INFO("capacity " << capacities[k] << ": " << moved.out << moved.err << frozen.err);
        REQUIRE(moved.exit_code == 0);
        REQUIRE(frozen.exit_code == 0);
        CHECK(json::parse(moved.out)["applied"] == true);
        const auto at = json::parse(frozen.out)["tick"].get<std::int64_t>();
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        const auto status = json_of(dnnc + " status --json" + lead_of(ports));
        CHECK(status["state"] == "frozen");
        CHECK(status["tick"].get<std::int64_t>() == at);
        CHECK(at > 0);
    }
}

TEST_CASE("a join, drain or rebalance the lead refuses exits 2 with its reason, and the run steps on as it was") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    std::vector<int> ports, other_ports;
    const auto config = dir.file("three.xml", on_cluster(slurp(source_path("tests/data/growing_brunel.xml")), 3, ports));
    // A node of another cluster (another secret), up and serving nothing.
    const auto other = dir.file("other.xml", cluster_document({{"x"}}, {}, other_ports));
    local_cluster_guard c(config), elsewhere(other);
    INFO(c.up.err << elsewhere.up.err);
    REQUIRE(c.up.exit_code == 0);
    REQUIRE(elsewhere.up.exit_code == 0);
    // No network yet.
    const auto early = run_command(dnnc + " rebalance" + lead_of(ports));
    CHECK(early.exit_code == 2);
    CHECK_THAT(early.err, Catch::Contains("not the lead of a network"));
    must(dnnc + " submit " + config + to_of(ports));
    must(dnnc + " step 100" + lead_of(ports));
    const auto placed = neurons_by_node(ports);
    struct refusal {
        std::string command, says;
    };
    const std::string unused = "127.0.0.1:" + std::to_string(free_port());
    const std::vector<refusal> refusals{
             {"join --node x@" + port_of(other_ports, 0), "does not answer as a node of this cluster"},
             {"join --node z@" + unused, "does not answer as a node of this cluster"},
             {"join --node n1@" + unused, "the cluster has a node 'n1' already"},
             {"join --node z@" + unused + " --link nowhere", "which the cluster has no node of"},
             {"join --node z-no-address", "give the node as ID@HOST:PORT"},
             {"drain n0", "it is the lead"},
             {"drain n1", "node 'n2' would be cut off from the lead"},
             {"drain n7", "the cluster has no node 'n7'"},
             {"rebalance --capacity n7=2", "the cluster has no node 'n7'"},
             {"rebalance --capacity n1=0", "must be a finite number > 0"},
             {"rebalance --capacity n1=fast", "is not a number"},
             {"rebalance --migration-weight -1", "finite number >= 0"}};
    for (const auto& r : refusals) {
        INFO("dnnc " << r.command);
        const auto refused = run_command(dnnc + " " + r.command + lead_of(ports));
        INFO(refused.err);
        CHECK(refused.exit_code == 2);
        CHECK(refused.out.empty());
        CHECK_THAT(refused.err, Catch::Contains(r.says));
        must(dnnc + " step 10" + lead_of(ports));
    }
    CHECK(neurons_by_node(ports) == placed);
    CHECK(json_of(dnnc + " status --json" + lead_of(ports))["tick"] == static_cast<int>(100 + 10 * refusals.size() - 1));
    // The other cluster's node still serves nothing.
    CHECK_FALSE(json_of(dnnc + " status --json --lead " + port_of(other_ports, 0)).contains("network"));
}

TEST_CASE("with rebalance=auto the lead moves load off a node that carries too much by itself, and the spikes stay the same") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    // The scaled microcircuit on two equal nodes that the document calls unequal: n0 gets
    // nine tenths of the load, so it computes its ticks slower than n1, but by far less than
    // nine times: a tick of this network computes in tens of microseconds, its fixed costs
    // weigh as much, and on a loaded machine the time both nodes wait for a CPU as much
    // again. n0's time per tick is then some 1.1 to 1.2 x the mean, which the threshold
    // here catches and the default (1.15) may not.
    std::vector<int> ports;
    const auto text = std::regex_replace(recorded_microcircuit_on(2, ports), std::regex("<node id=\"n0\"([^>]*)capacity=\"[0-9.]+\""),
                                         "<node id=\"n0\"$1capacity=\"9\"");
    const auto blind = dir.file("blind.xml", text);
    const auto automatic = dir.file("auto.xml", rebalanced_by_load(text, "1.05"));
    local_cluster_guard c(automatic);
    INFO(c.up.err);
    REQUIRE(c.up.exit_code == 0);
    // Free-running until the lead has moved load by itself (however fast this machine is),
    // then frozen; the status showed each node's compute time per tick meanwhile.
    must(dnnc + " submit " + automatic + to_of(ports));
    const auto before = neurons_by_node(ports);
    REQUIRE(before.at("n0") > 5 * before.at("n1"));
    must(dnnc + " start" + lead_of(ports));
    json status;
    bool timed = false;
    for (int i = 0; i < 300 && !status.contains("moves"); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        status = json_of(dnnc + " status --json" + lead_of(ports));
        if (status["nodes"][0].contains("ms_per_tick") && status["nodes"][1].contains("cpu_wait_ms_per_tick")) timed = true;
    }
    must(dnnc + " freeze" + lead_of(ports));
    CHECK(timed);
    INFO(status.dump());
    REQUIRE(status.contains("moves"));
    // The first move took load off n0 (what later ones do depends on the machine's noise);
    // how much depends on how far above the mean n0 was, on this machine's load.
    const auto& first = status["moves"][0];
    CHECK(first["what"] == "rebalance by load");
    CHECK(first["moved"].get<std::size_t>() > 0);
    REQUIRE(first["nodes"].size() == 2);
    CHECK(first["nodes"][0]["id"] == "n0");
    CHECK(first["nodes"][0]["after"] < first["nodes"][0]["before"]);
    check_spikes_of_run_without_moves(dir, ports, blind);
}

TEST_CASE("with rebalance=auto the lead finds a node that a CPU quota holds back and drains it, and the spikes stay the same") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    // The scaled microcircuit on three equal nodes; n2 gets a tenth of a core. It computes its
    // ticks as fast as the others but waits for the CPU: its ticks stay slow whatever it
    // holds, so the lead drains it.
    std::vector<int> ports;
    const auto text = recorded_microcircuit_on(3, ports);
    const auto blind = dir.file("blind.xml", text);
    const auto automatic = dir.file("auto.xml", rebalanced_by_load(text));
    local_cluster_guard c(automatic);
    INFO(c.up.err);
    REQUIRE(c.up.exit_code == 0);
    cpu_quota slowed(pid_in(c.up.out, "n2"), 0.1);
    if (!slowed.held) {
        WARN("no CPU quota can be set here (root and cgroup v1's cpu controller are needed): not checked");
        return;
    }
    must(dnnc + " submit " + automatic + to_of(ports));
    must(dnnc + " start" + lead_of(ports));
    json status = json::object();
    const auto drained = [&] {
        for (const auto& m : status.value("moves", json::array()))
            if (m["what"] == "drain of 'n2' by load") return true;
        return false;
    };
    for (int i = 0; i < 900 && !drained(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        status = json_of(dnnc + " status --json" + lead_of(ports));
    }
    must(dnnc + " freeze" + lead_of(ports));
    INFO(status.dump());
    CHECK(drained());
    REQUIRE(status.contains("moves"));
    CHECK(status["moves"][0]["what"] == "rebalance by load");
    check_spikes_of_run_without_moves(dir, ports, blind);
}
