// Structural plasticity through snapshots on real local clusters: a growing network (NEST's
// structural_plasticity.py at a tenth of its size, grown 100 times faster) run on 2 nodes,
// snapshotted (binary and XML) and run on from the snapshot on 3 nodes gives the spikes and
// the structure log (dnnc run --spikes, --structure) of a straight run on 1 node; the snapshot
// carries every neuron's growth, and one without it is refused.
#include "cluster_fixture.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

using namespace dnnc::test;

namespace {


// The CSV's header and the rows whose first field (a tick or a time) is at least `from`.
std::string rows_from(const std::string& csv, double from) {
    std::istringstream in(csv);
    std::string line, out;
    std::getline(in, line);
    out = line + "\n";
    while (std::getline(in, line))
        if (std::stod(line.substr(0, line.find(','))) >= from) out += line + "\n";
    return out;
}

std::size_t rows_of(const std::string& csv) { return static_cast<std::size_t>(std::count(csv.begin(), csv.end(), '\n')) - 1; }

}  // namespace

TEST_CASE("a growing network snapshotted on 2 nodes runs on from the snapshot on 3 nodes as a straight run on 1") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    const auto out = [&](const std::string& name) { return (dir.path / name).string(); };
    const auto network = dir.file("sp.xml", small_growing_network());
    // Updates every 1,000 ticks from tick 0: 4 before the snapshot, 4 after.
    const int ticks = 8000, taken = 3500;
    must(dnnc + " run " + network + " --nodes 1 --ticks " + std::to_string(ticks) + " --spikes " + out("straight.csv") +
         " --structure " + out("straight_structure.csv"));
    const auto straight = slurp(out("straight.csv")), structure = slurp(out("straight_structure.csv"));
    REQUIRE(rows_of(structure) == 2 * 8);

    std::vector<int> two;
    const auto first = dir.file("two.xml", with_cluster_of(small_growing_network(), {1, 1}, two));
    {
        local_cluster_guard c(first);
        REQUIRE(c.up.exit_code == 0);
        must(dnnc + " submit " + first + to_of(two));
        must(dnnc + " step " + std::to_string(taken) + lead_of(two));
        must(dnnc + " freeze" + lead_of(two));
        must(dnnc + " snapshot -o " + out("k.dnncs") + lead_of(two));
        must(dnnc + " snapshot -o " + out("k.xml") + lead_of(two));
    }
    const auto xml = slurp(out("k.xml"));
    std::size_t grown = 0;  // every neuron has synaptic elements: each one's growth
    for (auto at = xml.find(" growth=\""); at != std::string::npos; at = xml.find(" growth=\"", at + 1)) ++grown;
    CHECK(grown == 100);
    const auto spikes_after = rows_from(straight, taken * 0.1 - 0.05);  // t_ms
    const auto structure_after = rows_from(structure, taken * 0.1);  // t_ms
    REQUIRE(rows_of(structure_after) == 2 * 4);
    REQUIRE(rows_of(spikes_after) > 100);
    // The network had grown synapses when the snapshot was taken: the first update after it
    // counts some (connections_in, the fourth field).
    {
        std::istringstream rows(structure_after);
        std::string line;
        std::getline(rows, line);
        std::getline(rows, line);
        std::vector<std::string> fields;
        for (std::istringstream f(line); std::getline(f, fields.emplace_back(), ',');) {}
        REQUIRE(fields.size() >= 4);
        CHECK(std::stoull(fields[3]) > 0);
    }
    for (const char* snapshot : {"k.dnncs", "k.xml"}) {
        INFO(snapshot);
        const std::string name = std::string(snapshot).substr(2);
        must(dnnc + " run " + out(snapshot) + " --nodes 3 --ticks " + std::to_string(ticks - taken) + " --spikes " + out(name + ".csv") +
             " --structure " + out(name + "_structure.csv"));
        CHECK(slurp(out(name + ".csv")) == spikes_after);
        CHECK(slurp(out(name + "_structure.csv")) == structure_after);
    }
    // Without its growth a snapshot of a growing network is refused with its location.
    const auto without = dir.file("without.xml", std::regex_replace(xml, std::regex(" growth=\"[^\"]*\""), ""));
    const auto refused = run_command(dnnc + " run " + without + " --nodes 2 --ticks 10");
    INFO(refused.err);
    CHECK(refused.exit_code == 2);
    CHECK(refused.err.find("state of 'E[0]': growth missing") != std::string::npos);
}
