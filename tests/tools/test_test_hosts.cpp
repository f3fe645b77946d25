// Clusters on test hosts (scripts/test_hosts.sh): each node in a network namespace of its
// own with its own address, on real (veth) links. A network run there gives the outputs of
// one local node; a link taken down for 2 s and brought back mid-run changes nothing in
// them; a link shaped to 10 Mbit/s changes nothing either; a host cut off for good is found
// dead, and recovery on the other two goes on to the outputs of a run without the failure.
#include "test_hosts_fixture.hpp"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <future>

using namespace dnnc::test;
using json = nlohmann::json;

namespace {
// A random recurrent network on the three test hosts (a chain of links), or on one local node.
std::string network_on(const std::string& cluster, const std::string& run = "<run probes=\"2\" heartbeat-timeout=\"15000\"/>") {
    return "<dnnc xmlns=\"urn:dnnc:1\"><network name=\"hosts\">"
           "<population id=\"p\" size=\"600\" model=\"tanh\"/>"
           "<projection from=\"p\" to=\"p\" kind=\"random\" p=\"0.05\" seed=\"5\"/>"
           "<input id=\"x\" neurons=\"p[0:20]\"/><output id=\"y\" neurons=\"p[0:30]\"/></network>" +
           cluster + run + "</dnnc>\n";
}

std::string three_hosts() {
    return "<cluster lead=\"h1\">" + test_hosts::nodes_xml(3) + "<link from=\"h1\" to=\"h2\"/><link from=\"h2\" to=\"h3\"/></cluster>";
}

// The outputs of `ticks` ticks of the network on one local node.
std::string on_one_node(const scratch_dir& dir, int ticks) {
    std::vector<int> ports{free_port()};
    const auto doc = dir.file("one.xml", network_on("<cluster lead=\"a\"><node id=\"a\" port=\"" + std::to_string(ports[0]) + "\"/></cluster>"));
    local_cluster_guard c(doc);
    REQUIRE(c.up.exit_code == 0);
    must(dnnc_binary() + " submit " + doc + to_of(ports));
    must(dnnc_binary() + " input " + dir.file("in.csv", "tick,target,value\n0,p[3],1\n0,p[7],-1\n") + lead_of(ports));
    must(dnnc_binary() + " step " + std::to_string(ticks) + lead_of(ports));
    must(dnnc_binary() + " output -o " + (dir.path / "one.csv").string() + lead_of(ports));
    return slurp((dir.path / "one.csv").string());
}
}  // namespace

TEST_CASE("a network on three test hosts gives the outputs of one local node, through an outage of a link and on a slow link") {
    if (!test_hosts_available()) return;
    scratch_dir dir;
    setenv("XDG_STATE_HOME", dir.path.c_str(), 1);
    const int ticks = 10000;
    const auto expected = on_one_node(dir, ticks);
    test_hosts hosts(dir, 3);
    const auto doc = dir.file("hosts.xml", network_on(three_hosts()));
    const std::string lead = " --lead " + test_hosts::endpoint(1);
    double seconds = 0;  // the last step's
    auto step_and_read = [&](const std::string& name, const std::function<void()>& meanwhile) {
        must(hosts.dnnc_on(1, "submit --replace " + doc + " --to " + test_hosts::endpoint(1)));
        must(hosts.dnnc_on(1, "input " + (dir.path / "in.csv").string() + lead));
        const auto started = std::chrono::steady_clock::now();
        auto stepping = std::async(std::launch::async, [&] { return run_command(hosts.dnnc_on(1, "step " + std::to_string(ticks) + lead)); });
        meanwhile();
        const auto stepped = stepping.get();
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        INFO(stepped.err);
        REQUIRE(stepped.exit_code == 0);
        must(hosts.dnnc_on(1, "output -o " + (dir.path / name).string() + lead));
        return slurp((dir.path / name).string());
    };
    CHECK(step_and_read("plain.csv", [] {}) == expected);
    // Host 3 cut off mid-run for 2 s: its packets wait in TCP and the run goes on.
    CHECK(step_and_read("outage.csv", [&] {
              std::this_thread::sleep_for(std::chrono::milliseconds(200));
              hosts.link(3, false);
              std::this_thread::sleep_for(std::chrono::seconds(2));
              hosts.link(3, true);
          }) == expected);
    CHECK(seconds > 2);  // the outage held the run up: it came mid-run
    hosts.shape(2, "10mbit");
    CHECK(step_and_read("slow.csv", [] {}) == expected);
}

TEST_CASE("a test host cut off from the others is found dead, and recovery on the two left equals a run without the failure") {
    if (!test_hosts_available()) return;
    scratch_dir dir;
    setenv("XDG_STATE_HOME", dir.path.c_str(), 1);
    test_hosts hosts(dir, 3);
    std::string cluster = three_hosts();
    cluster.replace(cluster.find("</cluster>"), 0, "<link from=\"h1\" to=\"h3\"/>");
    const auto doc = dir.file("hosts.xml", network_on(cluster, "<run probes=\"2\" heartbeat-timeout=\"400\" tick-period=\"1\"/>"));
    const auto inputs = dir.file("in.csv", "tick,target,value\n0,p[3],1\n0,p[7],-1\n");
    const std::string lead = " --lead " + test_hosts::endpoint(1);
    hosts.start_with_checkpoints(doc, inputs);
    hosts.link(3, false);  // for good: its node runs on, out of reach
    hosts.status_once_failed();
    const auto recovered = run_command(hosts.dnnc_on(1, "recover --json" + lead));
    INFO(recovered.err);
    REQUIRE(recovered.exit_code == 0);
    CHECK(json::parse(recovered.out)["removed"] == json::array({"h3"}));
    hosts.check_outputs_after_recovery(doc, inputs);
}
