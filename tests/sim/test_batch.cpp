// Batched runs: every lane of a batched engine computes exactly what a run of its own with
// that lane's inputs computes, alone or partitioned over in-process nodes; dense
// projections run all lanes as one matrix-matrix product.
#include "lane_outputs.hpp"
#include "own_weight_rows.hpp"
#include "dnnc/sim/runner.hpp"
#include "dnnc/core/error.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <random>

#include <tbb/task_arena.h>

using namespace dnnc;
using namespace dnnc::sim;

namespace {

using input = test::lane_input;
using trace = test::lane_trace;  // outputs[tick][neuron * lanes + lane]

model::expanded_network generated(const std::string& body) {
    const auto doc = protocol::parse_document("<dnnc xmlns=\"urn:dnnc:1\"><network name=\"g\">" + body + "</network></dnnc>", "g.xml");
    return model::expand(*doc.net, "g.xml");
}

// Inputs for every lane, some of them for all lanes at once.
std::vector<input> random_inputs(std::size_t neurons, int ticks, std::uint32_t lanes, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> value(-1, 2);
    std::vector<input> inputs;
    for (int k = 0; k < ticks * 4; ++k)
        inputs.push_back({static_cast<global_index>(gen() % neurons), static_cast<tick_t>(gen() % static_cast<unsigned>(ticks)),
                          value(gen), k % 5 == 0 ? engine::all_lanes : static_cast<std::int64_t>(gen() % lanes)});
    return inputs;
}

trace batched(const engine_spec& spec, std::uint32_t lanes, int ticks, const std::vector<input>& inputs) {
    return test::lane_outputs(spec, lanes, ticks, inputs);
}

trace batched(const model::expanded_network& net, std::uint32_t lanes, int ticks, const std::vector<input>& inputs) {
    return batched(whole_network(net), lanes, ticks, inputs);
}

// Lane by lane, each an unbatched run with that lane's inputs.
trace lane_by_lane(const model::expanded_network& net, std::uint32_t lanes, int ticks, const std::vector<input>& inputs) {
    const std::size_t n = net.neuron_count();
    trace out(static_cast<std::size_t>(ticks), std::vector<float>(n * lanes));
    for (std::uint32_t lane = 0; lane < lanes; ++lane) {
        engine e(whole_network(net));
        for (const auto& in : inputs)
            if (in.lane == engine::all_lanes || in.lane == lane) e.add_input(in.neuron, in.tick, in.value);
        for (int t = 0; t < ticks; ++t) {
            e.compute();
            for (std::size_t i = 0; i < n; ++i) out[static_cast<std::size_t>(t)][i * lanes + lane] = e.output(static_cast<global_index>(i));
        }
    }
    return out;
}

trace distributed(const model::expanded_network& net, std::uint32_t lanes, std::size_t nodes, int ticks,
                  const std::vector<input>& inputs, runner_options options) {
    std::mt19937 gen(11);
    std::vector<std::uint32_t> node_of(net.neuron_count());
    for (auto& v : node_of) v = static_cast<std::uint32_t>(gen() % nodes);
    auto specs = partition_specs(net, node_of, nodes);
    for (auto& s : specs) s.batch = lanes;
    local_exchange exchange(std::move(specs), options);
    trace out(static_cast<std::size_t>(ticks), std::vector<float>(net.neuron_count() * lanes));
    std::mutex m;
    for (std::size_t v = 0; v < nodes; ++v)
        exchange.observe(v, [&](tick_t t, const engine& e) {
            std::lock_guard<std::mutex> lock(m);
            for (const auto& s : e.spec().neurons)
                for (std::uint32_t lane = 0; lane < lanes; ++lane)
                    out[static_cast<std::size_t>(t)][static_cast<std::size_t>(s.index) * lanes + lane] = e.output(s.index, lane);
        });
    for (const auto& in : inputs) exchange.add_input(in.neuron, in.tick, in.value, in.lane);
    exchange.run_until(ticks - 1);
    return out;
}

const char* const mixed_network = R"(<population id="P" size="120" model="lif" seed="3" v-init="-60" v-init-max="-50" refractory="5"/>
    <population id="R" size="80" model="tanh" bias="0.1"/>
    <projection from="P" to="P" kind="random" p="0.1" weight="1.6" seed="1"/>
    <projection from="P[0:30]" to="P" kind="random" p="0.1" weight="-9" delay="2" seed="2"/>
    <projection from="R" to="P" kind="random" p="0.05" weight="4" delay="3" seed="5"/>
    <projection from="P" to="R" kind="random" p="0.1" weight="0.5" seed="6"/>
    <projection from="R" to="R" kind="random" p="0.05" weight="-0.4" delay="2" seed="7"/>
    <population id="N" size="40" model="iaf_psc_exp" seed="8" v-init="-65" v-init-std="4"/>
    <projection from="P" to="N" kind="random" p="0.1" weight="80" seed="9"/>
    <poisson to="N" rate="16000" weight="40" seed="10"/>
    <poisson to="P[0:60]" rate="2000" weight="-2" seed="11"/>
    <poisson to="R[0:10]" rate="500" weight="0.3" seed="12"/>
    <dc to="N R[5:15]" amplitude="200" start="1" stop="4"/>)";

}  // namespace

