// Nodes the lead cannot reach, served through a sub-lead (node_server/relays.hpp), on test
// hosts (scripts/test_hosts.sh) where the lead's host and host 3 have no route to each other:
// hosts 2 and 4 reach both. The lead serves host 3 through host 2, its first link; submit,
// run, snapshot and restore give the outputs of one local node; with host 2's node killed,
// recovery reaches host 3 through host 4 and goes on to the outputs of a run without the
// failure. A chain of hosts that each reach only their neighbours is served through sub-leads
// of sub-leads. A standby that takes over a lead's run serves the host it has no route to
// through a sub-lead too. A host that no path reaches fails the submit, named with the nodes
// tried.
#include "test_hosts_fixture.hpp"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

using namespace dnnc::test;
using json = nlohmann::json;

namespace {

// A random recurrent network on four test hosts, h3 linked to h2 and h4 only.
std::string network_on(const std::string& run) {
    return "<dnnc xmlns=\"urn:dnnc:1\"><network name=\"hosts\">"
           "<population id=\"p\" size=\"800\" model=\"tanh\"/>"
           "<projection from=\"p\" to=\"p\" kind=\"random\" p=\"0.05\" seed=\"5\"/>"
           "<input id=\"x\" neurons=\"p[0:20]\"/><output id=\"y\" neurons=\"p[0:30]\"/></network>"
           "<cluster lead=\"h1\">" +
           test_hosts::nodes_xml(4) +
           "<link from=\"h1\" to=\"h2\"/><link from=\"h1\" to=\"h4\"/><link from=\"h2\" to=\"h3\"/>"
           "<link from=\"h3\" to=\"h4\"/></cluster>" +
           run + "</dnnc>\n";
}

// Four populations in a chain (p0 -> p1 -> p2 -> p3, one to one, each recurrent) on four
// test hosts joined by `links`: placed along a chain of links, every neural edge runs along
// one, so no two hosts without a link exchange signals.
std::string chain_on(const std::string& links, const std::string& run) {
    std::string network = "<network name=\"chain\">";
    for (int k = 0; k < 4; ++k) {
        const auto p = "p" + std::to_string(k);
        network += "<population id=\"" + p + "\" size=\"100\" model=\"tanh\"/>"
                   "<projection from=\"" + p + "\" to=\"" + p + "\" kind=\"random\" p=\"0.1\" seed=\"" + std::to_string(5 + k) + "\"/>";
        if (k > 0)
            network += "<projection from=\"p" + std::to_string(k - 1) + "\" to=\"" + p + "\" kind=\"one-to-one\" weight=\"0.5\"/>";
    }
    network += "<input id=\"x\" neurons=\"p0[0:10]\"/><output id=\"y\" neurons=\"p3[0:20]\"/></network>";
    return "<dnnc xmlns=\"urn:dnnc:1\">" + network + "<cluster lead=\"h1\">" + test_hosts::nodes_xml(4) + links + "</cluster>" + run +
           "</dnnc>\n";
}

// Four test hosts, h1 and h3 without routes to each other, in a scratch folder that is also
// the client's state folder.
struct split_hosts {
    scratch_dir dir;
    int state_home = setenv("XDG_STATE_HOME", dir.path.c_str(), 1);
    test_hosts hosts{dir, 4};
    split_hosts() {
        hosts.only(1, {2, 4});
        hosts.only(3, {2, 4});
    }
};

// The rows of an output CSV from tick `from` on (its first column is the tick).
std::string rows_from(const std::string& csv, long from) {
    std::istringstream in(csv);
    std::string line, kept;
    std::getline(in, line);
    kept = line + "\n";
    while (std::getline(in, line))
        if (std::stol(line.substr(0, line.find(','))) >= from) kept += line + "\n";
    return kept;
}

const json& node_in(const json& status, const std::string& id) {
    for (const auto& n : status["nodes"])
        if (n["id"] == id) return n;
    FAIL("no node " << id << " in " << status.dump());
    throw;
}

// `doc` submitted to host 1's node, which leads: its status then.
json submitted_on_host_1(const test_hosts& hosts, const std::string& doc) {
    const auto submitted = run_command(hosts.dnnc_on(1, "submit " + doc + " --to " + test_hosts::endpoint(1)));
    INFO(submitted.err);
    REQUIRE(submitted.exit_code == 0);
    return json::parse(run_command(hosts.dnnc_on(1, "status --json --lead " + test_hosts::endpoint(1))).out);
}

}  // namespace

