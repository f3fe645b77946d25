// State recording through the command line on real local clusters: `dnnc run --record-file`
// writes the same file on 1 and 3 nodes, holding the values a single engine's neurons have
// at the sampled ticks, in the documented order; a network that samples nothing is a usage
// error.
#include "cluster_fixture.hpp"

#include "dnnc/model/expand.hpp"
#include "dnnc/protocol/csv.hpp"
#include "dnnc/protocol/xml.hpp"
#include "dnnc/sim/engine.hpp"

#include <catch2/catch.hpp>

using namespace dnnc::test;

namespace {

const char* const network = R"(<dnnc xmlns="urn:dnnc:1">
  <network name="rec" dt="0.1">
    <population id="E" size="80" model="iaf_cond_exp" seed="4" I_e="300" v-init="-65" v-init-std="5"/>
    <population id="A" size="20" model="aeif_cond_exp" seed="5" I_e="700" v-init="-65" v-init-std="5"/>
    <population id="Z" size="10" model="izhikevich" seed="6" I_e="8"/>
    <projection from="E" to="E" kind="random" p="0.1" weight="2" seed="1"/>
    <projection from="E" to="A" kind="random" p="0.1" weight="2" seed="3"/>
    <projection from="A" to="E" kind="random" p="0.2" weight="-8" seed="2" delay="2"/>
    <projection from="E" to="Z" kind="random" p="0.1" weight="3" seed="7"/>
    <record neurons="A[5:8]" variables="V_m w"/>
    <record neurons="E[0:10] E[70]" variables="V_m g_ex g_in" interval-ms="1"/>
    <record neurons="Z[2:4]" variables="U_m V_m" interval-ms="0.5"/>
  </network>
</dnnc>
)";

// The rows a single engine gives for `ticks` ticks, in the documented order: by time, then
// neuron (ascending), then each record's variables in its order.
std::string expected_rows(int ticks) {
    const auto doc = dnnc::protocol::parse_document(network, "rec.xml");
    const auto net = dnnc::model::expand(*doc.net, "rec.xml");
    dnnc::sim::engine e(dnnc::sim::whole_network(net));
    struct sampled {
        std::int64_t neuron, every;
        const std::vector<std::string>* variables;
    };
    std::vector<sampled> order;
    for (const auto& s : net.samplings)
        for (auto i : s.neurons) order.push_back({static_cast<std::int64_t>(i), s.every, &s.variables});
    std::sort(order.begin(), order.end(), [](const sampled& a, const sampled& b) { return a.neuron < b.neuron; });
    std::string rows = dnnc::protocol::sample_csv_header();
    // Sample m: the state at time m·dt, m = 0 the initial one.
    for (int m = 0; m <= ticks; ++m) {
        if (m > 0) e.compute();
        for (const auto& s : order) {
            if (m % s.every != 0) continue;
            const auto& g = net.groups[net.group_of[static_cast<std::size_t>(s.neuron)]];
            const auto values = e.variables(s.neuron);
            const auto& names = dnnc::model::recordable_variables(g.params.model);
            for (const auto& v : *s.variables) {
                const auto k = static_cast<std::size_t>(std::find(names.begin(), names.end(), v) - names.begin());
                rows += dnnc::protocol::sample_csv_row(m, 0.1, g.id, s.neuron - static_cast<std::int64_t>(g.first), v, values[k]);
            }
        }
    }
    return rows;
}

}  // namespace

TEST_CASE("dnnc run --record-file writes the sampled variables alike on 1 and 3 nodes, as one engine has them") {
    scratch_dir dir;
    const auto doc = dir.file("rec.xml", network);
    const std::string expected = expected_rows(300);
    // Samples 0..300: 3 A neurons x 2 every tick, 11 E x 3 every 10th tick, 2 Z x 2 every 5th tick
    CHECK(std::count(expected.begin(), expected.end(), '\n') == 1 + 301 * 6 + 31 * 33 + 61 * 4);
    for (const int nodes : {1, 3}) {
        INFO(nodes << " nodes");
        const auto out = (dir.path / ("rec" + std::to_string(nodes) + ".csv")).string();
        const auto r = run_command(dnnc_binary() + " run " + doc + " --nodes " + std::to_string(nodes) + " --ticks 300 --record-file " + out);
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(r.out.find("recorded variables: " + out) != std::string::npos);
        CHECK(slurp(out) == expected);
    }
}

TEST_CASE("dnnc run --record-file on a network that samples nothing is a usage error") {
    scratch_dir dir;
    const auto doc = dir.file("plain.xml", R"(<dnnc xmlns="urn:dnnc:1"><network name="p">
    <population id="E" size="4" model="iaf_cond_exp"/><record neurons="E"/></network></dnnc>)");
    const auto r = run_command(dnnc_binary() + " run " + doc + " --nodes 1 --ticks 10 --record-file " + (dir.path / "r.csv").string());
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--record-file: the network samples no variables") != std::string::npos);
}