TEST_CASE("every lane of a batched engine equals its own unbatched run bit for bit") {
    const auto net = generated(mixed_network);
    const std::uint32_t lanes = 5;
    const int ticks = 60;
    // The lif population starts below threshold: inputs push lanes apart.
    auto inputs = random_inputs(net.neuron_count(), ticks, lanes, 21);
    for (std::uint32_t lane = 0; lane < lanes; ++lane)
        for (int t = 0; t < ticks; t += 3) inputs.push_back({static_cast<global_index>(lane * 7), t, 30.0f, lane});
    const auto expected = lane_by_lane(net, lanes, ticks, inputs);
    CHECK(batched(net, lanes, ticks, inputs) == expected);
    // The lanes really differ.
    bool differ = false;
    for (const auto& row : expected)
        for (std::size_t i = 0; i + 1 < row.size() && !differ; i += lanes) differ = row[i] != row[i + 1];
    CHECK(differ);
}

TEST_CASE("batched lockstep on several nodes equals the batched reference bit for bit") {
    const auto net = generated(mixed_network);
    const std::uint32_t lanes = 3;
    const int ticks = 40;
    const auto inputs = random_inputs(net.neuron_count(), ticks, lanes, 5);
    const auto expected = batched(net, lanes, ticks, inputs);
    for (std::size_t nodes : {2u, 3u}) {
        for (auto send : {model::send_mode::always, model::send_mode::nonzero}) {
            INFO(nodes << " nodes, send " << model::to_string(send));
            CHECK(distributed(net, lanes, nodes, ticks, inputs, {model::sync_mode::lockstep, send}) == expected);
        }
    }
}

TEST_CASE("a batched dense projection runs every lane as one product, within 1e-5 of lane-by-lane") {
    const auto net = generated(R"(<population id="x" size="64" model="linear"/>
        <population id="h" size="48" model="relu" bias="0.05"/>
        <population id="y" size="10" model="sigmoid"/>
        <projection from="x" to="h" kind="dense" init="normal" seed="1" scale="0.2"/>
        <projection from="h" to="y" kind="dense" init="uniform" seed="2" scale="0.3"/>)");
    const std::uint32_t lanes = 16;
    const int ticks = 6;
    std::vector<input> inputs;
    std::mt19937 gen(3);
    std::uniform_real_distribution<float> value(0, 1);
    for (std::uint32_t lane = 0; lane < lanes; ++lane)
        for (global_index i = 0; i < 64; ++i) inputs.push_back({i, 0, value(gen), lane});
    const auto got = batched(net, lanes, ticks, inputs);
    const auto expected = lane_by_lane(net, lanes, ticks, inputs);
    for (std::size_t t = 0; t < got.size(); ++t)
        for (std::size_t k = 0; k < got[t].size(); ++k) {
            INFO("tick " << t << " value " << k);
            CHECK(std::abs(got[t][k] - expected[t][k]) <= 1e-5f * std::max(1.0f, std::abs(expected[t][k])));
        }
    // The output layer sees the pattern two ticks later, and the patterns differ.
    CHECK(got[2][(112 + 3) * lanes] != got[2][(112 + 3) * lanes + 1]);
}

TEST_CASE("batched engines refuse lanes out of range and snapshots") {
    const auto net = generated(mixed_network);
    auto spec = whole_network(net);
    spec.batch = 4;
    engine e(spec);
    CHECK(e.batch() == 4);
    CHECK_THROWS_AS(e.add_input(0, 0, 1.0f, 4), usage_error);
    CHECK_THROWS_AS(e.add_input(0, 0, 1.0f, -2), usage_error);
    CHECK_THROWS_AS(e.output(0, 4), usage_error);
    CHECK_THROWS_WITH(e.capture(), Catch::Contains("batched"));
    spec.batch = 0;
    CHECK_THROWS_AS(engine(spec), usage_error);
}

