// `dnnc gen` and `dnnc partition` as a user runs them: generated graphs and networks,
// metrics as JSON, per-node assignments, and usage errors with exit code 2.
#include "cluster_fixture.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace dnnc::test;
using nlohmann::json;

TEST_CASE("a generated block model is partitioned along its planted blocks") {
    scratch_dir dir;
    const auto graph = (dir.path / "sbm.graph").string();
    const auto gen = run_command(dnnc_binary() + " gen sbm --blocks 250,250,250,250 --p-in 0.1 --p-out 0.005 --seed 3 -o " + graph);
    INFO(gen.err);
    REQUIRE(gen.exit_code == 0);
    const auto r = run_command(dnnc_binary() + " partition " + graph + " --parts 4 --json");
    REQUIRE(r.exit_code == 0);
    const auto m = json::parse(r.out);
    REQUIRE(m["nodes"].size() == 4);
    for (const auto& n : m["nodes"]) CHECK(n["vertices"] == 250);
    CHECK(m["condition1_violations"] == 0);
    CHECK(m["max_imbalance"].get<double>() <= 1.03);
    // The original strategy runs too, and its metrics show its weakness.
    const auto mincut = run_command(dnnc_binary() + " partition " + graph + " --parts 4 --strategy mincut --json");
    REQUIRE(mincut.exit_code == 0);
    CHECK(json::parse(mincut.out)["max_imbalance"].get<double>() > 2.0);
}

TEST_CASE("generated DNNC networks validate, and a network's cluster gives the assignment") {
    scratch_dir dir;
    const auto net = (dir.path / "ff.xml").string();
    REQUIRE(run_command(dnnc_binary() + " gen ff --layers 20,30,10 --p 0.3 -o " + net).exit_code == 0);
    CHECK(run_command(dnnc_binary() + " validate " + net).exit_code == 0);
    const auto out = (dir.path / "assignment.csv").string();
    const auto r = run_command(dnnc_binary() + " partition " + source_path("examples/cuba/cuba.xml") + " --json -o " + out);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto m = json::parse(r.out);
    REQUIRE(m["nodes"].size() == 4);
    std::ifstream in(out);
    std::string line;
    std::size_t lines = 0;
    while (std::getline(in, line)) ++lines;
    CHECK(lines >= 4000);
}

TEST_CASE("bad partition and gen arguments exit with 2") {
    scratch_dir dir;
    const auto graph = (dir.path / "g.graph").string();
    REQUIRE(run_command(dnnc_binary() + " gen er --n 50 --p 0.1 -o " + graph).exit_code == 0);
    CHECK(run_command(dnnc_binary() + " partition " + graph + " --parts 0").exit_code == 2);
    CHECK(run_command(dnnc_binary() + " partition " + graph + " --parts 51").exit_code == 2);
    CHECK(run_command(dnnc_binary() + " partition " + graph).exit_code == 2);
    CHECK(run_command(dnnc_binary() + " gen sbm -o " + graph).exit_code == 2);
    CHECK(run_command(dnnc_binary() + " gen er --n 10 --p 2 -o " + graph).exit_code == 2);
    const auto bad = dir.file("bad.graph", "3 2\n2\n1 3\n");
    const auto r = run_command(dnnc_binary() + " partition " + bad + " --parts 2");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("bad.graph:"));
}
