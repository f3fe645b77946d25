// dnnc update on real clusters: a frozen network takes new parameters between two steps and
// goes on exactly as a network written with the change from the start (a dc that stops
// there beside one that starts there), on 3 nodes as on 1; an update that changes more
// than parameters, or one of a running network, is refused (exit 2) and changes nothing.
// Weights and synapse models' parameters likewise, their learned weights the same on 3
// nodes as on 1. New delays: test_cli_update_delays.cpp.
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
    const dnnc_scratch scratch;
    std::vector<int> ports;
    std::string unchanged;
    for (const auto& capacities : one_and_three_nodes) {
        INFO(capacities.size() << " nodes");
        const auto text = with_cluster("cuba/cuba.xml", capacities, ports);
        const auto before = scratch.dir.file("before.xml", text);
        const auto after = scratch.dir.file("after.xml", std::regex_replace(std::regex_replace(text, std::regex("weight=\"1.62\""), "weight=\"2.2\""),
                                                                    std::regex("weight=\"-9\""), "weight=\"-12\""));
        const auto delayed = scratch.dir.file("delayed.xml", std::regex_replace(text, std::regex("weight=\"1.62\" delay=\"1\""), "weight=\"2.2\" delay=\"2\""));
        local_cluster_guard c(before);
        REQUIRE(c.up.exit_code == 0);
        must(scratch.dnnc + " submit " + before + to_of(ports));
        must(scratch.dnnc + " step 200" + lead_of(ports));
        update_refused_then_taken(delayed, "the longest delay would be 2 ticks; the nodes keep 1 ticks of output", after, lead_of(ports));
        must(scratch.dnnc + " step 200" + lead_of(ports));
        const auto name = "updated-" + std::to_string(capacities.size()) + ".csv";
        must(scratch.dnnc + " output -o " + scratch.out(name) + lead_of(ports));
        if (capacities.size() > 1) CHECK(slurp(scratch.out(name)) == slurp(scratch.out("updated-1.csv")));
        // The lead's document holds the new weights: a snapshot written now has them.
        must(scratch.dnnc + " snapshot -o " + scratch.out("now.xml") + lead_of(ports));
        CHECK(slurp(scratch.out("now.xml")).find("weight=\"2.2\"") != std::string::npos);
        if (capacities.size() == 1) unchanged = outputs_of_fresh_run(before, ports, 400, scratch.out("unchanged.csv"));
    }
    CHECK(unchanged != slurp(scratch.out("updated-1.csv")));  // the weights made a difference
}

TEST_CASE("dnnc update of synapse models' parameters between two steps learns the same weights on 3 nodes as on 1, and a trace's time constant is refused") {
    const dnnc_scratch scratch;
    std::vector<int> ports;
    std::string unchanged;
    for (const auto& capacities : one_and_three_nodes) {
        INFO(capacities.size() << " nodes");
        const auto text = with_cluster("stdp/stdp.xml", capacities, ports);
        const auto before = scratch.dir.file("before.xml", text);
        const auto after = scratch.dir.file("after.xml", std::regex_replace(std::regex_replace(text, std::regex("lambda=\"0.01\" alpha=\"1.05\""), "lambda=\"0.04\" alpha=\"1.3\""),
                                                                    std::regex("eta=\"0.05\""), "eta=\"0.2\""));
        const auto retimed = scratch.dir.file("retimed.xml", std::regex_replace(text, std::regex("tau_plus=\"20\""), "tau_plus=\"30\""));
        local_cluster_guard c(before);
        REQUIRE(c.up.exit_code == 0);
        must(scratch.dnnc + " submit " + before + to_of(ports));
        must(scratch.dnnc + " step 200" + lead_of(ports));
        update_refused_then_taken(retimed, "<synapse-model> 'ee' changes tau_plus, which times the traces of its synapses' spikes", after,
                                  lead_of(ports));
        must(scratch.dnnc + " step 300" + lead_of(ports));
        const auto name = "weights-" + std::to_string(capacities.size()) + ".csv";
        must(scratch.dnnc + " weights -o " + scratch.out(name) + lead_of(ports));
        if (capacities.size() > 1) CHECK(sorted_csv(slurp(scratch.out(name))) == sorted_csv(slurp(scratch.out("weights-1.csv"))));
        // The lead's document holds the new parameters: a snapshot written now has them.
        must(scratch.dnnc + " snapshot -o " + scratch.out("now.xml") + lead_of(ports));
        CHECK(slurp(scratch.out("now.xml")).find("lambda=\"0.04\"") != std::string::npos);
        if (capacities.size() == 1) {
            must(scratch.dnnc + " submit --replace " + before + to_of(ports));
            must(scratch.dnnc + " step 500" + lead_of(ports));
            must(scratch.dnnc + " weights -o " + scratch.out("unchanged.csv") + lead_of(ports));
            unchanged = sorted_csv(slurp(scratch.out("unchanged.csv")));
        }
    }
    CHECK(unchanged != sorted_csv(slurp(scratch.out("weights-1.csv"))));  // the parameters made a difference
}