TEST_CASE("the sparse path adds every sum's terms in canonical order, as the lanes path does") {
    // Sparse activity (relu below its bias), terms of different sizes, several into each
    // driven neuron per tick: adding three or more in another order changes the last bit.
    const auto net = generated(R"(<population id="P" size="400" model="relu" bias="-1.5"/>
        <projection from="P" to="P" kind="random" p="0.1" weight="0.25" seed="1"/>
        <projection from="P" to="P" kind="random" p="0.1" weight="0.0113" seed="2"/>
        <projection from="P" to="P" kind="random" p="0.1" weight="-0.9" delay="2" seed="3"/>)");
    const int ticks = 300;
    std::vector<input> drive;
    std::mt19937 gen(8);
    for (int t = 0; t < ticks; ++t)
        for (int k = 0; k < 20; ++k) drive.push_back({static_cast<global_index>(gen() % 400), t, 3.1f, engine::all_lanes});
    const auto lanes = batched(net, 2, ticks, drive);  // every tick sums every synapse in order
    const auto sparse = batched(net, 1, ticks, drive);  // sums only the active sources' synapses
    std::size_t active = 0;
    for (std::size_t t = 0; t < sparse.size(); ++t)
        for (std::size_t i = 0; i < 400; ++i) {
            active += sparse[t][i] != 0.0f;
            REQUIRE(sparse[t][i] == lanes[t][2 * i]);
        }
    CHECK(active > 20 * ticks / 2);
    CHECK(active < 400 * ticks / 8);  // sparse enough for the sparse path
}

TEST_CASE("the sparse path adds the terms of lif sums that are not in order in canonical order, as the lanes path does") {
    // Each projection split in two and listed upper half first: no lif sum gets its terms in
    // (delay, source) order, most ticks bring one term to a sum, some bring several.
    const auto net = generated(R"(<population id="P" size="1000" model="lif" seed="5" v-init="-60" v-init-max="-50" refractory="50"/>
        <projection from="P[400:800]" to="P" kind="random" p="0.05" weight="1.62" seed="1"/>
        <projection from="P[0:400]" to="P" kind="random" p="0.05" weight="1.62" seed="2"/>
        <projection from="P[900:1000]" to="P" kind="random" p="0.05" weight="-9" seed="3"/>
        <projection from="P[800:900]" to="P" kind="random" p="0.05" weight="-9" delay="2" seed="4"/>
        <projection from="P[800:900]" to="P" kind="random" p="0.05" weight="-9" seed="6"/>)");
    const int ticks = 400;
    std::vector<input> drive;
    std::mt19937 gen(9);
    for (int t = 0; t < ticks; ++t)
        for (int k = 0; k < 3; ++k) drive.push_back({static_cast<global_index>(gen() % 1000), t, 40.0f, engine::all_lanes});
    const auto lanes = batched(net, 2, ticks, drive);
    const auto sparse = batched(net, 1, ticks, drive);
    std::size_t active = 0;
    for (std::size_t t = 0; t < sparse.size(); ++t)
        for (std::size_t i = 0; i < 1000; ++i) {
            active += sparse[t][i] != 0.0f;
            REQUIRE(sparse[t][i] == lanes[t][2 * i]);
        }
    CHECK(active > ticks);
    CHECK(active < 1000 * ticks / 50);
}

namespace {

// 500 iaf_psc_exp neurons whose synapses each have their own weight and delay (the
// excitatory ones' delays as `excitatory_delay` draws them), run `ticks` on the sparse path
// and on the lanes path: every tick's outputs must be the same. Returns the spikes.
std::size_t drawn_delays_spikes_on_both_paths(const std::string& excitatory_delay, int ticks) {
    const auto doc = protocol::parse_document(R"(<dnnc xmlns="urn:dnnc:1"><network name="g" dt="0.1">
        <population id="P" size="500" model="iaf_psc_exp" seed="3" v-init="-65" v-init-std="3"/>
        <projection from="P[0:400]" to="P" kind="fixed-total-number" n="20000" seed="1">
          <weight distribution="normal" mean="90" std="20" min="0"/>
          )" + excitatory_delay + R"(
        </projection>
        <projection from="P[400:500]" to="P" kind="fixed-total-number" n="5000" seed="2">
          <weight distribution="normal" mean="-400" std="40" max="0"/>
          <delay distribution="normal" mean="0.75" std="0.5" min="0.05"/>
        </projection>
        <poisson to="P" rate="6000" weight="90" seed="5"/>
      </network></dnnc>)",
                                              "g.xml");
    const auto net = model::expand(*doc.net, "g.xml");
    const auto lanes = batched(net, 2, ticks, {});
    const auto sparse = batched(net, 1, ticks, {});
    std::size_t spikes = 0;
    for (std::size_t t = 0; t < sparse.size(); ++t)
        for (std::size_t i = 0; i < 500; ++i) {
            spikes += sparse[t][i] != 0.0f;
            REQUIRE(sparse[t][i] == lanes[t][2 * i]);
        }
    return spikes;
}

}  // namespace

