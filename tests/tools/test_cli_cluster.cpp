// Multi-process integration tests on loopback: dnnc cluster up/down, submit, status,
// latency probing with emulated delays, heartbeats, secrets, and failures that name the node.
#include "cluster_fixture.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <nlohmann/json.hpp>

#include <csignal>
#include <thread>

using namespace dnnc::test;
using nlohmann::json;

namespace {
std::string at(int port) { return "127.0.0.1:" + std::to_string(port); }

json status_of(int port, const std::string& extra = "") {
    const auto r = run_command(dnnc_binary() + " status --json --lead " + at(port) + " " + extra);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return json::parse(r.out);
}

}  // namespace

TEST_CASE("a local cluster comes up, takes a submitted network, reports status and goes down") {
    scratch_dir dir;
    std::vector<int> ports;
    const auto config = dir.file("net.xml", cluster_document({{"a", 2}, {"b"}, {"c"}},
                                                             {R"(<link from="a" to="b"/>)", R"(<link from="b" to="c"/>)"}, ports,
                                                             300, "  <run probes=\"4\"/>\n"));
    {
        local_cluster_guard cluster(config);
        INFO(cluster.up.err);
        REQUIRE(cluster.up.exit_code == 0);
        CHECK_THAT(cluster.up.out, Catch::Contains("node a up on " + at(ports[0])));

        // Submitting to b makes b the lead.
        const auto submit = run_command(dnnc_binary() + " submit " + config + " --json --to " + at(ports[1]));
        INFO(submit.err);
        REQUIRE(submit.exit_code == 0);
        const auto summary = json::parse(submit.out);
        CHECK(summary["lead"] == "b");
        REQUIRE(summary["nodes"].size() == 3);
        std::size_t neurons = 0;
        for (const auto& n : summary["nodes"]) {
            neurons += n["neurons"].get<std::size_t>();
            CHECK(n["hash"].get<std::string>().size() == 64);
        }
        CHECK(neurons == 300);

        const auto s = status_of(ports[1]);
        CHECK(s["role"] == "lead");
        CHECK(s["state"] == "idle");
        CHECK(s["network"] == "it");
        REQUIRE(s["nodes"].size() == 3);
        for (const auto& n : s["nodes"]) CHECK(n["alive"] == true);
        CHECK(s["links"].size() == 2);
        CHECK(s["dead"].empty());
        CHECK(s["wait_windows"]["neurons_with_remote_inputs"].get<int>() > 0);
        // Another node knows its place.
        const auto worker = status_of(ports[0]);
        CHECK(worker["role"] == "worker");
        CHECK(worker["lead"] == "b");
        CHECK(worker["config_hash"] == summary["nodes"][0]["hash"]);
        // Its own runner's progress, not a made-up "idle, tick 0".
        CHECK(worker["state"] == "paused");
        CHECK(worker["tick"] == -1);
        REQUIRE(run_command(dnnc_binary() + " step 7 --lead " + at(ports[1])).exit_code == 0);
        CHECK(status_of(ports[0])["tick"] == 6);

        // A second submit is refused unless it replaces.
        const auto again = run_command(dnnc_binary() + " submit " + config + " --to " + at(ports[1]));
        CHECK(again.exit_code == 1);
        CHECK_THAT(again.err, Catch::Contains("already serves network 'it'") && Catch::Contains("--replace"));
        const auto replaced = run_command(dnnc_binary() + " submit " + config + " --replace --to " + at(ports[1]));
        CHECK(replaced.exit_code == 0);

        const auto text = run_command(dnnc_binary() + " status --links --lead " + at(ports[1]));
        CHECK(text.exit_code == 0);
        CHECK_THAT(text.out, Catch::Contains("lead") && Catch::Contains("latency ms"));
    }
    // Down: the ports are free again.
    const auto r = run_command(dnnc_binary() + " status --timeout 1 --lead " + at(ports[0]));
    CHECK(r.exit_code == 1);
}

