// Plastic synapses through the command line on real local clusters: dnnc run gives the same
// spikes and the same learned weights (--weights) on 1, 2, 3 and 4 nodes, and with the weights
// sampled along the way (--weights-every) the same as without; a cluster driven
// by hand gives them too through dnnc weights --lead, for one projection or all; reading
// weights while the network runs, naming a projection that is not plastic, or a plastic
// network under window sync are refused with exit 2, and the cluster keeps running.
#include "cluster_fixture.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <sstream>

using namespace dnnc::test;

namespace {

const std::string example = source_path("examples/stdp/stdp.xml");

std::size_t rows_of(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) - 1; }

}  // namespace

TEST_CASE("dnnc run gives the same spikes and learned weights of a plastic network on 1, 2, 3 and 4 nodes") {
    scratch_dir dir;
    std::string spikes, weights;
    for (int nodes = 1; nodes <= 4; ++nodes) {
        INFO(nodes << " nodes");
        const auto s = (dir.path / ("s" + std::to_string(nodes) + ".csv")).string();
        const auto w = (dir.path / ("w" + std::to_string(nodes) + ".csv")).string();
        const auto r = run_command(dnnc_binary() + " run " + example + " --nodes " + std::to_string(nodes) +
                                   " --ticks 3000 --spikes " + s + " --weights " + w);
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(r.out.find("weights: " + w + " (20000 synapses)") != std::string::npos);
        if (nodes == 1) {
            spikes = slurp(s);
            weights = sorted_csv(slurp(w));
            REQUIRE(weights.rfind("projection,source,target,weight\nE_E,E[0],E[", 0) == 0);
            REQUIRE(rows_of(weights) == 20000);
            REQUIRE(rows_of(spikes) > 2000);
            continue;
        }
        CHECK(slurp(s) == spikes);
        CHECK(sorted_csv(slurp(w)) == weights);
    }
    // The weights did change: not every E_E weight is still the 1.5 it was built with.
    std::istringstream in(weights);
    std::string line;
    std::size_t changed = 0;
    while (std::getline(in, line))
        if (line.rfind("E_E,", 0) == 0 && line.substr(line.rfind(',') + 1) != "1.5") ++changed;
    CHECK(changed > 10000);
}

TEST_CASE("dnnc run --weights-every writes the weights after every T ticks and changes neither the spikes nor the final weights") {
    scratch_dir dir;
    auto run = [&](const std::string& name, int nodes, int ticks, const std::string& more) {
        const auto r = run_command(dnnc_binary() + " run " + example + " --nodes " + std::to_string(nodes) + " --ticks " +
                                   std::to_string(ticks) + " --spikes " + (dir.path / (name + ".csv")).string() + " --weights " +
                                   (dir.path / ("w" + name + ".csv")).string() + more);
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        return r.out;
    };
    run("straight", 1, 2500, "");
    run("first", 1, 1000, "");
    // Steps of 1,000, 1,000 and 500 ticks, the weights written after the first two.
    const auto out = run("sampled", 3, 2500, " --weights-every 1000");
    const auto sample = [&](int tick) { return (dir.path / ("wsampled-" + std::to_string(tick) + ".csv")).string(); };
    CHECK(out.find("weights every 1000 ticks: " + sample(1000) + " ... " + sample(2000) + " (2 files)") != std::string::npos);
    CHECK(slurp((dir.path / "sampled.csv").string()) == slurp((dir.path / "straight.csv").string()));
    CHECK(sorted_csv(slurp((dir.path / "wsampled.csv").string())) == sorted_csv(slurp((dir.path / "wstraight.csv").string())));
    CHECK(sorted_csv(slurp(sample(1000))) == sorted_csv(slurp((dir.path / "wfirst.csv").string())));
    CHECK(rows_of(slurp(sample(2000))) == 20000);
    CHECK(sorted_csv(slurp(sample(2000))) != sorted_csv(slurp(sample(1000))));
    CHECK_FALSE(std::filesystem::exists(sample(2500)));

    const auto alone = run_command(dnnc_binary() + " run " + example + " --nodes 1 --ticks 10 --weights-every 5");
    CHECK(alone.exit_code == 2);
    CHECK(alone.err.find("--weights") != std::string::npos);
}

TEST_CASE("dnnc weights reads a frozen cluster's learned weights, for one projection or all, and refuses what it cannot") {
    scratch_dir dir;
    std::vector<int> ports{free_port(), free_port(), free_port()};
    std::string doc = slurp(example);
    const std::string cluster = "  <cluster lead=\"a\">\n    <node id=\"a\" port=\"" + std::to_string(ports[0]) + "\"/>\n    <node id=\"b\" port=\"" +
                                std::to_string(ports[1]) + "\"/>\n    <node id=\"c\" port=\"" + std::to_string(ports[2]) +
                                "\"/>\n    <link from=\"a\" to=\"b\"/>\n    <link from=\"b\" to=\"c\"/>\n  </cluster>\n";
    doc.insert(doc.find("  <run"), cluster);
    const auto config = dir.file("c.xml", doc);
    const auto reference = (dir.path / "ref.csv").string();
    REQUIRE(run_command(dnnc_binary() + " run " + example + " --nodes 1 --ticks 2000 --weights " + reference).exit_code == 0);

    local_cluster_guard up(config);
    REQUIRE(up.up.exit_code == 0);
    const std::string lead = " --lead 127.0.0.1:" + std::to_string(ports[0]);
    REQUIRE(run_command(dnnc_binary() + " submit " + config + " --to 127.0.0.1:" + std::to_string(ports[0])).exit_code == 0);
    REQUIRE(run_command(dnnc_binary() + " step 2000 --json" + lead).exit_code == 0);
    REQUIRE(run_command(dnnc_binary() + " freeze" + lead).exit_code == 0);
    const auto all = (dir.path / "all.csv").string(), inhibitory = (dir.path / "ie.csv").string();
    const auto read = run_command(dnnc_binary() + " weights -o " + all + lead);
    INFO(read.err);
    REQUIRE(read.exit_code == 0);
    CHECK(sorted_csv(slurp(all)) == sorted_csv(slurp(reference)));
    REQUIRE(run_command(dnnc_binary() + " weights --projection I_E -o " + inhibitory + lead).exit_code == 0);
    const auto only = slurp(inhibitory);
    CHECK(rows_of(only) == 4000);
    CHECK(only.find("E_E,") == std::string::npos);

    const auto static_one = run_command(dnnc_binary() + " weights --projection E_I -o " + inhibitory + lead);
    CHECK(static_one.exit_code == 2);
    CHECK(static_one.err.find("no plastic projection 'E_I'") != std::string::npos);
    REQUIRE(run_command(dnnc_binary() + " start" + lead).exit_code == 0);
    const auto running = run_command(dnnc_binary() + " weights -o " + all + lead);
    CHECK(running.exit_code != 0);
    CHECK(running.err.find("freeze it first") != std::string::npos);
    REQUIRE(run_command(dnnc_binary() + " freeze" + lead).exit_code == 0);
    CHECK(run_command(dnnc_binary() + " weights -o " + all + lead).exit_code == 0);
}

TEST_CASE("a plastic network under window sync is refused with its location, exit 2") {
    scratch_dir dir;
    std::string doc = slurp(example);
    doc.replace(doc.find("sync=\"lockstep\""), 15, "sync=\"window\"");
    const auto r = run_command(dnnc_binary() + " run " + dir.file("w.xml", doc) + " --nodes 2 --ticks 10");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("w.xml:") != std::string::npos);
    CHECK(r.err.find("lockstep") != std::string::npos);
}
