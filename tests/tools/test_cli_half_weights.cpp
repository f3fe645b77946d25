// Weights in 16 bits through the command line on real local clusters: the scaled
// microcircuit gives the same spikes on 1 and 3 nodes, and with --weight-precision half; a
// network whose weights do not fit 16 bits is refused with exit 2 and the neuron named, and
// so is one with plastic synapses.
#include "cluster_fixture.hpp"

#include <catch2/catch.hpp>

#include <fstream>

using namespace dnnc::test;

namespace {

std::string with_half_weights(std::string text) {
    const auto at = text.find("<run ");
    REQUIRE(at != std::string::npos);
    return text.insert(at + 5, "weight-precision=\"half\" ");
}

}  // namespace

TEST_CASE("with half weights the scaled microcircuit spikes alike on 1 and 3 nodes") {
    scratch_dir dir;
    const auto doc = (dir.path / "half.xml").string();
    std::ofstream(doc) << with_half_weights(slurp(source_path("examples/microcircuit/microcircuit_scaled.xml")));
    std::string spikes[2];
    for (const int nodes : {1, 3}) {
        const auto csv = (dir.path / ("spikes" + std::to_string(nodes) + ".csv")).string();
        const auto r = run_command(dnnc_binary() + " run " + doc + " --nodes " + std::to_string(nodes) + " --ticks 2000 --spikes " + csv);
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        spikes[nodes == 3] = sorted_csv(slurp(csv));
    }
    CHECK(std::count(spikes[0].begin(), spikes[0].end(), '\n') > 1000);
    CHECK(spikes[0] == spikes[1]);
    // Not the spikes of 32-bit weights; the same as the option asks for on the example.
    const auto example = source_path("examples/microcircuit/microcircuit_scaled.xml");
    const auto single = (dir.path / "single.csv").string(), option = (dir.path / "option.csv").string();
    REQUIRE(run_command(dnnc_binary() + " run " + example + " --nodes 1 --ticks 2000 --spikes " + single).exit_code == 0);
    CHECK(sorted_csv(slurp(single)) != spikes[0]);
    REQUIRE(run_command(dnnc_binary() + " run " + example + " --nodes 1 --ticks 2000 --weight-precision half --spikes " + option).exit_code == 0);
    CHECK(sorted_csv(slurp(option)) == spikes[0]);
    CHECK(run_command(dnnc_binary() + " run " + example + " --nodes 1 --weight-precision quarter").exit_code == 2);
}

TEST_CASE("a weight beyond 16 bits stops the run with exit 2, naming its neuron") {
    scratch_dir dir;
    const auto doc = (dir.path / "large.xml").string();
    std::ofstream(doc) << R"(<dnnc xmlns="urn:dnnc:1"><network name="large">
        <population id="P" size="100" model="iaf_psc_exp"/>
        <projection from="P" to="P" kind="random" p="0.1" seed="1"><weight distribution="normal" mean="60000" std="3000"/></projection>
      </network><run weight-precision="half"/></dnnc>)";
    const auto r = run_command(dnnc_binary() + " run " + doc + " --nodes 2 --ticks 10");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("into neuron ") && Catch::Contains("does not fit 16 bits"));
}

TEST_CASE("half weights with plastic synapses are refused before anything runs") {
    const auto r = run_command(dnnc_binary() + " run " + source_path("tests/data/bad/plastic_half_weights.xml") + " --nodes 1 --ticks 10");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("plastic_half_weights.xml:6") && Catch::Contains("need 32-bit weights"));
}