TEST_CASE("measured link latencies track emulated delays") {
    // A link that emulates 1 ms measures, beside its delay, what holding back costs on this
    // machine (a loaded one wakes the holding thread late, by a millisecond or more each
    // way): the other links are compared with it. All at the lead: a relayed probe also
    // pays for waking the relay, which a loaded machine makes late too (the subtraction for
    // links beyond the first is checked in tests/plan).
    scratch_dir dir;
    std::vector<int> ports;
    const auto config = dir.file("delays.xml", cluster_document({{"a"}, {"b"}, {"c"}, {"d"}},
                                                                {R"(<link from="a" to="b" emulate-delay="1"/>)",
                                                                 R"(<link from="a" to="c" emulate-delay="4"/>)",
                                                                 R"(<link from="a" to="d" emulate-delay="8"/>)"},
                                                                ports, 100, "  <run probes=\"16\"/>\n"));
    local_cluster_guard cluster(config);
    REQUIRE(cluster.up.exit_code == 0);
    const auto submit = run_command(dnnc_binary() + " submit " + config + " --to " + at(ports[0]));
    INFO(submit.err);
    REQUIRE(submit.exit_code == 0);
    const auto s = status_of(ports[0]);
    REQUIRE(s["links"].size() == 3);
    std::map<std::string, double> measured;
    for (const auto& l : s["links"]) measured[l["to"].get<std::string>()] = l["latency_ms"].get<double>();
    for (const auto& [to, injected] : {std::pair<std::string, double>{"c", 4.0}, {"d", 8.0}}) {
        const double beyond = measured[to] - measured["b"];  // injected - 1 ms
        INFO("link to " << to << " measured " << measured[to] << " ms, the 1 ms link " << measured["b"] << " ms, injected " << injected);
        CHECK(std::abs(beyond - (injected - 1)) <= 0.2 * (injected - 1) + 0.5);
    }
}

TEST_CASE("the lead reports a node that stopped answering as dead") {
    scratch_dir dir;
    std::vector<int> ports;
    const auto config =
        dir.file("hb.xml", two_linked_nodes(ports, 50, "  <run heartbeat-timeout=\"400\" probes=\"2\"/>\n"));
    local_cluster_guard cluster(config);
    REQUIRE(cluster.up.exit_code == 0);
    REQUIRE(run_command(dnnc_binary() + " submit " + config + " --to " + at(ports[0])).exit_code == 0);
    CHECK(status_of(ports[0])["dead"].empty());
    // Stop b behind the lead's back.
    REQUIRE(kill(pid_in(cluster.up.out, "b"), SIGKILL) == 0);
    json s;
    for (int i = 0; i < 40; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        s = status_of(ports[0]);
        if (!s["dead"].empty()) break;
    }
    CHECK(s["dead"] == json::array({"b"}));
    CHECK(s["nodes"][1]["alive"] == false);
    const auto text = run_command(dnnc_binary() + " status --lead " + at(ports[0]));
    CHECK_THAT(text.out, Catch::Contains("DEAD"));
}

TEST_CASE("a submit that cannot reach a node fails and names it") {
    scratch_dir dir;
    std::vector<int> ports;
    const auto config = dir.file("dead.xml", cluster_document({{"a"}, {"b"}, {"c"}},
                                                              {R"(<link from="a" to="b"/>)", R"(<link from="a" to="c"/>)"},
                                                              ports, 60, "  <run probes=\"2\"/>\n"));
    local_cluster_guard cluster(config);
    REQUIRE(cluster.up.exit_code == 0);
    REQUIRE(kill(pid_in(cluster.up.out, "c"), SIGKILL) == 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto r = run_command(dnnc_binary() + " submit " + config + " --timeout 20 --to " + at(ports[0]));
    // The cluster as written cannot be run: a config error (exit 2), as for a node no path reaches.
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("cluster: node 'c' (") && Catch::Contains(at(ports[2])));
}