TEST_CASE("the sparse path gives the lanes path's spikes for drawn weights and dozens of drawn delays") {
    // As the microcircuit: every synapse its own weight and delay (1 to about 40 ticks), so a
    // source's synapses of one delay are a range found in its delay directory.
    const int ticks = 600;
    const std::size_t spikes = drawn_delays_spikes_on_both_paths(R"(<delay distribution="normal" mean="1.5" std="1.2" min="0.05"/>)", ticks);
    CHECK(spikes > 500);
    CHECK(spikes < 500 * ticks / 40);
}

TEST_CASE("the sparse path gives the lanes path's spikes for drawn delays that span more than 255 ticks") {
    // Delays of 0.1 to 40 ms at dt 0.1 ms: a node's delays then span more than 255 ticks, so
    // the delays that placing the fan-out keeps for its sort take two bytes each, not one.
    const int ticks = 900;
    const std::size_t spikes = drawn_delays_spikes_on_both_paths(R"(<delay distribution="normal" mean="12" std="8" min="0.1" max="40"/>)", ticks);
    CHECK(spikes > 500);
    CHECK(spikes < 500 * ticks / 40);
}

TEST_CASE("the sparse path adds Poisson input as the lanes path does, into spiking and rate neurons") {
    // The sparse path's steps add the generators' values to spiking neurons' sums themselves;
    // rate neurons take them into u. Two generators of both signs feed some neurons, some
    // neurons none, and inputs arrive on some ticks (the steps with external input).
    const auto doc = protocol::parse_document(R"(<dnnc xmlns="urn:dnnc:1"><network name="g" dt="0.1">
        <population id="E" size="300" model="iaf_psc_exp" seed="3" v-init="-65" v-init-std="3"/>
        <population id="D" size="100" model="iaf_psc_delta" seed="4" v-init="-65" v-init-std="3"/>
        <population id="R" size="40" model="relu" bias="-20"/>
        <projection from="E" to="E" kind="random" p="0.05" weight="60" delay="2" seed="1"/>
        <projection from="E" to="D" kind="random" p="0.05" weight="0.6" delay="3" seed="5"/>
        <projection from="D" to="E" kind="random" p="0.05" weight="-150" seed="2"/>
        <projection from="E" to="R" kind="random" p="0.1" weight="2.5" seed="6"/>
        <poisson to="E[0:250] D R" rate="6000" weight="90" seed="7"/>
        <poisson to="E[100:300] D[0:50] R[0:20]" rate="3000" weight="-45" seed="8"/>
      </network></dnnc>)",
                                              "g.xml");
    const auto net = model::expand(*doc.net, "g.xml");
    const int ticks = 500;
    std::vector<input> drive;
    std::mt19937 gen(4);
    for (int t = 0; t < ticks; t += 3) drive.push_back({static_cast<global_index>(gen() % 440), t, 350.0f, engine::all_lanes});
    const auto lanes = batched(net, 2, ticks, drive);
    const auto sparse = batched(net, 1, ticks, drive);
    std::size_t spikes = 0, rates = 0;
    for (std::size_t t = 0; t < sparse.size(); ++t)
        for (std::size_t i = 0; i < 440; ++i) {
            (i < 400 ? spikes : rates) += sparse[t][i] != 0.0f;
            REQUIRE(sparse[t][i] == lanes[t][2 * i]);
        }
    CHECK(spikes > 300);
    CHECK(spikes < 400 * ticks / 40);
    CHECK(rates > 100);
}

