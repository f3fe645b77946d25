// Calls whose work grows with the network (installing a share, through the client's submit
// and the lead's configure) have no time limit, only a silence limit: on real local
// clusters, an install that takes longer than the limit goes through while the nodes answer
// heartbeats, and a node stopped in the middle of its install fails the submit soon after
// the limit, by name.
#include "cluster_fixture.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <csignal>
#include <future>
#include <thread>

using namespace dnnc::test;
using nlohmann::json;

namespace {

// Two nodes, a (the lead) and b, sharing a network whose synapses draw their weights and
// delays: building either share takes a few seconds on one core.
std::string slow_to_install(const scratch_dir& dir, std::vector<int>& ports) {
    ports = {free_port(), free_port()};
    return dir.file("big.xml", R"(<dnnc xmlns="urn:dnnc:1">
  <network name="big">
    <population id="p" size="20000" model="tanh"/>
    <projection from="p" to="p" kind="fixed-total-number" n="12000000" seed="7">
      <weight distribution="normal" mean="0.01" std="0.002"/>
      <delay distribution="normal" mean="2" std="1" min="0.5"/>
    </projection>
    <output id="y" neurons="p[0:2]"/>
  </network>
  <cluster lead="a">
    <node id="a" port=")" + std::to_string(ports[0]) + R"("/>
    <node id="b" port=")" + std::to_string(ports[1]) + R"("/>
    <link from="a" to="b"/>
  </cluster>
  <run probes="2"/>
</dnnc>
)");
}

// The log file `dnnc cluster up` printed for a node ("node ID up on ... (pid N, log FILE)").
std::string log_in(const std::string& up_output, const std::string& node) {
    const auto line = up_output.substr(up_output.find("node " + node + " up"));
    const auto from = line.find(", log ") + 6;
    return line.substr(from, line.find(')', from) - from);
}

}  // namespace

TEST_CASE("an install that takes longer than the silence limit goes through while the nodes answer") {
    scratch_dir dir;
    std::vector<int> ports;
    const auto config = slow_to_install(dir, ports);
    local_cluster_guard cluster(config, "--silence-limit 0.5");
    REQUIRE(cluster.up.exit_code == 0);
    // The client waits on the lead with the same half second of silence allowed.
    const auto submit =
        run_command(dnnc_binary() + " submit " + config + " --json --timeout 0.5 --to 127.0.0.1:" + std::to_string(ports[0]));
    INFO(submit.err);
    REQUIRE(submit.exit_code == 0);
    const auto summary = json::parse(submit.out);
    CHECK(summary["seconds"].get<double>() > 1.0);  // twice the limit at least: the limit was not on the work
    CHECK(summary["nodes"].size() == 2);
    CHECK(run_command(dnnc_binary() + " step 3 --lead 127.0.0.1:" + std::to_string(ports[0])).exit_code == 0);
}

TEST_CASE("a node stopped while it installs its share fails the submit after the silence limit, by name") {
    scratch_dir dir;
    std::vector<int> ports;
    const auto config = slow_to_install(dir, ports);
    local_cluster_guard cluster(config, "--silence-limit 1");
    REQUIRE(cluster.up.exit_code == 0);
    const int b = pid_in(cluster.up.out, "b");
    continued_at_exit resume{b};
    const auto lead_log = log_in(cluster.up.out, "a");
    auto submitted = std::async(std::launch::async, [&] {
        return run_command(dnnc_binary() + " submit " + config + " --to 127.0.0.1:" + std::to_string(ports[0]));
    });
    // The configs leave for the nodes once the lead has built them: stop b then.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (slurp(lead_log).find("configs built") == std::string::npos && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE(kill(b, SIGSTOP) == 0);
    const auto stopped = std::chrono::steady_clock::now();
    const auto r = submitted.get();
    const auto waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count();
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Catch::Contains("node 'b'") && Catch::Contains("silent for 1000 ms"));
    // The limit and the lead's own share, not a fixed minute.
    CHECK(waited < 30);
}
