// Poisson and DC generators: counts with the right mean and variance, drawn per (seed,
// neuron, tick) so that generators add up and every partition draws the same spikes; DC
// current on during [start, stop) only.
#include "partitioned_outputs.hpp"
#include "dnnc/protocol/xml.hpp"
#include "dnnc/core/splitmix64.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dnnc;
using namespace dnnc::sim;

namespace {
model::expanded_network network_of(const std::string& body, const char* dt = "0.1") {
    const auto doc = protocol::parse_document(
        std::string("<dnnc xmlns=\"urn:dnnc:1\"><network name=\"g\" dt=\"") + dt + "\">" + body + "</network></dnnc>", "g.xml");
    return model::expand(*doc.net, "g.xml");
}

// Every neuron's output at every tick, from one engine.
std::vector<std::vector<float>> outputs(const model::expanded_network& net, int ticks) {
    engine e(whole_network(net));
    std::vector<std::vector<float>> out;
    for (int t = 0; t < ticks; ++t) {
        e.compute();
        out.emplace_back();
        for (std::size_t i = 0; i < net.neuron_count(); ++i) out.back().push_back(e.output(static_cast<global_index>(i)));
    }
    return out;
}
}  // namespace

TEST_CASE("Poisson counts have the mean and variance rate * dt, small means and large") {
    // A linear neuron's output is its input: the tick's count times the weight 1.
    for (const double mean : {0.02, 0.5, 2.0, 19.5}) {
        INFO("mean " << mean);
        const double rate = mean / 0.1 * 1000;
        const auto net = network_of(R"(<population id="p" size="100"/><poisson to="p" rate=")" + std::to_string(rate) +
                                    R"(" seed="11"/>)");
        const int ticks = 2000;
        const auto y = outputs(net, ticks);
        double sum = 0, squares = 0, zeros = 0;
        for (const auto& row : y)
            for (const float k : row) {
                REQUIRE(k == std::floor(k));
                sum += double{k};
                squares += double{k} * double{k};
                zeros += k == 0;
            }
        const double n = 100.0 * ticks, m = sum / n, variance = squares / n - m * m;
        CHECK(std::abs(m - mean) < 5 * std::sqrt(mean / n));
        // The variance of a sample variance of Poisson(mean) is about (mean + 2 mean^2) / n.
        CHECK(std::abs(variance - mean) < 5 * std::sqrt((mean + 2 * mean * mean) / n));
        const double p0 = std::exp(-mean);
        CHECK(std::abs(zeros / n - p0) < 5 * std::sqrt(p0 * (1 - p0) / n) + 1e-9);
    }
}

TEST_CASE("a Poisson count is the inversion of its distribution function at the neuron's draw of the tick") {
    // The definition, drawn one neuron at a time: neuron i's stream at tick t is
    // splitmix64::at(splitmix64::at(seed, i).next(), t); each part of the mean (at most 4)
    // draws a uniform u and counts the k with u >= P(K <= k). Linear neurons output
    // (0 + excitatory) + inhibitory, each the generators' count * weight in document order.
    // Small and large means (several parts), both signs, overlapping targets, and a
    // population large enough to be drawn in parallel.
    struct generator {
        double rate;
        float weight;
        std::uint64_t seed;
        std::size_t from, to;
    };
    const std::vector<generator> generators = {{200, 1.5f, 21, 0, 150},  {27000, -0.75f, 22, 50, 150},
                                               {93000, 0.3f, 23, 20, 9500}, {5000, 2.25f, 24, 0, 9500},
                                               {41000, -1.25f, 25, 0, 9500}};
    std::string body = R"(<population id="p" size="9500"/>)";
    for (const auto& g : generators)
        body += "<poisson to=\"p[" + std::to_string(g.from) + ":" + std::to_string(g.to) + "]\" rate=\"" +
                std::to_string(static_cast<int>(g.rate)) + "\" weight=\"" + std::to_string(g.weight) + "\" seed=\"" +
                std::to_string(g.seed) + "\"/>";
    auto count = [](double mean, std::uint64_t seed, std::uint64_t i, std::uint64_t t) {
        const std::uint32_t parts = mean > 4 ? static_cast<std::uint32_t>(std::ceil(mean / 4)) : 1;
        const double part = mean / parts;
        std::vector<double> cdf;
        double p = std::exp(-part), c = p;
        cdf.push_back(c);
        for (std::uint32_t k = 1; c < 1 && p > 0; ++k) {
            p *= part / k;
            c += p;
            cdf.push_back(c);
        }
        auto stream = splitmix64::at(splitmix64::at(seed, i).next(), t);
        std::uint32_t n = 0;
        for (std::uint32_t q = 0; q < parts; ++q) {
            const double u = stream.uniform();
            std::uint32_t k = 0;
            while (k < cdf.size() && u >= cdf[k]) ++k;
            n += k;
        }
        return n;
    };
    const int ticks = 40;
    const auto y = outputs(network_of(body), ticks);
    for (int t = 0; t < ticks; ++t)
        for (std::size_t i = 0; i < 9500; ++i) {
            float excitatory = 0, inhibitory = 0;
            for (const auto& g : generators) {
                if (i < g.from || i >= g.to) continue;
                const auto k = count(g.rate * 0.1 / 1000, g.seed, i, static_cast<std::uint64_t>(t));
                if (k != 0) (g.weight >= 0 ? excitatory : inhibitory) += static_cast<float>(k) * g.weight;
            }
            float u = 0;
            u += excitatory;
            u += inhibitory;
            INFO("tick " << t << ", neuron " << i);
            REQUIRE(y[static_cast<std::size_t>(t)][i] == u);
        }
}