TEST_CASE("the sparse path gives the lanes path's sums for synapses with weights and delays of their own") {
    // Sources in descending order, so many distinct weights that every synapse keeps its own.
    auto spec = whole_network(generated(R"(<population id="P" size="600" model="relu" bias="-1.5"/>)"));
    spec.history = 4;
    std::mt19937 gen(12);
    test::add_own_weight_rows(spec, gen);
    const int ticks = 300;
    std::vector<input> drive;
    for (int t = 0; t < ticks; ++t)
        for (int k = 0; k < 4; ++k) drive.push_back({static_cast<global_index>(gen() % 600), t, 3.1f, engine::all_lanes});
    const auto lanes = batched(spec, 2, ticks, drive);
    const auto sparse = batched(spec, 1, ticks, drive);
    std::size_t active = 0;
    for (std::size_t t = 0; t < sparse.size(); ++t)
        for (std::size_t i = 0; i < 600; ++i) {
            active += sparse[t][i] != 0.0f;
            REQUIRE(sparse[t][i] == lanes[t][2 * i]);
        }
    CHECK(active > ticks);
    CHECK(active < 600 * ticks / 30);
    // Their fan-out entries are compact (fan_out.hpp): 8 bytes, not 12. 20.6 bytes a synapse
    // with rows, slots and delay directories of 30 synapses each (24.5 with 12-byte entries).
    spec.batch = 1;
    const engine e(spec);
    const double per_synapse = static_cast<double>(e.synapse_bytes()) / static_cast<double>(e.synapse_count());
    INFO("bytes per synapse: " << per_synapse);
    CHECK(per_synapse < 21.5);
}

TEST_CASE("the sparse path split over threads by target range gives the lanes path's sums") {
    // Busy ticks (more fan-out words than sparse_path::split_words) whose sources feed
    // several kinds of sum take their terms on as many threads as the task arena has, each
    // thread for a range of targets, where sums are not all in order (sources visited delay
    // by delay: several classes). Poisson-driven sources S feed linear neurons L, whose
    // output is their sum (every bit of it), through three weights and delays, the longest
    // first in a row (several terms a sum per tick, not in order); some inhibit S (its
    // inhibitory sums in order) and so feed two kinds of sum. 1, 2 and 3 threads give the
    // bits of the lanes path, which reads every synapse, with 32-bit and with half weights.
    const auto doc = protocol::parse_document(R"(<dnnc xmlns="urn:dnnc:1"><network name="g" dt="0.1">
        <population id="S" size="1600" model="iaf_psc_exp" seed="3" v-init="-65" v-init-std="5"/>
        <population id="L" size="400" model="linear"/>
        <projection from="S[0:1200]" to="L" kind="random" p="0.8" weight="0.3" delay="12" seed="1"/>
        <projection from="S[0:600]" to="L" kind="random" p="0.8" weight="0.5" delay="5" seed="4"/>
        <projection from="S[1200:1600]" to="L" kind="random" p="0.8" weight="-0.7" delay="2" seed="2"/>
        <projection from="S[1200:1600]" to="S" kind="random" p="0.5" weight="-8" delay="8" seed="6"/>
        <poisson to="S" rate="6000" weight="90" seed="5"/>
      </network></dnnc>)",
                                              "g.xml");
    const auto net = model::expand(*doc.net, "g.xml");
    const int ticks = 300;
    const bool half = GENERATE(false, true);
    auto spec = whole_network(net);
    spec.half_weights = half;
    const auto lanes = batched(spec, 2, ticks, {});
    for (const int threads : {1, 2, 3}) {
        tbb::task_arena arena(threads);
        arena.execute([&] {
            engine e(spec);
            std::size_t spikes = 0, sums = 0, differ = 0;
            for (int t = 0; t < ticks; ++t) {
                e.compute();
                for (std::size_t i = 0; i < 2000; ++i) {
                    const float y = e.output(static_cast<global_index>(i));
                    (i < 1600 ? spikes : sums) += y != 0.0f;
                    differ += y != lanes[static_cast<std::size_t>(t)][2 * i];
                }
            }
            INFO(threads << " threads, half weights " << half << ": " << spikes << " spikes, " << sums << " non-zero sums, " << e.sparse_path_counts().split_ticks
                         << " ticks split");
            CHECK(differ == 0);
            CHECK(spikes > 3000);
            CHECK(sums > 400 * ticks / 2);
            if (threads == 1) CHECK(e.sparse_path_counts().split_ticks == 0);
            // Several classes: sources by delay, no reads joined (their entries into sums in
            // order carry no synapse to sort them by).
            CHECK(e.sparse_path_counts().joined_reads == 0);
            CHECK(e.sparse_path_counts().unordered_terms > static_cast<std::uint64_t>(ticks) * 100);
            CHECK(e.sparse_path_counts().kind_split_ticks == 0);
            if (threads > 1) CHECK(e.sparse_path_counts().split_ticks > ticks * 3 / 4);
        });
    }
}