TEST_CASE("with a cluster secret, frames without the secret are refused") {
    scratch_dir dir;
    std::vector<int> ports;
    const auto config = dir.file("s.xml", two_linked_nodes(ports, 40, "  <run probes=\"2\"/>\n"));
    const auto secret = dir.file("secret", "correct horse battery staple\n");
    const auto wrong = dir.file("wrong", "another secret\n");
    local_cluster_guard cluster(config, "--secret-file " + secret);
    INFO(cluster.up.err);
    REQUIRE(cluster.up.exit_code == 0);
    const auto submit = run_command(dnnc_binary() + " submit " + config + " --secret-file " + secret + " --to " + at(ports[0]));
    INFO(submit.err);
    CHECK(submit.exit_code == 0);
    CHECK(status_of(ports[0], "--secret-file " + secret)["nodes"].size() == 2);
    // Without --secret-file a command finds the secret this user's local cluster was started
    // with; a client that has no record of it (another user's records) has none.
    CHECK(status_of(ports[0])["nodes"].size() == 2);
    const auto none =
        run_command("XDG_RUNTIME_DIR=" + dir.path.string() + " " + dnnc_binary() + " status --timeout 2 --lead " + at(ports[0]));
    CHECK(none.exit_code == 1);
    CHECK_THAT(none.err, Catch::Contains("frame is not authenticated and this cluster requires it"));
    // The node says why it refuses, rather than only closing the connection.
    const auto forged = run_command(dnnc_binary() + " status --timeout 2 --secret-file " + wrong + " --lead " + at(ports[0]));
    CHECK(forged.exit_code == 1);
    CHECK_THAT(forged.err, Catch::Contains("the node refused the frame: frame authentication failed"));
    // The nodes are still fine afterwards.
    CHECK(status_of(ports[0], "--secret-file " + secret)["dead"].empty());
}

TEST_CASE("a document the receiving node is not part of is refused") {
    scratch_dir dir;
    std::vector<int> ports, other_ports;
    const auto config = dir.file("one.xml", cluster_document({{"a"}}, {}, ports, 10));
    const auto other = dir.file("two.xml", cluster_document({{"x"}}, {}, other_ports, 10));
    local_cluster_guard cluster(config);
    REQUIRE(cluster.up.exit_code == 0);
    const auto r = run_command(dnnc_binary() + " submit " + other + " --to " + at(ports[0]));
    CHECK(r.exit_code == 2);  // the document is at fault
    CHECK_THAT(r.err, Catch::Contains("not one of the cluster's nodes"));
}

TEST_CASE("dnnc-node picks a port, prints it, and stops on SIGTERM") {
    const std::string node = std::string(DNNC_BINARY_DIR) + "/tools/dnnc-node";
    scratch_dir dir;
    const auto out = (dir.path / "node.out").string();
    const auto r = run_command("( " + node + " --port 0 > " + out +
                               " 2>&1 & pid=$!; sleep 0.5; kill -TERM $pid; wait $pid; echo exit=$? ) ");
    CHECK_THAT(r.out, Catch::Contains("exit=0"));
    std::ifstream in(out);
    std::string first;
    std::getline(in, first);
    CHECK_THAT(first, Catch::StartsWith("dnnc-node listening on 127.0.0.1:"));
    CHECK(run_command(node + " --port 99999").exit_code == 2);
    CHECK(run_command(node + " --log-level loud").exit_code == 2);
    CHECK(run_command(node + " --emulate-delay b").exit_code == 2);
    CHECK(run_command(node + " --secret-file /nonexistent").exit_code == 2);
    CHECK(run_command(node + " --output-memory lots").exit_code == 2);
    for (const char* owner : {"x", "0", "-3", "99999999999"}) {
        const auto bad = run_command(node + " --owner " + owner);
        INFO(owner);
        CHECK(bad.exit_code == 2);
        CHECK_THAT(bad.err, Catch::Contains("--owner"));
    }
}