TEST_CASE("a host only a sub-lead reaches is served through it: its run, snapshot and restore give one local node's outputs") {
    if (!test_hosts_available()) return;
    split_hosts split;
    const auto& dir = split.dir;
    auto& hosts = split.hosts;
    REQUIRE(run_command(hosts.on(1) + "ip route get " + test_hosts::address(3)).exit_code != 0);  // no route
    REQUIRE(run_command(hosts.on(1) + "ip route get " + test_hosts::address(2)).exit_code == 0);
    const auto doc = dir.file("hosts.xml", network_on("<run probes=\"2\" heartbeat-timeout=\"15000\"/>"));
    const auto inputs = dir.file("in.csv", "tick,target,value\n0,p[3],1\n0,p[7],-1\n");
    const std::string lead = " --lead " + test_hosts::endpoint(1);
    const auto status = submitted_on_host_1(hosts, doc);
    CHECK(node_in(status, "h3")["via"] == "h2");
    CHECK(node_in(status, "h3")["neurons"].get<long>() > 0);
    CHECK(node_in(status, "h2")["roles"].dump().find("sub-lead") != std::string::npos);
    must(hosts.dnnc_on(1, "input " + inputs + lead));
    must(hosts.dnnc_on(1, "step 300" + lead));
    must(hosts.dnnc_on(1, "snapshot -o " + (dir.path / "k.dnncs").string() + lead));
    must(hosts.dnnc_on(1, "step 300" + lead));
    must(hosts.dnnc_on(1, "output -o " + (dir.path / "out.csv").string() + lead));
    const auto straight = (dir.path / "straight.csv").string();
    must(dnnc_binary() + " run " + doc + " --nodes 1 --ticks 600 --input " + inputs + " --output " + straight);
    CHECK(slurp((dir.path / "out.csv").string()) == slurp(straight));

    const auto restored = run_command(hosts.dnnc_on(1, "restore " + (dir.path / "k.dnncs").string() + " --cluster " + doc +
                                                           " --replace --to " + test_hosts::endpoint(1)));
    INFO(restored.err);
    REQUIRE(restored.exit_code == 0);
    must(hosts.dnnc_on(1, "step 300" + lead));
    must(hosts.dnnc_on(1, "output -o " + (dir.path / "restored.csv").string() + lead));
    CHECK(rows_from(slurp((dir.path / "restored.csv").string()), 300) == rows_from(slurp(straight), 300));
}

TEST_CASE("a chain of hosts that reach only their neighbours: a sub-lead served through a sub-lead, and one local node's outputs") {
    if (!test_hosts_available()) return;
    scratch_dir dir;
    test_hosts hosts{dir, 4};
    hosts.only(1, {2});
    hosts.only(2, {1, 3});
    hosts.only(3, {2, 4});
    hosts.only(4, {3});
    REQUIRE(run_command(hosts.on(1) + "ip route get " + test_hosts::address(4)).exit_code != 0);
    REQUIRE(run_command(hosts.on(2) + "ip route get " + test_hosts::address(4)).exit_code != 0);
    const auto doc = dir.file("chain.xml", chain_on("<link from=\"h1\" to=\"h2\"/><link from=\"h2\" to=\"h3\"/><link from=\"h3\" to=\"h4\"/>",
                                                    "<run probes=\"2\" heartbeat-timeout=\"15000\"/>"));
    const auto inputs = dir.file("in.csv", "tick,target,value\n0,p0[3],1\n5,p0[7],-1\n");
    const std::string lead = " --lead " + test_hosts::endpoint(1);
    const auto status = submitted_on_host_1(hosts, doc);
    CHECK(node_in(status, "h3")["via"] == "h2");
    CHECK(node_in(status, "h4")["via"] == "h3");
    CHECK(node_in(status, "h4")["neurons"].get<long>() > 0);
    must(hosts.dnnc_on(1, "input " + inputs + lead));
    must(hosts.dnnc_on(1, "step 200" + lead));
    must(hosts.dnnc_on(1, "output -o " + (dir.path / "out.csv").string() + lead));
    const auto straight = (dir.path / "straight.csv").string();
    must(dnnc_binary() + " run " + doc + " --nodes 1 --ticks 200 --input " + inputs + " --output " + straight);
    CHECK(slurp((dir.path / "out.csv").string()) == slurp(straight));
}

