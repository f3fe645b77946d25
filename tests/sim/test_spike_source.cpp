// Spike sources: a member puts out, at each tick, the number of its spikes listed for that
// tick and nothing else; its spikes reach targets like any neuron's, are listed by spiked(),
// and every partition computes the same bits, also in a batched engine (every lane alike).
#include "dnnc/sim/runner.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

#include <mutex>
#include <random>

using namespace dnnc;
using namespace dnnc::sim;

namespace {

model::expanded_network network_of(const std::string& body) {
    const auto doc = protocol::parse_document("<dnnc xmlns=\"urn:dnnc:1\"><network name=\"s\">" + body + "</network></dnnc>", "s.xml");
    return model::expand(*doc.net, "s.xml");
}

using trace = std::vector<std::vector<float>>;  // per tick, every neuron's output

trace run_whole(const model::expanded_network& net, int ticks, std::uint32_t batch = 1, std::uint32_t lane = 0) {
    auto spec = whole_network(net);
    spec.batch = batch;
    engine e(spec);
    trace out;
    for (int t = 0; t < ticks; ++t) {
        e.compute();
        out.emplace_back();
        for (std::size_t i = 0; i < net.neuron_count(); ++i) out.back().push_back(e.output(static_cast<global_index>(i), lane));
    }
    return out;
}

// 40 sources with random spikes (some listed twice) driving 200 lif neurons, which also
// excite each other.
std::string random_sources() {
    std::mt19937 gen(5);
    std::string spikes;
    for (int k = 0; k < 600; ++k)
        spikes += "<spike t-ms=\"" + std::to_string(static_cast<double>(gen() % 3800) / 100) + "\" index=\"" + std::to_string(gen() % 40) + "\"/>";
    return R"(<spike-source id="S" size="40">)" + spikes + R"(</spike-source>
        <population id="P" size="200" model="lif" seed="3" v-init="-60" v-init-max="-50"/>
        <projection from="S" to="P" kind="random" p="0.3" weight="6" delay="2" seed="1"/>
        <projection from="P" to="P" kind="random" p="0.05" weight="1.5" seed="2"/>)";
}

}  // namespace

TEST_CASE("a spike source puts out the count of its spikes listed for each tick and a target reads it after the delay") {
    const auto net = network_of(R"(<spike-source id="s" size="2">
          <spike t-ms="0.3" index="1"/><spike t-ms="0" index="0"/><spike t-ms="0.3" index="1"/><spike t-ms="0.45" index="0"/>
        </spike-source>
        <neuron id="sum" model="linear"/>
        <synapse from="s[0]" to="sum" weight="2" delay="3"/>
        <synapse from="s[1]" to="sum" weight="-1" delay="1"/>)");
    const auto y = run_whole(net, 10);
    const auto s0 = *net.find("s[0]"), s1 = *net.find("s[1]"), sum = *net.find("sum");
    // s[0] spikes at ticks 0 and 5 (4.5 rounds half up), s[1] twice at tick 3.
    for (int t = 0; t < 10; ++t) {
        INFO("tick " << t);
        CHECK(y[t][s0] == (t == 0 || t == 5 ? 1.0f : 0.0f));
        CHECK(y[t][s1] == (t == 3 ? 2.0f : 0.0f));
        const float expected = (t >= 3 ? 2 * y[t - 3][s0] : 0.0f) + (t >= 1 ? -y[t - 1][s1] : 0.0f);
        CHECK(y[t][sum] == expected);
    }
    CHECK(y[4][sum] == -2.0f);
    CHECK(y[8][sum] == 2.0f);
}

TEST_CASE("spiked() lists the sources that spike and every partition and lane computes the same bits") {
    const auto net = network_of(random_sources());
    const int ticks = 400;
    const auto reference = run_whole(net, ticks);
    std::size_t source_spikes = 0, target_spikes = 0;
    for (const auto& row : reference) {
        for (std::size_t i = 0; i < 40; ++i) source_spikes += row[i] != 0.0f;
        for (std::size_t i = 40; i < row.size(); ++i) target_spikes += row[i] != 0.0f;
    }
    CHECK(source_spikes > 400);
    CHECK(target_spikes > 100);

    {
        engine e(whole_network(net));
        for (int t = 0; t < 50; ++t) {
            e.compute();
            for (global_index i = 0; i < 40; ++i) {
                const bool listed = std::find(e.spiked().begin(), e.spiked().end(), i) != e.spiked().end();
                REQUIRE(listed == (e.output(i) != 0.0f));
            }
        }
    }
    CHECK(run_whole(net, ticks, 3, 2) == reference);

    for (std::size_t nodes : {2u, 3u}) {
        INFO(nodes << " nodes");
        std::vector<std::uint32_t> node_of(net.neuron_count());
        for (std::size_t i = 0; i < node_of.size(); ++i) node_of[i] = static_cast<std::uint32_t>((i * 7 + i / 13) % nodes);
        local_exchange exchange(partition_specs(net, node_of, nodes));
        trace seen(ticks, std::vector<float>(net.neuron_count()));
        std::mutex m;
        for (std::size_t n = 0; n < nodes; ++n)
            exchange.observe(n, [&](tick_t t, const engine& e) {
                std::lock_guard<std::mutex> lock(m);
                for (const auto& s : e.spec().neurons) seen[static_cast<std::size_t>(t)][static_cast<std::size_t>(s.index)] = e.output(s.index);
            });
        exchange.run_until(ticks - 1);
        CHECK(seen == reference);
    }
}
