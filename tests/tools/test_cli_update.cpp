// dnnc update on real clusters: a frozen network takes new parameters between two steps and
// goes on exactly as a network written with the change from the start (a dc that stops
// there beside one that starts there), on 3 nodes as on 1; an update that changes more
// than parameters, or one of a running network, is refused (exit 2) and changes nothing.
// New delays: test_cli_update_delays.cpp.
#include "cluster_fixture.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <regex>

using namespace dnnc::test;

namespace {
// The CUBA example on `capacities` with `generators` added to its network.
std::string cuba_with(const std::string& generators, const std::vector<double>& capacities, std::vector<int>& ports) {
    return std::regex_replace(with_cluster("cuba/cuba.xml", capacities, ports), std::regex("</network>"), generators + "</network>");
}
}  // namespace

TEST_CASE("dnnc update between two steps equals the change written from the start, on 3 nodes as on 1") {
    scratch_dir dir;
    setenv("XDG_STATE_HOME", dir.path.c_str(), 1);  // the nodes' checkpoints
    const auto dnnc = dnnc_binary();
    const auto out = [&](const std::string& name) { return (dir.path / name).string(); };
    std::vector<int> ref_ports, ports;
    const auto reference = dir.file("reference.xml", cuba_with(R"(<dc to="P" amplitude="0.5" stop="20"/><dc to="P" amplitude="-1" start="20"/>)", {1}, ref_ports));
    {
        local_cluster_guard c(reference);
        REQUIRE(c.up.exit_code == 0);
        must(dnnc + " submit " + reference + to_of(ref_ports));
        must(dnnc + " step 400" + lead_of(ref_ports));
        must(dnnc + " output -o " + out("reference.csv") + lead_of(ref_ports));
    }
    for (const std::vector<double>& capacities : {std::vector<double>{1}, std::vector<double>{2, 1, 1}}) {
        INFO(capacities.size() << " nodes");
        std::filesystem::remove_all(dir.path / "dnnc" / "checkpoints");
        const auto text = cuba_with(R"(<dc to="P" amplitude="0.5"/>)", capacities, ports);
        const auto before = dir.file("before.xml", text);
        const auto after = dir.file("after.xml", std::regex_replace(text, std::regex("amplitude=\"0.5\""), "amplitude=\"-1\""));
        const auto rewired = dir.file("rewired.xml", std::regex_replace(text, std::regex("to=\"P\" amplitude"), "to=\"P[0:10]\" amplitude"));
        local_cluster_guard c(before);
        REQUIRE(c.up.exit_code == 0);
        must(dnnc + " submit " + before + to_of(ports));
        must(dnnc + " step 200" + lead_of(ports));
        must(dnnc + " checkpoint --every 1000" + lead_of(ports));
        const auto no_network = run_command(dnnc + " update " + dir.file("cluster_only.xml", R"(<dnnc xmlns="urn:dnnc:1"><cluster lead="a"><node id="a" port="1"/></cluster></dnnc>)") + lead_of(ports));
        CHECK(no_network.exit_code == 2);
        CHECK(no_network.err.find("the document has no <network>") != std::string::npos);
        CHECK(run_command(dnnc + " update " + out("missing.xml") + lead_of(ports)).exit_code == 2);
        const auto refused = run_command(dnnc + " update " + rewired + lead_of(ports));
        CHECK(refused.exit_code == 2);
        CHECK(refused.err.find("<dc> 1 is not the running network's of the same kind, targets") != std::string::npos);
        const auto updated = run_command(dnnc + " update " + after + lead_of(ports));
        INFO(updated.err);
        REQUIRE(updated.exit_code == 0);
        CHECK(updated.out.find("its parameters hold from tick 200") != std::string::npos);
        // With checkpoints on, the lead writes one at once: it holds the update.
        const auto checkpoint = dir.path / "dnnc" / "checkpoints" / "cuba" / "checkpoint-200.dnncs";
        REQUIRE(std::filesystem::exists(checkpoint));
        CHECK(slurp(checkpoint.string()).find(R"(<dc to="P" amplitude="-1"/>)") != std::string::npos);
        must(dnnc + " step 200" + lead_of(ports));
        must(dnnc + " output -o " + out("updated.csv") + lead_of(ports));
        CHECK(slurp(out("updated.csv")) == slurp(out("reference.csv")));
        must(dnnc + " start" + lead_of(ports));
        const auto running = run_command(dnnc + " update " + after + lead_of(ports));
        CHECK(running.exit_code == 2);
        CHECK(running.err.find("must be frozen for an update") != std::string::npos);
    }
}

TEST_CASE("dnnc update of static weights between two steps gives the same outputs on 3 nodes as on 1, and a delay beyond the history is refused") {
    scratch_dir dir;
    setenv("XDG_STATE_HOME", dir.path.c_str(), 1);
    const auto dnnc = dnnc_binary();
    const auto out = [&](const std::string& name) { return (dir.path / name).string(); };
    std::vector<int> ports;
    std::string unchanged;
    for (const std::vector<double>& capacities : {std::vector<double>{1}, std::vector<double>{2, 1, 1}}) {
        INFO(capacities.size() << " nodes");
        const auto text = with_cluster("cuba/cuba.xml", capacities, ports);
        const auto before = dir.file("before.xml", text);
        const auto after = dir.file("after.xml", std::regex_replace(std::regex_replace(text, std::regex("weight=\"1.62\""), "weight=\"2.2\""),
                                                                    std::regex("weight=\"-9\""), "weight=\"-12\""));
        const auto delayed = dir.file("delayed.xml", std::regex_replace(text, std::regex("weight=\"1.62\" delay=\"1\""), "weight=\"2.2\" delay=\"2\""));
        local_cluster_guard c(before);
        REQUIRE(c.up.exit_code == 0);
        must(dnnc + " submit " + before + to_of(ports));
        must(dnnc + " step 200" + lead_of(ports));
        const auto refused = run_command(dnnc + " update " + delayed + lead_of(ports));
        CHECK(refused.exit_code == 2);
        CHECK(refused.err.find("the longest delay would be 2 ticks; the nodes keep 1 ticks of output") != std::string::npos);
        const auto updated = run_command(dnnc + " update " + after + lead_of(ports));
        INFO(updated.err);
        REQUIRE(updated.exit_code == 0);
        must(dnnc + " step 200" + lead_of(ports));
        const auto name = "updated-" + std::to_string(capacities.size()) + ".csv";
        must(dnnc + " output -o " + out(name) + lead_of(ports));
        if (capacities.size() > 1) CHECK(slurp(out(name)) == slurp(out("updated-1.csv")));
        // The lead's document holds the new weights: a snapshot written now has them.
        must(dnnc + " snapshot -o " + out("now.xml") + lead_of(ports));
        CHECK(slurp(out("now.xml")).find("weight=\"2.2\"") != std::string::npos);
        if (capacities.size() == 1) unchanged = outputs_of_fresh_run(before, ports, 400, out("unchanged.csv"));
    }
    CHECK(unchanged != slurp(out("updated-1.csv")));  // the weights made a difference
}