TEST_CASE("a source read at several delays in one tick gives its terms in row order, and sums of drawn delays stay in order") {
    // Where every synapse keeps its own weight and delay, the sparse path visits a tick's
    // sources by rank, each with all the delays it is read at (fan_out.hpp, by_source), so
    // drawn delays leave every sum in order. Sources S, active in the ticks they are driven
    // (about every 60 ticks each), reach linear neurons L, whose outputs are their sums to the
    // last bit, through many parallel synapses (800 drawn of 3,000 sources a target) of
    // delays 1 to about 25 ticks: a third of the sources read in a tick are read at two
    // delays or more, and a target's parallel synapses from one then must take their terms in
    // row order, not in delay order. 1, 2 and 3 threads give the bits of the lanes path
    // (one kind of sum, every sum in order: no tick is split).
    const auto doc = protocol::parse_document(R"(<dnnc xmlns="urn:dnnc:1"><network name="g" dt="0.1">
        <population id="S" size="3000" model="relu" bias="-1.5"/>
        <population id="L" size="600" model="linear"/>
        <projection from="S" to="L" kind="fixed-indegree" indegree="800" seed="1">
          <weight distribution="normal" mean="0.3" std="1"/>
          <delay distribution="normal" mean="1" std="0.6" min="0.1"/>
        </projection>
      </network></dnnc>)",
                                              "g.xml");
    const auto net = model::expand(*doc.net, "g.xml");
    const int ticks = 300;
    std::vector<input> drive;
    std::mt19937 gen(5);
    for (int t = 0; t < ticks; ++t)
        for (int k = 0; k < 50; ++k) drive.push_back({static_cast<global_index>(gen() % 3000), t, 3.1f, engine::all_lanes});
    const auto spec = whole_network(net);
    const auto lanes = batched(spec, 2, ticks, drive);
    for (const int threads : {1, 2, 3}) {
        tbb::task_arena arena(threads);
        arena.execute([&] {
            engine e(spec);
            for (const auto& in : drive) e.add_input(in.neuron, in.tick, in.value);
            std::size_t differ = 0;
            for (int t = 0; t < ticks; ++t) {
                e.compute();
                for (std::size_t i = 0; i < 3600; ++i) differ += e.output(static_cast<global_index>(i)) != lanes[static_cast<std::size_t>(t)][2 * i];
            }
            const auto counts = e.sparse_path_counts();
            INFO(threads << " threads: " << counts.joined_reads << " joined reads, " << counts.split_ticks << " ticks split, "
                         << counts.unordered_terms << " terms sorted");
            CHECK(differ == 0);
            CHECK(counts.joined_reads > 100 * static_cast<std::uint64_t>(ticks));
            CHECK(counts.unordered_terms == 0);  // every sum in order
            CHECK(counts.split_ticks == 0);
            // Linear targets: their entries' target words come from their targets' words.
            CHECK(counts.target_free_ticks == 0);
        });
    }
}

namespace {
// Dale's law: `size` iaf_psc_exp neurons, the first four fifths excitatory sources (drawn
// weights bounded below at 0) and the rest inhibitory ones (bounded above at 0), connected
// at random with probabilities p_excitatory and p_inhibitory, with delays drawn, all driven
// by one Poisson generator.
model::expanded_network dale_network(int size, double p_excitatory, double p_inhibitory) {
    const auto split = std::to_string(size * 4 / 5), all = std::to_string(size);
    const auto doc = protocol::parse_document(R"(<dnnc xmlns="urn:dnnc:1"><network name="g" dt="0.1">
        <population id="N" size=")" + all + R"(" model="iaf_psc_exp" seed="3" v-init="-65" v-init-std="5"/>
        <projection from="N[0:)" + split + R"(]" to="N" kind="random" p=")" + std::to_string(p_excitatory) + R"(" seed="1">
          <weight distribution="normal" mean="20" std="8" min="0"/>
          <delay distribution="normal" mean="1.5" std="0.8" min="0.1"/>
        </projection>
        <projection from="N[)" + split + ":" + all + R"(]" to="N" kind="random" p=")" + std::to_string(p_inhibitory) + R"(" seed="2">
          <weight distribution="normal" mean="-60" std="20" max="0"/>
          <delay distribution="normal" mean="1" std="0.5" min="0.1"/>
        </projection>
        <poisson to="N" rate="8000" weight="80" seed="5"/>
      </network></dnnc>)",
                                              "g.xml");
    return model::expand(*doc.net, "g.xml");
}

// Neurons [0, size)'s outputs of e's last tick, each followed by its variables.
std::vector<float> outputs_and_variables(const engine& e, int size) {
    std::vector<float> state;
    for (global_index i = 0; i < size; ++i) {
        state.push_back(e.output(i));
        for (const float v : e.variables(i)) state.push_back(v);
    }
    return state;
}

