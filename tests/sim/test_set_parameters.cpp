// New parameters between ticks (engine::set_parameters): the states carry over, and a run
// whose dc amplitude changes at tick T gives the bits of a network whose one dc generator
// stops at T and another starts there.
#include "dnnc/core/error.hpp"
#include "dnnc/protocol/xml.hpp"
#include "dnnc/sim/engine.hpp"

#include <catch2/catch.hpp>

using namespace dnnc;
using namespace dnnc::sim;

namespace {
model::expanded_network network_of(const std::string& body) {
    const auto doc = protocol::parse_document(
        "<dnnc xmlns=\"urn:dnnc:1\"><network name=\"s\" dt=\"0.1\">"
        "<population id=\"E\" size=\"30\" model=\"iaf_cond_exp\" seed=\"3\" v-init=\"-65\" v-init-std=\"4\"/>"
        "<projection from=\"E\" to=\"E\" kind=\"random\" p=\"0.2\" weight=\"3\" seed=\"1\"/>" +
            body + "</network></dnnc>",
        "s.xml");
    return model::expand(*doc.net, "s.xml");
}

std::vector<model::neuron_params> params_of(const model::expanded_network& net, const engine& e) {
    std::vector<model::neuron_params> params;
    for (const auto& n : e.spec().neurons) params.push_back(net.params_of(static_cast<model::neuron_index>(n.index)));
    return params;
}

std::vector<float> voltages(const engine& e) {
    std::vector<float> v;
    for (const auto& n : e.spec().neurons) v.push_back(e.variables(n.index)[0]);
    return v;
}
}  // namespace

TEST_CASE("a dc amplitude set at tick T runs as a dc that stops at T beside one that starts there") {
    const auto before = network_of(R"(<dc to="E" amplitude="300"/>)");
    const auto after = network_of(R"(<dc to="E" amplitude="700"/>)");
    const auto reference = network_of(R"(<dc to="E" amplitude="300" stop="20"/><dc to="E" amplitude="700" start="20"/>)");
    engine updated(whole_network(before)), expected(whole_network(reference));
    for (int t = 0; t < 500; ++t) {
        if (t == 200) updated.set_parameters(params_of(after, updated), after.drive);
        updated.compute();
        expected.compute();
        REQUIRE(updated.spiked() == expected.spiked());
        REQUIRE(voltages(updated) == voltages(expected));
    }
    CHECK(updated.spec().generators.currents.front().spec.amplitude == 700);
}

TEST_CASE("new neuron parameters change the dynamics from the next tick on, the state carried over") {
    const auto before = network_of(R"(<dc to="E" amplitude="300"/>)");
    auto changed = network_of(R"(<dc to="E" amplitude="300"/>)");
    for (auto& g : changed.groups) g.params.iaf.v_th = -60;
    engine a(whole_network(before)), b(whole_network(before));
    for (int t = 0; t < 100; ++t) {
        a.compute();
        b.compute();
    }
    const auto state = voltages(b);
    b.set_parameters(params_of(changed, b), changed.drive);
    CHECK(voltages(b) == state);
    CHECK(b.next_tick() == 100);
    std::size_t spikes_a = 0, spikes_b = 0;
    for (int t = 0; t < 400; ++t) {
        a.compute();
        b.compute();
        spikes_a += a.spiked().size();
        spikes_b += b.spiked().size();
    }
    CHECK(spikes_b > spikes_a);  // a lower threshold
}

TEST_CASE("new parameters may not change a neuron's model or tau_minus, nor the neuron count") {
    const auto net = network_of("");
    engine e(whole_network(net));
    auto params = params_of(net, e);
    auto other_model = params;
    other_model[3].model = model::neuron_model::iaf_psc_exp;
    CHECK_THROWS_WITH(e.set_parameters(other_model, net.drive), Catch::Contains("model or tau_minus"));
    auto other_tau = params;
    other_tau[0].tau_minus = 30;
    CHECK_THROWS_AS(e.set_parameters(other_tau, net.drive), usage_error);
    params.pop_back();
    CHECK_THROWS_WITH(e.set_parameters(params, net.drive), Catch::Contains("new parameters for 29 neurons"));
}