TEST_CASE("kill -9 the lead: its standby, which has no route to one host, serves it through a sub-lead and goes on to the outputs of a run without the failure") {
    if (!test_hosts_available()) return;
    scratch_dir dir;
    setenv("XDG_STATE_HOME", dir.path.c_str(), 1);
    test_hosts hosts{dir, 4};
    hosts.only(2, {1, 3});  // h2 and h4 have no route to each other
    hosts.only(4, {1, 3});
    // The ring h1 - h2 - h3 - h4 - h1: the lead h1 reaches every host; its standby h2 (its
    // first child) reaches h4 only through h1 or h3.
    const auto doc = dir.file("ring.xml", chain_on("<link from=\"h1\" to=\"h2\"/><link from=\"h2\" to=\"h3\"/><link from=\"h3\" to=\"h4\"/>"
                                                   "<link from=\"h4\" to=\"h1\"/>",
                                                   "<run probes=\"2\" heartbeat-timeout=\"400\" checkpoint-every=\"50\" tick-period=\"1\"/>"));
    const auto inputs = dir.file("in.csv", "tick,target,value\n0,p0[3],1\n5,p0[7],-1\n");
    must(hosts.dnnc_on(1, "submit " + doc + " --to " + test_hosts::endpoint(1)));
    must(hosts.dnnc_on(1, "input " + inputs + " --lead " + test_hosts::endpoint(1)));
    must(hosts.dnnc_on(1, "start --lead " + test_hosts::endpoint(1)));
    const std::string standby = " --lead " + test_hosts::endpoint(2);
    auto status_of_h2 = [&] { return json::parse(run_command(hosts.dnnc_on(2, "status --json" + standby)).out); };
    auto wait_for_h2 = [&](const std::function<bool(const json&)>& done) {
        json s;
        for (int i = 0; i < 600; ++i) {
            s = status_of_h2();
            if (done(s)) return s;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        FAIL("timed out; last status of h2: " << s.dump());
        return s;
    };
    wait_for_h2([](const json& s) { return s.contains("replica") && s["replica"]["checkpoint_tick"] >= 100; });
    hosts.kill(1);
    const auto leading = wait_for_h2([](const json& s) { return s.value("role", "") == "lead" && s.value("state", "") == "running"; });
    CHECK(node_in(leading, "h4")["via"] == "h3");
    CHECK(node_in(leading, "h4")["neurons"].get<long>() > 0);
    const auto before = leading["tick"].get<int>();
    wait_for_h2([&](const json& s) { return s["tick"].get<int>() > before + 20; });
    must(hosts.dnnc_on(2, "freeze" + standby));
    must(hosts.dnnc_on(2, "output -o " + (dir.path / "out.csv").string() + standby));
    const auto rows = slurp((dir.path / "out.csv").string());
    const auto ticks = std::count(rows.begin(), rows.end(), '\n') - 1;
    REQUIRE(ticks > 100);
    const auto straight = (dir.path / "straight.csv").string();
    must(dnnc_binary() + " run " + doc + " --nodes 1 --ticks " + std::to_string(ticks) + " --input " + inputs + " --output " + straight);
    CHECK(rows == slurp(straight));
}

TEST_CASE("a killed sub-lead: recovery serves its node through another and equals a run without the failure") {
    if (!test_hosts_available()) return;
    split_hosts split;
    const auto& dir = split.dir;
    auto& hosts = split.hosts;
    const auto doc = dir.file("hosts.xml", network_on("<run probes=\"2\" heartbeat-timeout=\"400\" tick-period=\"1\"/>"));
    const auto inputs = dir.file("in.csv", "tick,target,value\n0,p[3],1\n0,p[7],-1\n");
    const std::string lead = " --lead " + test_hosts::endpoint(1);
    hosts.start_with_checkpoints(doc, inputs);
    hosts.kill(2);
    hosts.status_once_failed();
    const auto recovered = run_command(hosts.dnnc_on(1, "recover --json" + lead));
    INFO(recovered.err);
    REQUIRE(recovered.exit_code == 0);
    CHECK(json::parse(recovered.out)["removed"] == json::array({"h2"}));
    const auto status = json::parse(run_command(hosts.dnnc_on(1, "status --json" + lead)).out);
    CHECK(node_in(status, "h3")["via"] == "h4");
    hosts.check_outputs_after_recovery(doc, inputs);
}

TEST_CASE("a host that no path reaches: the submit fails naming it and the nodes it tried, and nothing changes") {
    if (!test_hosts_available()) return;
    split_hosts split;
    const auto& dir = split.dir;
    auto& hosts = split.hosts;
    hosts.link(3, false);  // its node runs on, out of everyone's reach
    const auto doc = dir.file("hosts.xml", network_on("<run probes=\"2\"/>"));
    const auto r = run_command(hosts.dnnc_on(1, "submit " + doc + " --to " + test_hosts::endpoint(1)));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("cluster: node 'h3' (" + test_hosts::endpoint(3) + ") answers neither the lead nor through the nodes "
                                      "linked to it (h2, h4)"));
    const auto status = json::parse(run_command(hosts.dnnc_on(1, "status --json --lead " + test_hosts::endpoint(1))).out);
    CHECK_FALSE(status.contains("network"));
}
