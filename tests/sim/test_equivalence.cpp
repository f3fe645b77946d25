// Lockstep runs on any partition equal the single-process reference bit for bit; window
// mode completes every tick and counts what it drops. Engines are joined in-process.
#include "dnnc/sim/runner.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

#include <mutex>
#include <numeric>
#include <random>

using namespace dnnc;
using namespace dnnc::sim;

namespace {

using trace = std::vector<std::vector<float>>;  // per tick, every neuron's output

trace reference(const model::expanded_network& net, int ticks, const std::vector<std::tuple<global_index, tick_t, float>>& inputs) {
    engine e(whole_network(net));
    for (const auto& [n, t, v] : inputs) e.add_input(n, t, v);
    trace out;
    for (int t = 0; t < ticks; ++t) {
        e.compute();
        std::vector<float> row(net.neuron_count());
        for (std::size_t i = 0; i < row.size(); ++i) row[i] = e.output(static_cast<global_index>(i));
        out.push_back(row);
    }
    return out;
}

trace distributed(const model::expanded_network& net, const std::vector<std::uint32_t>& node_of, std::size_t nodes, int ticks,
                  const std::vector<std::tuple<global_index, tick_t, float>>& inputs, runner_options options = {}) {
    local_exchange exchange(partition_specs(net, node_of, nodes), options);
    trace out(static_cast<std::size_t>(ticks), std::vector<float>(net.neuron_count()));
    std::mutex m;
    for (std::size_t n = 0; n < nodes; ++n)
        exchange.observe(n, [&](tick_t t, const engine& e) {
            std::lock_guard<std::mutex> lock(m);
            for (const auto& s : e.spec().neurons) out[static_cast<std::size_t>(t)][static_cast<std::size_t>(s.index)] = e.output(s.index);
        });
    for (const auto& [n, t, v] : inputs) exchange.add_input(n, t, v);
    exchange.run_until(ticks - 1);
    return out;
}

std::vector<std::uint32_t> scatter(std::size_t neurons, std::size_t nodes, unsigned seed) {
    std::mt19937 gen(seed);
    std::vector<std::uint32_t> node_of(neurons);
    for (auto& n : node_of) n = static_cast<std::uint32_t>(gen() % nodes);
    return node_of;
}

model::expanded_network load(const std::string& example) {
    const auto doc = protocol::load_document(std::string(DNNC_SOURCE_DIR) + "/examples/" + example);
    return model::expand(*doc.net, doc.file);
}

model::expanded_network generated(const std::string& body) {
    const auto doc = protocol::parse_document("<dnnc xmlns=\"urn:dnnc:1\"><network name=\"g\">" + body + "</network></dnnc>", "g.xml");
    return model::expand(*doc.net, "g.xml");
}

std::vector<std::tuple<global_index, tick_t, float>> random_inputs(std::size_t neurons, int ticks, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> value(-1, 1);
    std::vector<std::tuple<global_index, tick_t, float>> inputs;
    for (int k = 0; k < ticks * 3; ++k)
        inputs.emplace_back(static_cast<global_index>(gen() % neurons), static_cast<tick_t>(gen() % static_cast<unsigned>(ticks)), value(gen));
    return inputs;
}

}  // namespace

