// Own weights held by the fan-out alone: while every tick takes the sparse path, the synapse
// store lets its copy of the synapses' own weights go (the compact fan-out entries hold
// each one), and takes them back, the same values, when rows must read them: incoming(),
// a tick too busy for the sparse path (from then on the rows keep them), new delays (the
// transition reads the old store's rows).
#include "lane_outputs.hpp"
#include "own_weight_rows.hpp"
#include "share_cluster.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <thread>
#include <vector>

using namespace dnnc;
using namespace dnnc::sim;

namespace {

// 600 relu neurons (bias -1.5: silent without input) with rows of own weights.
engine_spec own_weights() {
    const auto doc = protocol::parse_document(R"(<dnnc xmlns="urn:dnnc:1"><network name="g">
        <population id="P" size="600" model="relu" bias="-1.5"/></network></dnnc>)", "g.xml");
    auto spec = whole_network(model::expand(*doc.net, "g.xml"));
    spec.history = 4;
    std::mt19937 gen(12);
    test::add_own_weight_rows(spec, gen);
    return spec;
}

}  // namespace

TEST_CASE("the store lets own weights go while the fan-out holds them, and incoming() gets them back unchanged") {
    auto spec = own_weights();
    for (const bool half : {false, true}) {
        INFO((half ? "half" : "single") << " weights");
        spec.half_weights = half;
        // Two lanes take no sparse path: their rows keep the weights as built.
        auto lanes = spec;
        lanes.batch = 2;
        const engine e(spec), kept(lanes);
        const auto released = e.synapse_bytes();
        for (std::size_t k = 0; k < 600; ++k) {
            const auto in = e.incoming(static_cast<global_index>(k)), as_built = kept.incoming(static_cast<global_index>(k));
            REQUIRE(in.size() == spec.in_begin[k + 1] - spec.in_begin[k]);
            REQUIRE(as_built.size() == in.size());
            for (std::size_t j = 0; j < in.size(); ++j) {
                const auto& given = spec.in[spec.in_begin[k] + j];
                REQUIRE(in[j].source == given.source);
                REQUIRE(in[j].weight == as_built[j].weight);
                if (!half) REQUIRE(in[j].weight == given.weight);
                REQUIRE(in[j].delay == given.delay);
            }
        }
        // The rows' copy is 4 bytes a synapse, 2 with half weights.
        CHECK(e.synapse_bytes() == released + (half ? 2 : 4) * e.synapse_count());
    }
}

TEST_CASE("a tick too busy for the sparse path takes the weights back into the rows, with the lanes path's bits before and after") {
    auto spec = own_weights();
    // A few neurons driven each tick (sparse), and at tick 150 all of them (dense: more
    // active sources than the sparse path's limit, so the rows add that tick's terms).
    std::vector<test::lane_input> drive;
    std::mt19937 gen(5);
    const int ticks = 300;
    for (int t = 0; t < ticks; ++t)
        for (int k = 0; k < 4; ++k) drive.push_back({static_cast<global_index>(gen() % 600), t, 3.1f, engine::all_lanes});
    for (std::size_t i = 0; i < 600; ++i) drive.push_back({static_cast<global_index>(i), 150, 2.0f, engine::all_lanes});
    for (const bool half : {false, true}) {
        INFO((half ? "half" : "single") << " weights");
        spec.half_weights = half;
        const auto lanes = test::lane_outputs(spec, 2, ticks, drive);

        engine e(spec);
        for (const auto& in : drive) e.add_input(in.neuron, in.tick, in.value, in.lane);
        const auto released = e.synapse_bytes();
        std::size_t differ = 0, busiest = 0;
        for (int t = 0; t < ticks; ++t) {
            e.compute();
            std::size_t active = 0;
            for (std::size_t i = 0; i < 600; ++i) {
                const float y = e.output(static_cast<global_index>(i));
                active += y != 0.0f;
                differ += y != lanes[static_cast<std::size_t>(t)][2 * i];
            }
            busiest = std::max(busiest, active);
            // The rows hold no weights until tick 151 reads the busy tick's outputs (the shortest
            // delay is 1); from then on they keep them.
            if (t < 151) REQUIRE(e.synapse_bytes() == released);
            if (t >= 151) REQUIRE(e.synapse_bytes() == released + (half ? 2 : 4) * e.synapse_count());
        }
        CHECK(differ == 0);
        // Busier than the sparse path's limit (a quarter of the neurons, sparse_path::limit).
        CHECK(busiest > 150);
    }
}

