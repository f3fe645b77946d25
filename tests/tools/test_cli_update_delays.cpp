// dnnc update of delays on real clusters: a frozen CUBA network whose excitatory delay
// shrinks (the nodes then read their peers sooner) and whose inhibitory delay grows goes on
// with the same outputs on 3 nodes as on 1; snapshots wait for the spikes still on their way
// with the old delays, and checkpoints falling before skip, as does a change of delays at a
// later tick; a snapshot after a shorter longest delay restores; a delay beyond the history
// the nodes keep is refused (exit 2) and the run goes on.
#include "cluster_fixture.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <regex>

using namespace dnnc::test;

namespace {
// CUBA with an excitatory delay of `excitatory` ticks and an inhibitory one of `inhibitory`.
std::string cuba_delayed(const std::string& text, const std::string& excitatory, const std::string& inhibitory) {
    return std::regex_replace(std::regex_replace(text, std::regex("weight=\"1.62\" delay=\"1\""), "weight=\"1.62\" delay=\"" + excitatory + "\""),
                              std::regex("weight=\"-9\" delay=\"1\""), "weight=\"-9\" delay=\"" + inhibitory + "\"");
}
}  // namespace

TEST_CASE("dnnc update of delays between two steps gives the same outputs on 3 nodes as on 1, and snapshots wait for the old delays' spikes") {
    const dnnc_scratch scratch;
    std::vector<int> ports;
    std::string unchanged;
    for (const auto& capacities : one_and_three_nodes) {
        INFO(capacities.size() << " nodes");
        std::filesystem::remove_all(scratch.dir.path / "dnnc" / "checkpoints");
        const auto text = with_cluster("cuba/cuba.xml", capacities, ports);
        const auto before = scratch.dir.file("before.xml", cuba_delayed(text, "5", "3"));
        const auto after = scratch.dir.file("after.xml", cuba_delayed(text, "2", "5"));
        const auto too_long = scratch.dir.file("too_long.xml", cuba_delayed(text, "6", "3"));
        const auto again = scratch.dir.file("again.xml", cuba_delayed(text, "3", "5"));
        const auto shorter = scratch.dir.file("shorter.xml", cuba_delayed(text, "2", "3"));
        local_cluster_guard c(before);
        REQUIRE(c.up.exit_code == 0);
        must(scratch.dnnc + " submit " + before + to_of(ports));
        must(scratch.dnnc + " step 200" + lead_of(ports));
        must(scratch.dnnc + " checkpoint --every 100" + lead_of(ports));
        update_refused_then_taken(too_long, "the longest delay would be 6 ticks; the nodes keep 5 ticks of output", after, lead_of(ports));
        // Spikes sent before tick 200 arrive with the old delays until tick 205 at the latest.
        const auto early = run_command(scratch.dnnc + " snapshot -o " + scratch.out("early.xml") + lead_of(ports));
        CHECK(early.exit_code == 2);
        CHECK(early.err.find("spikes sent before are on their way until tick 205") != std::string::npos);
        CHECK_FALSE(std::filesystem::exists(scratch.dir.path / "dnnc" / "checkpoints" / "cuba" / "checkpoint-200.dnncs"));
        // More changes before the next tick act as the last; one at a later tick waits.
        must(scratch.dnnc + " update " + again + lead_of(ports));
        must(scratch.dnnc + " update " + after + lead_of(ports));
        must(scratch.dnnc + " step 3" + lead_of(ports));
        const auto later = run_command(scratch.dnnc + " update " + again + lead_of(ports));
        CHECK(later.exit_code == 2);
        CHECK(later.err.find("change them again from then on") != std::string::npos);
        must(scratch.dnnc + " step 197" + lead_of(ports));
        wait_for_checkpoints(scratch.dir.path / "dnnc" / "checkpoints" / "cuba", 2);  // 300 and 400
        const auto name = "updated-" + std::to_string(capacities.size()) + ".csv";
        must(scratch.dnnc + " output -o " + scratch.out(name) + lead_of(ports));
        if (capacities.size() > 1) CHECK(slurp(scratch.out(name)) == slurp(scratch.out("updated-1.csv")));
        // The lead's document holds the new delays: a snapshot written now has them.
        must(scratch.dnnc + " snapshot -o " + scratch.out("now.xml") + lead_of(ports));
        CHECK(slurp(scratch.out("now.xml")).find("delay=\"2\"") != std::string::npos);  // only the excitatory projection has it
        // A shorter longest delay: the nodes keep their history, a snapshot carries it (4 past
        // outputs where 2 would do) and a restore goes on as the run that was not stopped.
        must(scratch.dnnc + " update " + shorter + lead_of(ports));
        must(scratch.dnnc + " step 10" + lead_of(ports));
        must(scratch.dnnc + " output -o " + scratch.out("until-snapshot.csv") + lead_of(ports));
        must(scratch.dnnc + " snapshot -o " + scratch.out("short.dnncs") + lead_of(ports));
        must(scratch.dnnc + " step 100" + lead_of(ports));
        must(scratch.dnnc + " output -o " + scratch.out("straight.csv") + lead_of(ports));
        must(scratch.dnnc + " restore " + scratch.out("short.dnncs") + " --replace" + to_of(ports));
        must(scratch.dnnc + " step 100" + lead_of(ports));
        must(scratch.dnnc + " output -o " + scratch.out("restored.csv") + lead_of(ports));
        const auto restored = slurp(scratch.out("restored.csv"));
        CHECK(slurp(scratch.out("until-snapshot.csv")) + restored.substr(restored.find('\n') + 1) == slurp(scratch.out("straight.csv")));
        if (capacities.size() == 1) unchanged = outputs_of_fresh_run(before, ports, 400, scratch.out("unchanged.csv"));
    }
    CHECK(unchanged != slurp(scratch.out("updated-1.csv")));  // the delays made a difference
}