TEST_CASE("each neuron has its own train, and generators add up in document order") {
    const char* one = R"(<population id="p" size="2"/><poisson to="p" rate="5000" seed="1"/>)";
    const char* other = R"(<population id="p" size="2"/><poisson to="p[1] p[0]" rate="20000" weight="-1000" seed="2"/>)";
    const char* both = R"(<population id="p" size="2"/><poisson to="p" rate="5000" seed="1"/>
        <poisson to="p[1] p[0]" rate="20000" weight="-1000" seed="2"/>)";
    const auto a = outputs(network_of(one), 500), b = outputs(network_of(other), 500), ab = outputs(network_of(both), 500);
    int differ = 0;
    for (int t = 0; t < 500; ++t) {
        differ += a[t][0] != a[t][1];
        for (int i = 0; i < 2; ++i) CHECK(ab[t][i] == a[t][i] + b[t][i]);
    }
    CHECK(differ > 100);
}

TEST_CASE("a Poisson generator's weight feeds a spiking model's sum by its sign") {
    const auto net = network_of(R"(<neuron id="n" model="iaf_psc_exp"/><poisson to="n" rate="20000" weight="-30" seed="4"/>)");
    engine e(whole_network(net));
    for (int t = 0; t < 50; ++t) e.compute();
    const auto s = e.capture()[0].variables;  // V_m, i_syn_ex, i_syn_in, refractory
    CHECK(s[1] == 0.0f);
    CHECK(s[2] < -30.0f);
    CHECK(s[0] < -70.0f);
}

TEST_CASE("a DC generator adds its amplitude while start <= t * dt < stop") {
    const auto y = outputs(network_of(R"(<neuron id="a" bias="1"/><neuron id="b" model="relu"/>
        <dc to="a b" amplitude="2.5" start="1" stop="2"/><dc to="b" amplitude="-1" start="1.5"/>)", "0.25"),
                           12);
    for (int t = 0; t < 12; ++t) {
        INFO("tick " << t);
        const bool on = t >= 4 && t < 8, late = t >= 6;
        CHECK(y[t][0] == (on ? 3.5f : 1.0f));
        CHECK(y[t][1] == std::max(0.0f, (on ? 2.5f : 0.0f) - (late ? 1.0f : 0.0f)));
    }
}

TEST_CASE("a DC current drives a NEST model exactly as the same I_e does") {
    const auto y = outputs(network_of(R"(<neuron id="i" model="iaf_psc_delta" I_e="1000"/><neuron id="d" model="iaf_psc_delta"/>
        <dc to="d" amplitude="1000"/>)"),
                           600);
    int spikes = 0;
    for (const auto& row : y) {
        CHECK(row[0] == row[1]);
        spikes += row[0] == 1.0f;
    }
    CHECK(spikes > 5);
}

TEST_CASE("generators give the same spikes on 1, 2 and 3 nodes, on every path") {
    // Sparse spiking (psc_delta), a rate population (full path) and a dense projection.
    const auto net = network_of(R"(
        <population id="E" size="160" model="iaf_psc_delta" V_th="-50" V_reset="-60" seed="3" v-init="-70" v-init-std="3"/>
        <population id="I" size="40" model="iaf_psc_exp" seed="4"/>
        <population id="R" size="30" model="tanh"/>
        <projection from="E" to="E" kind="fixed-indegree" indegree="12" weight="0.4" delay="15" seed="1"/>
        <projection from="I" to="E" kind="fixed-indegree" indegree="4" weight="-2" delay="15" seed="2"/>
        <projection from="E" to="I" kind="random" p="0.1" weight="60" seed="5"/>
        <projection from="E" to="R" kind="dense" init="normal" seed="6"/>
        <poisson to="E I" rate="9000" weight="0.9" seed="7"/>
        <poisson to="E[0:80]" rate="3000" weight="-0.5" seed="8"/>
        <poisson to="I" rate="15000" weight="50" seed="9"/>
        <poisson to="R" rate="100" weight="0.25" seed="10"/>
        <dc to="E[40:120] R" amplitude="30" start="5" stop="20"/>)");
    const int ticks = 400;
    const auto expected = outputs(net, ticks);
    int spikes = 0;
    for (const auto& row : expected)
        for (std::size_t i = 0; i < 200; ++i) spikes += row[i] == 1.0f;
    CHECK(spikes > 100);
    for (std::size_t nodes : {1u, 2u, 3u}) {
        INFO(nodes << " nodes");
        CHECK(testing::partitioned_outputs(net, ticks, nodes) == expected);
    }
}