TEST_CASE("lockstep equals the reference bit for bit on 1, 2, 3, 4 and 7 nodes") {
    struct named {
        const char* name;
        model::expanded_network net;
        int ticks;
    };
    std::vector<named> networks;
    networks.push_back({"xor", load("xor/xor.xml"), 20});
    networks.push_back({"associative", load("associative/associative.xml"), 30});
    networks.push_back({"tree7", load("tree7/tree7.xml"), 20});
    networks.push_back({"random recurrent, mixed delays", generated(R"(<population id="p" size="300" model="tanh"/>
        <projection from="p" to="p" kind="random" p="0.05" weight="0.3" seed="4"/>
        <projection from="p[0:100]" to="p" kind="random" p="0.05" weight="-0.2" delay="3" seed="5"/>)"), 40});
    networks.push_back({"random recurrent, every delay 3: nodes run ahead", generated(R"(<population id="p" size="200" model="tanh"/>
        <projection from="p" to="p" kind="random" p="0.05" weight="0.3" delay="3" seed="6"/>)"), 40});
    networks.push_back({"lif CUBA-like", generated(R"(<population id="P" size="500" model="lif" seed="3" v-init="-60" v-init-max="-50" refractory="50"/>
        <projection from="P[0:400]" to="P" kind="random" p="0.1" weight="1.62" seed="1"/>
        <projection from="P[400:500]" to="P" kind="random" p="0.1" weight="-9" seed="2" delay="2"/>)"), 400});
    networks.push_back({"iaf_psc_exp and iaf_psc_delta, recurrent", generated(R"(
        <population id="E" size="300" model="iaf_psc_exp" seed="4" I_e="400" v-init="-65" v-init-std="5" tau_syn_in="4"/>
        <population id="D" size="100" model="iaf_psc_delta" seed="5" I_e="390" t_ref="1" v-init="-70" v-init-max="-56"/>
        <projection from="E" to="E" kind="random" p="0.1" weight="40" seed="1"/>
        <projection from="D" to="E" kind="random" p="0.1" weight="-120" seed="2" delay="2"/>
        <projection from="E" to="D" kind="random" p="0.1" weight="0.3" seed="3"/>
        <projection from="D" to="D" kind="random" p="0.1" weight="-0.8" seed="6" delay="3"/>)"), 400});
    networks.push_back({"iaf_psc_alpha, recurrent", generated(R"(
        <population id="A" size="300" model="iaf_psc_alpha" seed="4" I_e="380" v-init="-65" v-init-std="5" tau_syn_ex="0.5" tau_syn_in="3"/>
        <projection from="A[0:240]" to="A" kind="random" p="0.1" weight="60" seed="1"/>
        <projection from="A[240:300]" to="A" kind="random" p="0.1" weight="-200" seed="2" delay="2"/>)"), 400});
    networks.push_back({"izhikevich, regular spiking and fast spiking", generated(R"(
        <population id="Z" size="240" model="izhikevich" seed="4" I_e="20" v-init="-70" v-init-std="5"/>
        <population id="F" size="60" model="izhikevich" a="0.1" d="2" I_e="15" seed="5"/>
        <projection from="Z" to="Z" kind="random" p="0.1" weight="2" seed="1"/>
        <projection from="F" to="Z" kind="random" p="0.1" weight="-4" seed="2" delay="2"/>
        <projection from="Z" to="F" kind="random" p="0.1" weight="3" seed="3"/>)"), 400});
    networks.push_back({"iaf_cond_exp, recurrent", generated(R"(
        <population id="C" size="300" model="iaf_cond_exp" seed="4" I_e="300" v-init="-65" v-init-std="5"/>
        <projection from="C[0:240]" to="C" kind="random" p="0.1" weight="2" seed="1"/>
        <projection from="C[240:300]" to="C" kind="random" p="0.1" weight="-8" seed="2" delay="2"/>)"), 400});
    networks.push_back({"iaf_cond_alpha, recurrent", generated(R"(
        <population id="C" size="300" model="iaf_cond_alpha" seed="4" I_e="300" v-init="-65" v-init-std="5"/>
        <projection from="C[0:240]" to="C" kind="random" p="0.1" weight="1" seed="1"/>
        <projection from="C[240:300]" to="C" kind="random" p="0.1" weight="-4" seed="2" delay="2"/>)"), 400});
    networks.push_back({"aeif_cond_exp, recurrent", generated(R"(
        <population id="C" size="300" model="aeif_cond_exp" seed="4" I_e="700" t_ref="1" v-init="-65" v-init-std="5"/>
        <projection from="C[0:240]" to="C" kind="random" p="0.1" weight="2" seed="1"/>
        <projection from="C[240:300]" to="C" kind="random" p="0.1" weight="-8" seed="2" delay="2"/>)"), 400});
    networks.push_back({"aeif_cond_alpha, recurrent", generated(R"(
        <population id="C" size="300" model="aeif_cond_alpha" seed="4" I_e="700" t_ref="1" v-init="-65" v-init-std="5"/>
        <projection from="C[0:240]" to="C" kind="random" p="0.1" weight="1" seed="1"/>
        <projection from="C[240:300]" to="C" kind="random" p="0.1" weight="-4" seed="2" delay="2"/>)"), 400});
    networks.push_back({"hh_cond_exp_traub, recurrent", generated(R"(
        <population id="C" size="200" model="hh_cond_exp_traub" seed="4" I_e="600" v-init="-65" v-init-std="5"/>
        <projection from="C[0:160]" to="C" kind="random" p="0.1" weight="2" seed="1"/>
        <projection from="C[160:200]" to="C" kind="random" p="0.1" weight="-8" seed="2" delay="2"/>)"), 300});
    networks.push_back({"feed-forward", generated(R"(<population id="a" size="50"/><population id="b" size="40" model="relu"/>
        <population id="c" size="10" model="sigmoid"/>
        <projection from="a" to="b" kind="all" weight="0.01"/><projection from="b" to="c" kind="random" p="0.5" seed="8"/>)"), 10});
    for (const auto& n : networks) {
        const auto inputs = random_inputs(n.net.neuron_count(), n.ticks, 17);
        const trace expected = reference(n.net, n.ticks, inputs);
        for (std::size_t nodes : {1u, 2u, 3u, 4u, 7u}) {
            INFO(n.name << " on " << nodes << " nodes");
            CHECK(distributed(n.net, scatter(n.net.neuron_count(), nodes, 99), nodes, n.ticks, inputs) == expected);
        }
    }
}

TEST_CASE("a node reads its peers with the shortest delay of its remote inputs") {
    const auto net = generated(R"(<population id="p" size="100" model="tanh"/>
        <projection from="p" to="p" kind="random" p="0.1" delay="4" seed="1"/>
        <projection from="p[0:10]" to="p" kind="random" p="0.1" delay="2" seed="2"/>)");
    const auto specs = partition_specs(net, scatter(100, 2, 3), 2);
    CHECK(engine(specs[0]).remote_delay() == 2);
    CHECK(engine(whole_network(net)).remote_delay() == 4);  // no remote inputs: the longest delay
}

TEST_CASE("send=nonzero gives the same results as send=always") {
    const auto net = generated(R"(<population id="P" size="300" model="lif" seed="3" v-init="-60" v-init-max="-50"/>
        <projection from="P" to="P" kind="random" p="0.1" weight="1" seed="1"/>)");
    const auto inputs = random_inputs(net.neuron_count(), 200, 3);
    const trace expected = reference(net, 200, inputs);
    runner_options nonzero;
    nonzero.send = model::send_mode::nonzero;
    CHECK(distributed(net, scatter(300, 4, 5), 4, 200, inputs, nonzero) == expected);
}

TEST_CASE("window mode completes every tick and counts what it drops, per peer") {
    const auto net = generated(R"(<population id="p" size="200" model="tanh"/>
        <projection from="p" to="p" kind="random" p="0.05" seed="4"/>)");
    auto node_of = scatter(200, 3, 1);
    auto specs = partition_specs(net, node_of, 3);
    // A zero window: a node never waits, so packets arriving after it moved on are dropped.
    local_exchange exchange(std::move(specs), {model::sync_mode::window, model::send_mode::always});
    exchange.run_until(299);
    std::int64_t ticks = 0, dropped = 0, missing = 0;
    for (std::size_t n = 0; n < 3; ++n) {
        const auto s = exchange.stats(n);
        ticks += s.ticks;
        dropped += s.values_dropped;
        missing += s.packets_missing;
        // The per-peer counts add up to the node's: a missing packet is one peer's, and a
        // late one carries values.
        CHECK(s.missing_from.size() == s.sent_to.size());
        CHECK(std::accumulate(s.missing_from.begin(), s.missing_from.end(), std::int64_t{0}) == s.packets_missing);
        CHECK((std::accumulate(s.late_from.begin(), s.late_from.end(), std::int64_t{0}) > 0) == (s.values_dropped > 0));
    }
    CHECK(ticks == 900);
    CHECK(missing >= 0);
    CHECK(dropped >= 0);
}

TEST_CASE("a packet that does not fit its peer is refused before it reaches the engine, and the run goes on") {
    const auto net = generated(R"(<population id="p" size="30" model="tanh"/>
        <projection from="p" to="p" kind="random" p="0.3" weight="0.2" seed="2"/>)");
    auto specs = partition_specs(net, scatter(30, 2, 4), 2);
    engine e(specs[0]);
    struct sink final : transport {
        void send(std::size_t, const packet&) override {}
    } out;
    runner r(e, out, {});
    const auto count = e.receive_count(0);
    REQUIRE(count > 0);
    CHECK_THROWS_AS(r.receive(0, {0, true, std::vector<float>(count + 1, 1.0f), {}}), protocol_error);
    CHECK_THROWS_AS(r.receive(0, {0, true, {}, {}}), protocol_error);
    CHECK_THROWS_AS(r.receive(0, {0, false, {}, {{static_cast<std::uint32_t>(count), 1.0f}}}), protocol_error);
    CHECK_THROWS_AS(r.receive(1, {0, true, std::vector<float>(count, 1.0f), {}}), protocol_error);  // no peer 1
    r.receive(0, {0, true, std::vector<float>(count, 0.5f), {}});
    r.receive(0, {1, false, {}, {{0, 0.25f}}});
    r.grant(2);
    r.run_granted();
    CHECK(r.completed() == 2);
}

TEST_CASE("a peer far ahead cannot make a node keep more than max_pending_packets of its packets") {
    const auto net = generated(R"(<population id="p" size="8" model="tanh"/>
        <projection from="p" to="p" kind="all" weight="0.2"/>)");
    auto specs = partition_specs(net, {0, 0, 0, 0, 1, 1, 1, 1}, 2);
    engine e(specs[0]);
    struct sink final : transport {
        void send(std::size_t, const packet&) override {}
    } out;
    runner r(e, out, {model::sync_mode::window, model::send_mode::always});
    const std::vector<float> values(e.receive_count(0), 0.5f);
    for (tick_t t = 0; t < static_cast<tick_t>(runner::max_pending_packets); ++t) r.receive(0, {t, true, values, {}});
    CHECK(r.stats().values_dropped == 0);
    r.receive(0, {static_cast<tick_t>(runner::max_pending_packets), true, values, {}});
    CHECK(r.stats().values_dropped == static_cast<std::int64_t>(values.size()));
    r.receive(0, {5, true, values, {}});  // replaces one it holds
    CHECK(r.stats().values_dropped == static_cast<std::int64_t>(values.size()));
    // The ticks it kept run as usual.
    r.grant(3);
    r.run_granted();
    CHECK(r.completed() == 3);
}
