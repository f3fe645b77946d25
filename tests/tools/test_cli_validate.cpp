// `dnnc validate` as a user runs it: exit codes, located messages, the JSON summary.
#include "run_command.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

using namespace dnnc::test;

TEST_CASE("dnnc validate accepts every example and exits 0") {
    const auto r = run_command(dnnc_binary() + " validate " + source_path("examples/*/*.xml"));
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("xor.xml: valid, 5 neurons, 6 synapses, 2 nodes, 1 links"));
    CHECK(r.err.empty());
}

TEST_CASE("dnnc validate rejects every bad document with exit code 2 and a located message") {
    const auto r = run_command(dnnc_binary() + " validate " + source_path("tests/data/bad/*.xml"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("dangling_synapse.xml:5:5: synapse from 'n7' to 'n99': no neuron 'n99'"));
    CHECK_THAT(r.err, Catch::Contains("billion_laughs.xml:2:"));
    CHECK(r.out.empty());
}

TEST_CASE("one bad file among good ones makes the exit code 2") {
    const auto r = run_command(dnnc_binary() + " validate " + source_path("examples/xor/xor.xml") + " " +
                               source_path("tests/data/bad/delay_zero.xml"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out, Catch::Contains("xor.xml: valid"));
    CHECK_THAT(r.err, Catch::Contains("delay must be at least 1 tick"));
}

TEST_CASE("dnnc validate --json prints a summary per file") {
    const auto r = run_command(dnnc_binary() + " validate --json " + source_path("examples/cuba/cuba.xml") + " " +
                               source_path("tests/data/bad/unknown_lead.xml"));
    CHECK(r.exit_code == 2);
    const auto report = nlohmann::json::parse(r.out);
    REQUIRE(report.size() == 2);
    CHECK(report[0]["valid"] == true);
    CHECK(report[0]["neurons"] == 4000);
    CHECK(report[0]["populations"] == 1);
    CHECK(report[0]["nodes"] == 4);
    CHECK(report[0]["links"] == 4);
    CHECK(report[0]["synapses"].get<int>() > 300000);
    CHECK(report[1]["valid"] == false);
    CHECK(report[1]["errors"][0]["line"] == 7);
    CHECK(report[1]["errors"][0]["column"] == 3);
    CHECK_THAT(report[1]["errors"][0]["message"].get<std::string>(), Catch::Contains("cluster lead 'boss'"));
}

TEST_CASE("dnnc validate counts every rule exactly without storing a synapse") {
    // 80 x 800 + 20 x 800 + 80 x 200 + 20 x 200 fixed in-degree synapses, and a random
    // projection whose exact count its rows give.
    const std::string path = std::filesystem::temp_directory_path() / ("dnnc-count-" + std::to_string(::getpid()) + ".xml");
    std::ofstream(path) << R"(<dnnc xmlns="urn:dnnc:1"><network name="c">
        <population id="E" size="800"/><population id="I" size="200"/>
        <projection from="E" to="E" kind="fixed-indegree" indegree="80" seed="1"/>
        <projection from="I" to="E" kind="fixed-indegree" indegree="20" seed="2"/>
        <projection from="E" to="I" kind="fixed-indegree" indegree="80" multapses="false" seed="3"/>
        <projection from="I" to="I" kind="fixed-indegree" indegree="20" multapses="false" autapses="false" seed="4"/>
        <projection from="I" to="I" kind="random" p="0.5" seed="5"/></network></dnnc>)";
    const auto r = run_command(dnnc_binary() + " validate --json " + path);
    std::filesystem::remove(path);
    REQUIRE(r.exit_code == 0);
    const auto synapses = nlohmann::json::parse(r.out)[0]["synapses"].get<std::uint64_t>();
    const auto random = synapses - 100000;
    CHECK(random > 19000);  // about 0.5 x 200 x 200 = 20,000
    CHECK(random < 21000);
}

TEST_CASE("dnnc validate counts fixed out-degree and fixed total number exactly") {
    const auto r = run_command(dnnc_binary() + " validate --json " + std::string(DNNC_SOURCE_DIR) + "/tests/data/rules_and_distributions.xml");
    REQUIRE(r.exit_code == 0);
    // 160 x 16 and 40 x 16 out-degree synapses, 640 and 160 in total.
    CHECK(nlohmann::json::parse(r.out)[0]["synapses"].get<std::uint64_t>() == 160 * 16 + 640 + 40 * 16 + 160);
}

TEST_CASE("usage errors exit with 2") {
    CHECK(run_command(dnnc_binary() + " validate").exit_code == 2);
    CHECK(run_command(dnnc_binary() + " no-such-command").exit_code == 2);
    CHECK(run_command(dnnc_binary() + " validate /nonexistent/file.xml").exit_code == 2);
}
