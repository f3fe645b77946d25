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
    const auto strong = run_command(dnnc_binary() + " partition " + graph + " --parts 4 --quality strong --json");
    REQUIRE(strong.exit_code == 0);
    const auto s = json::parse(strong.out);
    CHECK(s["quality"] == "strong");
    CHECK(s["edge_cut"].get<long long>() <= m["edge_cut"].get<long long>());
    CHECK(s["max_imbalance"].get<double>() <= 1.03);
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

TEST_CASE("with link bandwidths, the report gives each link's traffic and the largest load") {
    scratch_dir dir;
    const auto graph = (dir.path / "sbm.graph").string();
    REQUIRE(run_command(dnnc_binary() + " gen sbm --blocks 100,100,100,100 --p-in 0.1 --p-out 0.01 --seed 3 -o " + graph).exit_code == 0);
    const std::string nodes = R"(<node id="a" port="7001"/><node id="b" port="7002"/>
        <node id="c" port="7003"/><node id="d" port="7004"/>)";
    const auto links = [](const std::string& slow) {
        return "<link from=\"a\" to=\"b\"" + slow + "/><link from=\"b\" to=\"c\"/>"
               "<link from=\"c\" to=\"d\"/><link from=\"d\" to=\"a\"/>";
    };
    const auto cluster = [&](const std::string& name, const std::string& slow) {
        return dir.file(name, R"(<dnnc xmlns="urn:dnnc:1"><cluster lead="a">)" + nodes + links(slow) + "</cluster></dnnc>");
    };
    const auto r = run_command(dnnc_binary() + " partition " + graph + " --cluster " + cluster("slow.xml", R"( bandwidth="10Mbit")") + " --json");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto m = json::parse(r.out);
    REQUIRE(m["links"].size() == 4);
    CHECK(m["links"][0]["bandwidth_bps"] == 1e7);
    CHECK(m["links"][1]["bandwidth_bps"].is_null());
    CHECK(m["max_link_load"].get<double>() == Approx(m["links"][0]["traffic"].get<double>() / 1e7));
    const auto text = run_command(dnnc_binary() + " partition " + graph + " --cluster " + cluster("slow.xml", R"( bandwidth="10Mbit")"));
    CHECK_THAT(text.out, Catch::Contains("10.0 Mbit/s"));
    // Without bandwidths: no link table, no load.
    const auto none = json::parse(run_command(dnnc_binary() + " partition " + graph + " --cluster " + cluster("none.xml", "") + " --json").out);
    CHECK_FALSE(none.contains("links"));
    CHECK(none["max_link_load"] == 0);
}

TEST_CASE("bad partition and gen arguments exit with 2") {
    scratch_dir dir;
    const auto graph = (dir.path / "g.graph").string();
    REQUIRE(run_command(dnnc_binary() + " gen er --n 50 --p 0.1 -o " + graph).exit_code == 0);
    CHECK(run_command(dnnc_binary() + " partition " + graph + " --parts 0").exit_code == 2);
    CHECK(run_command(dnnc_binary() + " partition " + graph + " --parts 51").exit_code == 2);
    CHECK(run_command(dnnc_binary() + " partition " + graph).exit_code == 2);
    CHECK(run_command(dnnc_binary() + " partition " + graph + " --parts 2 --quality best").exit_code == 2);
    CHECK(run_command(dnnc_binary() + " gen sbm -o " + graph).exit_code == 2);
    CHECK(run_command(dnnc_binary() + " gen er --n 10 --p 2 -o " + graph).exit_code == 2);
    const auto bad = dir.file("bad.graph", "3 2\n2\n1 3\n");
    const auto r = run_command(dnnc_binary() + " partition " + bad + " --parts 2");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("bad.graph:"));
}
