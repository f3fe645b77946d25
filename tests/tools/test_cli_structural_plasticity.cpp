// Structural plasticity through the command line on real local clusters: a network that starts
// without synapses grows and prunes them, and dnnc run writes the same structure rows
// (--structure) and the same spikes on 1, 2 and 3 nodes; --structure of a network without
// structural plasticity, and a synaptic element that no structural synapse uses, are refused
// with exit 2.
#include "cluster_fixture.hpp"

#include <catch2/catch.hpp>

#include <regex>
#include <sstream>

using namespace dnnc::test;

namespace {

// The created and deleted synapses the rows of a --structure CSV count.
std::pair<long, long> turnover(const std::string& csv) {
    std::istringstream in(csv);
    std::string line;
    std::getline(in, line);
    long created = 0, deleted = 0;
    while (std::getline(in, line)) {
        std::vector<std::string> cells;
        std::istringstream row(line);
        for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
        REQUIRE(cells.size() == 6);
        created += std::stol(cells[4]);
        deleted += std::stol(cells[5]);
    }
    return {created, deleted};
}

}  // namespace

TEST_CASE("dnnc run gives the same structure rows and spikes of a growing network on 1, 2 and 3 nodes") {
    scratch_dir dir;
    const auto doc = dir.file("grow.xml", small_growing_network());
    std::string structure, spikes;
    for (int nodes = 1; nodes <= 3; ++nodes) {
        INFO(nodes << " nodes");
        const auto st = (dir.path / ("st" + std::to_string(nodes) + ".csv")).string();
        const auto sp = (dir.path / ("sp" + std::to_string(nodes) + ".csv")).string();
        const auto r = run_command(dnnc_binary() + " run " + doc + " --nodes " + std::to_string(nodes) + " --ticks 20000 --structure " +
                                   st + " --spikes " + sp);
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(r.out.find("structure: " + st + " (40 rows)") != std::string::npos);
        if (nodes == 1) {
            structure = slurp(st);
            spikes = slurp(sp);
            REQUIRE(structure.rfind("t_ms,population,mean_ca,connections_in,created,deleted\n0,E,0,0,0,0\n0,I,0,0,0,0\n100,E,", 0) == 0);
            const auto [created, deleted] = turnover(structure);
            REQUIRE(created > 100);
            REQUIRE(deleted > 0);
            continue;
        }
        REQUIRE(slurp(st) == structure);
        REQUIRE(slurp(sp) == spikes);
    }
}

TEST_CASE("dnnc run refuses --structure for a network without structural plasticity, and an unused synaptic element") {
    scratch_dir dir;
    const auto plain = run_command(dnnc_binary() + " run " + source_path("examples/stdp/stdp.xml") + " --nodes 1 --ticks 10 --structure " +
                                   (dir.path / "s.csv").string());
    CHECK(plain.exit_code == 2);
    CHECK(plain.err.find("--structure: the network has no <structural-plasticity>") != std::string::npos);
    const auto unused = dir.file("unused.xml", std::regex_replace(small_growing_network(), std::regex("name=\"Den_in\" growth_rate=\"0.01\""),
                                                                  "name=\"Den_x\" growth_rate=\"0.01\""));
    const auto r = run_command(dnnc_binary() + " run " + unused + " --nodes 1 --ticks 10");
    CHECK(r.exit_code == 2);
    INFO(r.err);
    CHECK(r.err.find("unused.xml:14:") != std::string::npos);
    CHECK(r.err.find("Den_x") != std::string::npos);
}