// Runs `spec` for `ticks` ticks on 1, 2 and 3 threads: observe(engine, t) after each tick,
// then check(engine, threads, ticks whose outputs_and_variables of neurons [0, size) differ
// from one thread's).
template <class Observe, class Check>
void against_one_thread(const engine_spec& spec, int size, int ticks, Observe&& observe, Check&& check) {
    std::vector<std::vector<float>> one_thread;  // per tick
    for (const int threads : {1, 2, 3}) {
        tbb::task_arena arena(threads);
        arena.execute([&] {
            engine e(spec);
            std::size_t differ = 0;
            for (int t = 0; t < ticks; ++t) {
                e.compute();
                observe(e, t);
                auto state = outputs_and_variables(e, size);
                if (threads == 1)
                    one_thread.push_back(std::move(state));
                else
                    differ += state != one_thread[static_cast<std::size_t>(t)];
            }
            check(e, threads, differ);
        });
    }
}
}  // namespace

TEST_CASE("a busy tick split by kind of sum gives the bits of one thread") {
    // Where every source feeds one kind of sum (excitatory sources N[0:1600] and inhibitory
    // ones N[1600:2000], their drawn weights bounded at 0, onto spiking neurons), busy ticks take each kind's
    // terms on a thread of its own, sources by rank as on one thread, and draw the Poisson
    // input beside them (after a busy tick, from the tick's start: beside finding the reads
    // too). 2 and 3 threads give one thread's spikes and every neuron's state at
    // every tick, which are the lanes path's spikes. Every sum is in order, so the compact
    // entries give their target words without their targets' words (fan_out.hpp), but for
    // the reads joined when a source is read at several delays in one tick, which sort their
    // terms by synapse.
    const auto net = dale_network(2000, 0.3, 0.5);
    const int ticks = 200;
    const auto spec = whole_network(net);
    const auto lanes = batched(spec, 2, ticks, {});
    std::size_t spikes = 0, differ = 0;
    against_one_thread(
        spec, 2000, ticks,
        [&](const engine& e, int t) {
            for (std::size_t i = 0; i < 2000; ++i) {
                const float y = e.output(static_cast<global_index>(i));
                spikes += y != 0.0f;
                differ += y != lanes[static_cast<std::size_t>(t)][2 * i];
            }
        },
        [&](const engine& e, int threads, std::size_t differ_from_one_thread) {
            const auto counts = e.sparse_path_counts();
            INFO(threads << " threads: " << spikes << " spikes, " << counts.kind_split_ticks << " ticks split by kind");
            CHECK(differ + differ_from_one_thread == 0);
            CHECK(spikes > 10 * static_cast<std::size_t>(ticks));
            CHECK(counts.split_ticks == counts.kind_split_ticks);
            // Every split tick draws beside its scan; after a split tick the next one's draws
            // start beside finding its reads too.
            CHECK(counts.draws_beside_ticks >= counts.split_ticks);
            CHECK(counts.early_draws_ticks <= counts.draws_beside_ticks);
            CHECK(counts.target_free_ticks > static_cast<std::uint64_t>(ticks) * 3 / 4);
            CHECK(counts.joined_reads > 0);
            if (threads == 1) CHECK(counts.split_ticks + counts.early_draws_ticks == 0);
            if (threads > 1) CHECK(counts.kind_split_ticks > static_cast<std::uint64_t>(ticks) / 2);
            if (threads > 1) CHECK(counts.early_draws_ticks > static_cast<std::uint64_t>(ticks) / 2);
            spikes = differ = 0;
        });
}

TEST_CASE("a busy tick lends its threads to the model step, with the bits of one thread") {
    // Past 8,192 neurons, a tick whose scan ran on several threads steps its neurons on them
    // too, in blocks, while they are awake. The step is per neuron, so 2 and 3 threads give
    // one thread's outputs and states at every tick.
    constexpr int size = 9000, ticks = 80;
    const auto spec = whole_network(dale_network(size, 0.03, 0.05));
    against_one_thread(
        spec, size, ticks, [](const engine&, int) {},
        [&](const engine& e, int threads, std::size_t differ) {
            const auto counts = e.sparse_path_counts();
            INFO(threads << " threads: " << counts.split_ticks << " ticks split, " << counts.threaded_step_ticks << " steps on threads");
            CHECK(differ == 0);
            if (threads == 1) CHECK(counts.threaded_step_ticks == 0);
            if (threads > 1) CHECK(counts.threaded_step_ticks > static_cast<std::uint64_t>(ticks) / 2);
        });
}

