// The ac and noise current generators and Poisson spike sources: values that are functions
// of (generator, neuron, tick) alone, so every partition computes the same bits.
#include "partitioned_outputs.hpp"
#include "dnnc/model/check.hpp"
#include "dnnc/protocol/xml.hpp"
#include "dnnc/core/error.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cmath>

using namespace dnnc;
using namespace dnnc::sim;

namespace {
model::expanded_network network_of(const std::string& body) {
    const auto doc = protocol::parse_document("<dnnc xmlns=\"urn:dnnc:1\"><network name=\"g\" dt=\"0.1\">" + body + "</network></dnnc>", "g.xml");
    return model::expand(*doc.net, "g.xml");
}

std::vector<std::vector<float>> outputs(const model::expanded_network& net, int ticks, std::size_t nodes = 1) {
    return testing::partitioned_outputs(net, ticks, nodes);
}
}  // namespace

TEST_CASE("an ac generator adds offset + amplitude * sin(2 pi f t + phase) while start <= t * dt < stop") {
    const auto y = outputs(network_of(R"(<neuron id="a"/><ac to="a" amplitude="2" frequency="50" phase="90" offset="0.5" start="1" stop="3"/>)"), 40);
    for (int t = 0; t < 40; ++t) {
        INFO("tick " << t);
        const double time = t * 0.1;
        const bool on = 1 <= time && time < 3;
        const float expected = on ? static_cast<float>(0.5 + 2 * std::sin(2 * M_PI * 50 * 0.1 / 1000 * t + M_PI / 2)) : 0.0f;
        CHECK(y[static_cast<std::size_t>(t)][0] == expected);
    }
}

TEST_CASE("a noise generator draws mean + std * N(0, 1) per neuron, afresh every dt-ms") {
    const auto y = outputs(network_of(R"(<population id="P" size="400"/><noise to="P" mean="3" std="2" dt-ms="0.5" seed="4"/>)"), 50);
    double sum = 0, squares = 0;
    for (std::size_t t = 0; t < 50; ++t)
        for (std::size_t i = 0; i < 400; ++i) {
            CHECK(y[t][i] == y[t - t % 5][i]);  // constant within an interval of 5 ticks
            if (t % 5 == 0) {
                const double value = y[t][i];
                sum += value;
                squares += value * value;
            }
        }
    const double n = 4000, mean = sum / n, variance = squares / n - mean * mean;
    CHECK(mean == Approx(3).margin(0.1));
    CHECK(std::sqrt(variance) == Approx(2).epsilon(0.05));
    CHECK(y[0][0] != y[0][1]);  // each neuron its own draws
    CHECK(y[0][0] != y[5][0]);
}

TEST_CASE("a Poisson spike source spikes at its members' rates inside its window") {
    const auto y = outputs(network_of(R"(<spike-source id="S" size="3" rate="100 400 0" start="10" stop="1010" seed="2"/>)"), 10200);
    std::array<double, 3> counts{};
    for (std::size_t t = 0; t < y.size(); ++t)
        for (std::size_t i = 0; i < 3; ++i) {
            if (t < 100 || t >= 10100) CHECK(y[t][i] == 0.0f);
            counts[i] += static_cast<double>(y[t][i]);
        }
    CHECK(counts[0] == Approx(100).margin(35));  // 1 s at 100 Hz: sd 10
    CHECK(counts[1] == Approx(400).margin(70));
    CHECK(counts[2] == 0);
}

TEST_CASE("currents and Poisson spike sources give the same bits on 1, 2 and 3 nodes") {
    const auto net = network_of(R"(
        <spike-source id="S" size="50" rate="800" seed="3"/>
        <population id="E" size="120" model="iaf_psc_exp" seed="4" v-init="-70" v-init-std="3"/>
        <projection from="S" to="E" kind="fixed-indegree" indegree="10" weight="200" seed="1"/>
        <projection from="E" to="E" kind="random" p="0.1" weight="30" delay="5" seed="2"/>
        <ac to="E[0:60]" amplitude="150" frequency="20" offset="200"/>
        <noise to="E" mean="100" std="300" dt-ms="1" seed="5"/>
        <dc to="E[30:90]" amplitude="50" start="5"/>)");
    const auto expected = outputs(net, 600);
    int spikes = 0;
    for (const auto& row : expected)
        for (std::size_t i = 50; i < 170; ++i) spikes += row[i] == 1.0f;
    CHECK(spikes > 50);
    for (std::size_t nodes : {2u, 3u}) {
        INFO(nodes << " nodes");
        CHECK(outputs(net, 600, nodes) == expected);
    }
}

TEST_CASE("bad rates, intervals and windows are located errors") {
    auto error_of = [](const std::string& body) {
        try {
            model::check_network(*protocol::parse_document(
                                        "<dnnc xmlns=\"urn:dnnc:1\"><network name=\"g\">" + body + "</network></dnnc>", "g.xml")
                                        .net);
        } catch (const config_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK_THAT(error_of(R"(<spike-source id="S" size="3" rate="1 2"/>)"), Catch::Contains("one value or one per member"));
    CHECK_THAT(error_of(R"(<spike-source id="S" size="3" rate="-1"/>)"), Catch::Contains(">= 0 (Hz)"));
    CHECK_THAT(error_of(R"(<spike-source id="S" size="1" rate="5"><spike t-ms="1" index="0"/></spike-source>)"),
               Catch::Contains("lists no spikes"));
    CHECK_THAT(error_of(R"(<neuron id="a"/><noise to="a" std="1" dt-ms="0.15"/>)"), Catch::Contains("whole number of ticks"));
    CHECK_THAT(error_of(R"(<neuron id="a"/><ac to="a" amplitude="1" frequency="-2"/>)"), Catch::Contains("frequency"));
    CHECK_THAT(error_of(R"(<neuron id="a"/><ac to="a" amplitude="1" frequency="2" start="3" stop="1"/>)"), Catch::Contains("stop"));
}