TEST_CASE("cluster down without a record and status of a silent address fail cleanly") {
    scratch_dir dir;
    std::vector<int> ports;
    const auto config = dir.file("never.xml", cluster_document({{"a"}}, {}, ports, 10));
    const auto down = run_command(dnnc_binary() + " cluster down " + config);
    CHECK(down.exit_code == 1);
    CHECK_THAT(down.err, Catch::Contains("no local cluster is recorded"));
    CHECK(run_command(dnnc_binary() + " status --timeout 1 --lead " + at(ports[0])).exit_code == 1);
    CHECK(run_command(dnnc_binary() + " status --lead nonsense").exit_code == 2);
}

TEST_CASE("cluster up of a cluster that is up is refused and changes nothing: its secret, its logs, its nodes") {
    // It used to write a new secret over the running cluster's, so that no client could talk
    // to it any more, and to start a node over the old one's log.
    scratch_dir dir;
    std::vector<int> ports;
    const auto config = dir.file("net.xml", cluster_document({{"a"}, {"b"}}, {R"(<link from="a" to="b"/>)"}, ports, 10));
    local_cluster_guard cluster(config);
    INFO(cluster.up.err);
    REQUIRE(cluster.up.exit_code == 0);
    const auto secret_line = cluster.up.out.substr(cluster.up.out.find("cluster secret: ") + 16);
    const auto secret_file = secret_line.substr(0, secret_line.find('\n'));
    const auto log_line = cluster.up.out.substr(cluster.up.out.find("log ") + 4);
    const auto log_file = log_line.substr(0, log_line.find(')'));
    const auto secret = slurp(secret_file), log = slurp(log_file);
    REQUIRE(!secret.empty());
    const auto again = run_command(dnnc_binary() + " cluster up " + config);
    CHECK(again.exit_code == 2);
    CHECK_THAT(again.err, Catch::Contains("is already up (a on " + at(ports[0]) + ", b on " + at(ports[1]) + ")"));
    CHECK_THAT(again.err, Catch::Contains("dnnc cluster down"));
    CHECK(slurp(secret_file) == secret);
    CHECK(slurp(log_file) == log);
    status_of(ports[0]);  // its clients still get through, with the recorded secret
    // Another document whose node would take a port of the running cluster: refused before
    // anything is written.
    const auto other = dir.file("other.xml", "<dnnc xmlns=\"urn:dnnc:1\"><cluster lead=\"x\"><node id=\"x\" host=\"127.0.0.1\" port=\"" +
                                                 std::to_string(ports[1]) + "\"/></cluster></dnnc>");
    const auto taken = run_command(dnnc_binary() + " cluster up " + other);
    CHECK(taken.exit_code == 1);
    CHECK_THAT(taken.err, Catch::Contains("node 'x': something already answers on " + at(ports[1])));
    CHECK(run_command(dnnc_binary() + " cluster down " + other).exit_code == 1);  // nothing was recorded
    status_of(ports[0]);
}

TEST_CASE("a network whose share does not fit a node's memory is refused before anything changes") {
    scratch_dir dir;
    std::vector<int> ports;
    const auto small = dir.file("small.xml", two_linked_nodes(ports, 200, "  <run probes=\"2\"/>\n"));
    local_cluster_guard cluster(small, "--memory-limit 64M");
    INFO(cluster.up.err);
    REQUIRE(cluster.up.exit_code == 0);
    REQUIRE(run_command(dnnc_binary() + " submit " + small + " --to " + at(ports[0])).exit_code == 0);
    REQUIRE(run_command(dnnc_binary() + " step 3 --lead " + at(ports[0])).exit_code == 0);
    const std::vector<json> before{status_of(ports[0]), status_of(ports[1])};
    CHECK(before[1]["memory"]["limit"] == 64 << 20);
    CHECK(before[1]["memory"]["network"].get<std::uint64_t>() > 0);

    // 20,000 neurons at p = 0.1: 40M synapses, about 180 MB a node at 9 bytes a synapse.
    std::string big = slurp(small);
    big.replace(big.find("size=\"200\""), 10, "size=\"20000\"");
    big.replace(big.find("p=\"0.05\""), 8, "p=\"0.1\"");
    const auto huge = dir.file("huge.xml", big);
    const auto refused = run_command(dnnc_binary() + " submit " + huge + " --replace --to " + at(ports[0]));
    CHECK(refused.exit_code == 2);  // the document is at fault, and the numbers say why
    CHECK_THAT(refused.err, Catch::Contains("does not fit in memory") && Catch::Contains("its limit is 64 MiB") &&
                                Catch::Contains("Nothing was changed"));
    // Both nodes still run the network they had, at the tick they were at.
    for (std::size_t k = 0; k < ports.size(); ++k) {
        const auto s = status_of(ports[k]);
        CHECK(s["network"] == "it");
        CHECK(s["config_hash"] == before[k]["config_hash"]);
        CHECK(s["neurons"] == before[k]["neurons"]);
    }
    CHECK(status_of(ports[0])["tick"] == 2);
    const auto step = run_command(dnnc_binary() + " step 2 --lead " + at(ports[0]));
    INFO(step.err);
    CHECK(step.exit_code == 0);
    CHECK(status_of(ports[0])["tick"] == 4);

    const auto bad = run_command(dnnc_binary() + " cluster up " + small + " --memory-limit lots");
    CHECK(bad.exit_code == 2);
    CHECK_THAT(bad.err, Catch::Contains("'lots' is not a size"));
}