TEST_CASE("a light tick draws its Poisson input before the scan, waking no thread, with the bits of one thread") {
    // Few fan-out words a tick (some ten spikes into twenty targets each): with two threads
    // in the arena, the draws still run on the tick's own thread (a woken thread costs more
    // than it saves and spins on, taking a core from the node's neighbours).
    const auto net = dale_network(400, 0.05, 0.05);
    const int ticks = 300;
    const auto spec = whole_network(net);
    std::vector<float> one_thread;  // every neuron's output at every tick
    for (const int threads : {1, 2}) {
        tbb::task_arena arena(threads);
        arena.execute([&] {
            engine e(spec);
            std::vector<float> outputs;
            for (int t = 0; t < ticks; ++t) {
                e.compute();
                for (std::size_t i = 0; i < 400; ++i) outputs.push_back(e.output(static_cast<global_index>(i)));
            }
            const auto spikes = static_cast<std::size_t>(std::count_if(outputs.begin(), outputs.end(), [](float y) { return y != 0.0f; }));
            INFO(threads << " threads: " << spikes << " spikes");
            CHECK(spikes > static_cast<std::size_t>(ticks));
            CHECK(e.sparse_path_counts().split_ticks == 0);
            CHECK(e.sparse_path_counts().draws_beside_ticks == 0);
            if (threads == 1)
                one_thread = std::move(outputs);
            else
                CHECK(outputs == one_thread);
        });
    }
}

TEST_CASE("a source read at two delays joins no reads where its classes share weights, and keeps the lanes path's sums") {
    // Constant classes keep the sparse path's order by delay: a source active every tick, read
    // at delays 1 and 2 in each, must not have its reads joined (its entries into sums in
    // order name no synapse to sort them by).
    const auto net = generated(R"(<population id="S" size="4" model="relu" bias="-1.5"/>
        <population id="L" size="200" model="relu" bias="-100"/>
        <projection from="S" to="L" kind="all" weight="0.3" delay="1" seed="1"/>
        <projection from="S" to="L" kind="all" weight="0.0113" delay="2" seed="2"/>)");
    const int ticks = 50;
    std::vector<input> drive;
    for (int t = 0; t < ticks; ++t) drive.push_back({0, t, 3.1f, engine::all_lanes});
    const auto lanes = batched(net, 2, ticks, drive);
    engine e(whole_network(net));
    for (const auto& in : drive) e.add_input(in.neuron, in.tick, in.value);
    for (int t = 0; t < ticks; ++t) {
        e.compute();
        for (std::size_t i = 0; i < 204; ++i) REQUIRE(e.output(static_cast<global_index>(i)) == lanes[static_cast<std::size_t>(t)][2 * i]);
    }
    CHECK(e.sparse_path_counts().joined_reads == 0);
}

TEST_CASE("packed fan-out targets far apart and repeated give the lanes path's sums") {
    // Sums in order take their targets from 16-bit distances (fan_out.hpp): T's targets lie
    // up to 70,000 apart (a distance of 2^15 or more takes two units, and so does a first
    // target that far from 0), and the few sources of S[0:10] reach T[0:20] many times over
    // (distance 0); M's sums are excitatory. Linear neurons' outputs are their sums, every
    // bit of them.
    const auto net = generated(R"(<population id="S" size="300" model="iaf_psc_exp" seed="3" v-init="-65" v-init-std="5"/>
        <population id="T" size="70000" model="linear"/>
        <population id="M" size="40" model="lif" seed="4" v-init="-60" v-init-max="-50"/>
        <projection from="S" to="T" kind="fixed-outdegree" outdegree="5" seed="1" weight="0.3"/>
        <projection from="S[0:10]" to="T[0:20]" kind="fixed-indegree" indegree="30" seed="2" weight="0.0113"/>
        <projection from="S[100:300]" to="M" kind="random" p="0.2" seed="6" weight="2.5" delay="3"/>
        <poisson to="S" rate="6000" weight="90" seed="5"/>)");
    const int ticks = 60;
    const auto lanes = batched(net, 2, ticks, {});
    const auto sparse = batched(net, 1, ticks, {});
    std::size_t spikes = 0, sums = 0, far = 0;
    for (std::size_t t = 0; t < sparse.size(); ++t)
        for (std::size_t i = 0; i < sparse[t].size(); ++i) {
            (i < 300 ? spikes : sums) += sparse[t][i] != 0.0f;
            far += i >= 300 + 32768 && sparse[t][i] != 0.0f;
            REQUIRE(sparse[t][i] == lanes[t][2 * i]);
        }
    CHECK(spikes > 100);
    CHECK(far > 100);
    CHECK(sums > spikes);
}
