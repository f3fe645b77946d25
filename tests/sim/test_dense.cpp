// The dense path (one LibTorch product per tick) against the synapse-by-synapse path on the
// same weights, within 1e-5 relative (float32, CPU; outputs under 0.1 within 1e-6); split
// by rows over nodes, the whole network's bits.
#include "dnnc/sim/runner.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <mutex>
#include <random>

using namespace dnnc;
using namespace dnnc::sim;

namespace {
model::expanded_network network_of(const std::string& body) {
    const auto doc = protocol::parse_document("<dnnc xmlns=\"urn:dnnc:1\"><network name=\"d\">" + body + "</network></dnnc>", "d.xml");
    return model::expand(*doc.net, "d.xml");
}

const char* const layers = R"(<population id="x" size="40" model="linear"/>
    <population id="h" size="30" model="tanh"/><population id="o" size="10" model="sigmoid"/>)";

// The same network with its dense weights written out as explicit synapses, row by row.
model::expanded_network as_synapses(const model::expanded_network& dense) {
    std::string body = layers;
    for (const auto& block : dense.dense)
        for (std::size_t r = 0; r < block.targets.size(); ++r)
            for (std::size_t c = 0; c < block.sources.size(); ++c) {
                char w[32];
                std::snprintf(w, sizeof w, "%.9g", static_cast<double>(block.weights[r * block.sources.size() + c]));
                body += "<synapse from=\"" + dense.neuron_name(block.sources[c]) + "\" to=\"" +
                        dense.neuron_name(block.targets[r]) + "\" weight=\"" + w + "\" delay=\"" +
                        std::to_string(block.delay) + "\"/>";
            }
    return network_of(body);
}

std::vector<std::vector<float>> run(engine& e, int ticks, std::size_t neurons) {
    std::mt19937 gen(4);
    std::uniform_real_distribution<float> value(-1, 1);
    for (int t = 0; t < ticks; ++t)
        for (global_index i = 0; i < 40; ++i) e.add_input(i, t, value(gen));
    std::vector<std::vector<float>> out;
    for (int t = 0; t < ticks; ++t) {
        e.compute();
        std::vector<float> row;
        for (std::size_t i = 0; i < neurons; ++i) row.push_back(e.output(static_cast<global_index>(i)));
        out.push_back(row);
    }
    return out;
}

void check_close(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b, double tolerance) {
    REQUIRE(a.size() == b.size());
    double worst = 0;
    std::size_t worst_t = 0, worst_i = 0;
    for (std::size_t t = 0; t < a.size(); ++t)
        for (std::size_t i = 0; i < a[t].size(); ++i) {
            // Below 0.1 the difference is measured against 0.1: a small sum of larger terms
            // (cancellation) added in another order differs by more than 1e-5 of itself
            // (OpenBLAS keeps several partial sums per row; the synapse path adds in order).
            const double scale = std::max(0.1, static_cast<double>(std::abs(b[t][i])));
            const double d = std::abs(static_cast<double>(a[t][i]) - static_cast<double>(b[t][i])) / scale;
            if (d > worst) worst = d, worst_t = t, worst_i = i;
        }
    INFO("largest relative difference " << worst << " at tick " << worst_t << ", neuron " << worst_i << ": "
                                        << a[worst_t][worst_i] << " against " << b[worst_t][worst_i]);
    CHECK(worst <= tolerance);
}
}  // namespace

TEST_CASE("dense projections equal the synapse path within 1e-5 relative") {
    const auto dense = network_of(std::string(layers) + R"(
        <projection from="x" to="h" kind="dense" init="normal" scale="0.3" seed="5"/>
        <projection from="h" to="o" kind="dense" init="uniform" scale="0.5" seed="6" delay="2"/>)");
    REQUIRE(dense.dense.size() == 2);
    const auto sparse = as_synapses(dense);
    CHECK(sparse.synapse_count() == 40 * 30 + 30 * 10);
    engine a(whole_network(dense)), b(whole_network(sparse));
    check_close(run(a, 25, 80), run(b, 25, 80), 1e-5);
}

TEST_CASE("dense rows split over nodes give the whole network's outputs") {
    const auto net = network_of(std::string(layers) + R"(
        <projection from="x" to="h" kind="dense" init="normal" scale="0.3" seed="5"/>
        <projection from="h" to="o" kind="dense" init="normal" scale="0.5" seed="6"/>
        <projection from="o" to="h" kind="random" p="0.3" weight="0.1" seed="2"/>)");
    engine whole(whole_network(net));
    const auto expected = run(whole, 20, 80);
    std::vector<std::uint32_t> node_of(80);
    for (std::size_t i = 0; i < 80; ++i) node_of[i] = static_cast<std::uint32_t>((i * 7) % 3);
    local_exchange exchange(partition_specs(net, node_of, 3));
    std::vector<std::vector<float>> got(20, std::vector<float>(80));
    std::mutex m;
    for (std::size_t n = 0; n < 3; ++n)
        exchange.observe(n, [&](tick_t t, const engine& e) {
            std::lock_guard<std::mutex> lock(m);
            for (const auto& s : e.spec().neurons) got[static_cast<std::size_t>(t)][static_cast<std::size_t>(s.index)] = e.output(s.index);
        });
    std::mt19937 gen(4);
    std::uniform_real_distribution<float> value(-1, 1);
    for (int t = 0; t < 20; ++t)
        for (global_index i = 0; i < 40; ++i) exchange.add_input(i, t, value(gen));
    exchange.run_until(19);
    check_close(got, expected, 0);  // bit for bit (test_dense_split.cpp: at any row offset)
}

TEST_CASE("dense weights from a file are used as given") {
    const auto net = network_of(R"(<population id="x" size="2"/><population id="y" size="2"/>
        <projection from="x" to="y" kind="dense" init="zeros"/>)");
    auto spec = whole_network(net);
    spec.dense[0].weights = {1, 2, 3, 4};
    engine e(spec);
    e.add_input(0, 0, 1.0f);
    e.add_input(1, 0, 10.0f);
    e.compute();
    e.compute();
    CHECK(e.output(2) == 21.0f);
    CHECK(e.output(3) == 43.0f);
}