TEST_CASE("a worker restarted on its port takes a replaced network and the run goes on") {
    scratch_dir dir;
    std::vector<int> ports;
    const auto config = dir.file("r.xml", two_linked_nodes(ports, 100, "  <run probes=\"2\"/>\n"));
    local_cluster_guard cluster(config);
    REQUIRE(cluster.up.exit_code == 0);
    REQUIRE(run_command(dnnc_binary() + " submit " + config + " --to " + at(ports[0])).exit_code == 0);
    REQUIRE(run_command(dnnc_binary() + " step 5 --lead " + at(ports[0])).exit_code == 0);
    // b dies and a new process takes its port; the lead's node still holds links to the old one.
    REQUIRE(kill(pid_in(cluster.up.out, "b"), SIGKILL) == 0);
    const auto log = (dir.path / "b2.log").string();
    const auto secret = cluster.up.out.substr(cluster.up.out.find("cluster secret: ") + 16);
    const auto started = run_command(std::string(DNNC_BINARY_DIR) + "/tools/dnnc-node --port " + std::to_string(ports[1]) +
                                     " --secret-file " + secret.substr(0, secret.find('\n')) + " > " + log + " 2>&1 & echo $!");
    const int restarted = std::stoi(started.out);
    for (int i = 0; i < 100 && slurp(log).find("listening") == std::string::npos; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto replaced = run_command(dnnc_binary() + " submit --replace " + config + " --to " + at(ports[0]));
    INFO(replaced.err);
    CHECK(replaced.exit_code == 0);
    // Bounded: before the fix this step never returned.
    const auto step = run_command("timeout 20 " + dnnc_binary() + " step 50 --lead " + at(ports[0]));
    INFO(step.err);
    CHECK(step.exit_code == 0);
    CHECK(status_of(ports[0])["tick"] == 49);
    kill(restarted, SIGKILL);
}

TEST_CASE("a document larger than a frame is refused at submit with its size, before any connection") {
    scratch_dir dir;
    const auto file = (dir.path / "huge.xml").string();
    {
        std::ofstream out(file);
        const int n = 1100;  // 1.21 million explicit synapses: about 75 MiB when sent
        out << "<dnnc xmlns=\"urn:dnnc:1\">\n  <network name=\"huge\">\n    <population id=\"p\" size=\"" << n
            << "\" model=\"tanh\"/>\n";
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j)
                out << "    <synapse from=\"p[" << i << "]\" to=\"p[" << j << "]\" weight=\"0.000123456789\"/>\n";
        out << "  </network>\n  <cluster lead=\"a\"><node id=\"a\" port=\"1\"/></cluster>\n</dnnc>\n";
    }
    const auto r = run_command(dnnc_binary() + " submit " + file + " --to 127.0.0.1:1");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("the submit request is 75 MiB, more than the 64 MiB a frame carries"));
}