TEST_CASE("new delays while own weights are released: the transition reads the weights, 1 and 3 engines give the same bits") {
    // Spike sources into a recurrent population whose synapses draw weights and delays.
    auto recurrent = [](const std::string& delay_max) {
        return *protocol::parse_document(R"(<dnnc xmlns="urn:dnnc:1"><network name="d" dt="0.1">
            <spike-source id="S" size="4"><spike index="0" t-ms="1"/><spike index="1" t-ms="4.3"/><spike index="2" t-ms="9.1"/>
              <spike index="3" t-ms="14"/><spike index="0" t-ms="21.2"/><spike index="2" t-ms="27.5"/></spike-source>
            <population id="P" size="40" model="iaf_psc_exp" seed="3" I_e="380" v-init="-70" v-init-max="-56"/>
            <projection from="S" to="P" kind="all" seed="2"><weight distribution="uniform" min="40" max="80"/></projection>
            <projection from="P" to="P" kind="random" p="0.15" seed="5"><weight distribution="normal" mean="-12" std="4"/>
              <delay distribution="uniform" min="0.2" max=")" + delay_max + R"("/></projection></network></dnnc>)", "d.xml").net;
    };
    const auto before = recurrent("1.3"), after = recurrent("0.6");
    std::vector<std::vector<float>> rows[2];
    for (const std::size_t nodes : {1, 3}) {
        test::cluster c(before, test::scatter(44, nodes, 11), nodes);
        for (tick_t t = 0; t < 400; ++t) {
            if (t == 200)
                for (auto& e : c.engines()) e.set_synapses(after, {});
            rows[nodes == 3].push_back(c.tick());
        }
        // Released again once the transition is over: the rows' copy comes back for incoming().
        auto& e = c.engines().front();
        const auto released = e.synapse_bytes();
        e.incoming(e.spec().neurons.front().index);
        CHECK(e.synapse_bytes() == released + 4 * e.synapse_count());
    }
    std::size_t spikes = 0;
    for (const auto& row : rows[0]) spikes += static_cast<std::size_t>(std::count(row.begin() + 4, row.end(), 1.0f));
    CHECK(rows[0] == rows[1]);
    CHECK(spikes > 20);
}

// incoming() is const, so callers may read rows from several threads at once (bench_roofline
// does): the first call takes the weights back, the others wait for it rather than writing
// the same rows alongside it (which crashed).
TEST_CASE("incoming() called from several threads at once takes the weights back once, with the same synapses") {
    const auto spec = own_weights();
    for (int round = 0; round < 20; ++round) {
        const engine shared(spec), alone(spec);
        std::vector<std::vector<std::vector<synapse_spec>>> seen(8);
        std::vector<std::thread> readers;
        for (auto& rows : seen)
            readers.emplace_back([&shared, &rows] {
                for (global_index k = 0; k < 600; ++k) rows.push_back(shared.incoming(k));
            });
        for (auto& r : readers) r.join();
        for (const auto& rows : seen)
            for (global_index k = 0; k < 600; ++k) {
                const auto expected = alone.incoming(k);
                const auto& got = rows[static_cast<std::size_t>(k)];
                REQUIRE(std::equal(got.begin(), got.end(), expected.begin(), expected.end(), [](const synapse_spec& a, const synapse_spec& b) {
                    return a.source == b.source && a.weight == b.weight && a.delay == b.delay;
                }));
            }
    }
}
