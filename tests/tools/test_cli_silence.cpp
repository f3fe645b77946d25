// Calls whose work grows with the network (installing a share, through the client's submit
// and the lead's configure) have no time limit, only a silence limit: on real local
// clusters, an install that takes longer than the limit goes through while the nodes answer
// heartbeats (saying what they are doing), and a node stopped in the middle of its install
// fails the submit soon after the limit, by name.
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
// delays: building either share takes a few seconds on one core (a second or two on a fast
// one: twice the silence limit below needs this many).
std::string slow_to_install(const scratch_dir& dir, std::vector<int>& ports) {
    ports = {free_port(), free_port()};
    return dir.file("big.xml", R"(<dnnc xmlns="urn:dnnc:1">
  <network name="big">
    <population id="p" size="20000" model="tanh"/>
    <projection from="p" to="p" kind="fixed-total-number" n="48000000" seed="7">
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

// That network on a local cluster whose nodes allow `silence_limit` seconds of silence.
struct slow_cluster {
    explicit slow_cluster(const std::string& silence_limit)
        : config(slow_to_install(dir, ports)), cluster(config, "--silence-limit " + silence_limit) {
        REQUIRE(cluster.up.exit_code == 0);
    }
    std::string at(std::size_t v) const { return "127.0.0.1:" + std::to_string(ports[v]); }
    scratch_dir dir;
    std::vector<int> ports;
    std::string config;
    local_cluster_guard cluster;
};

// The log file `dnnc cluster up` printed for a node ("node ID up on ... (pid N, log FILE)").
std::string log_in(const std::string& up_output, const std::string& node) {
    const auto line = up_output.substr(up_output.find("node " + node + " up"));
    const auto from = line.find(", log ") + 6;
    return line.substr(from, line.find(')', from) - from);
}

}  // namespace

TEST_CASE("an install that takes longer than the silence limit goes through while the nodes answer") {
    slow_cluster c("0.5");
    // The client waits on the lead with the same half second of silence allowed.
    auto submitted = std::async(std::launch::async, [&] {
        return run_command(dnnc_binary() + " submit " + c.config + " --json --timeout 0.5 --to " + c.at(0));
    });
    // Meanwhile b says what keeps the lead waiting, in its heartbeats and its status.
    json work;
    while (work.is_null() && submitted.wait_for(std::chrono::milliseconds(20)) == std::future_status::timeout) {
        const auto s = run_command(dnnc_binary() + " status --json --lead " + c.at(1));
        if (s.exit_code == 0) work = json::parse(s.out).value("work", json());
    }
    CHECK_THAT(work.dump(), Catch::Contains("installing network 'big' on node 'b'"));
    const auto submit = submitted.get();
    INFO(submit.err);
    REQUIRE(submit.exit_code == 0);
    const auto summary = json::parse(submit.out);
    CHECK(summary["seconds"].get<double>() > 1.0);  // twice the limit at least: the limit was not on the work
    CHECK(summary["nodes"].size() == 2);
    CHECK(run_command(dnnc_binary() + " step 3 --lead " + c.at(0)).exit_code == 0);
}

TEST_CASE("a node stopped while it installs its share fails the submit after the silence limit, by name") {
    slow_cluster c("1");
    const int b = pid_in(c.cluster.up.out, "b");
    continued_at_exit resume{b};
    const auto lead_log = log_in(c.cluster.up.out, "a");
    auto submitted = std::async(std::launch::async, [&] {
        return run_command(dnnc_binary() + " submit " + c.config + " --to " + c.at(0));
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
