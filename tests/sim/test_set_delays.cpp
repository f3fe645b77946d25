// New delays between ticks (engine::set_synapses) with NEST's semantics: a spike sent before
// the update arrives with the delay it was sent with, one sent from the update on with the
// new delay; nothing is lost or delivered twice. One engine and three give the same bits
// through the transition and after it; snapshots wait for its end; delays beyond the
// history the engines keep are refused and change nothing.
#include "share_cluster.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

#include <regex>

using namespace dnnc;
using namespace dnnc::sim;
using test::cluster;

namespace {

model::network parse(const std::string& body, const std::string& dt = "1") {
    return *protocol::parse_document(R"(<dnnc xmlns="urn:dnnc:1"><network name="d" dt=")" + dt + R"(">)" + body + "</network></dnnc>", "d.xml").net;
}

// One spike source into a linear neuron (its output is its input of the tick) through a
// synapse of delay `delay`; a silent synapse of delay 12 makes the history 12 ticks long.
model::network relay(int delay) {
    return parse(R"(<spike-source id="s" size="1"><spike t-ms="2" index="0"/><spike t-ms="4" index="0"/>
                   <spike t-ms="5" index="0"/><spike t-ms="6" index="0"/><spike t-ms="8" index="0"/></spike-source>
                   <neuron id="sum" model="linear"/>
                   <synapse from="s[0]" to="sum" weight="1" delay=")" + std::to_string(delay) + R"("/>
                   <synapse from="s[0]" to="sum" weight="0" delay="12"/>)");
}

// The ticks in [0, ticks) at which `sum` receives, with how many spikes each, when the
// delay changes from `before` to `after` at tick `at`; and the ticks the source spiked.
struct arrivals {
    std::vector<std::pair<tick_t, float>> received;
    std::vector<tick_t> sent;
};
// `between`: a change to it first, at the same tick.
arrivals run_relay(int before, int after, tick_t at, tick_t ticks, int between = 0) {
    cluster c(relay(before), {0, 0}, 1);
    auto& e = c.engines().front();
    const auto source = c.neuron("s[0]"), sum = c.neuron("sum");
    arrivals a;
    for (tick_t t = 0; t < ticks; ++t) {
        if (t == at && between > 0) e.set_synapses(relay(between), {});
        if (t == at) e.set_synapses(relay(after), {});
        const auto out = c.tick();
        if (out[source] != 0) a.sent.push_back(t);
        if (out[sum] != 0) a.received.emplace_back(t, out[sum]);
    }
    return a;
}

// Where NEST delivers each spike: with the delay in force when it was sent.
std::vector<std::pair<tick_t, float>> nest_arrivals(const std::vector<tick_t>& sent, int before, int after, tick_t at) {
    std::map<tick_t, float> by_tick;
    for (const auto s : sent) by_tick[s + (s < at ? before : after)] += 1;
    return {by_tick.begin(), by_tick.end()};
}

}  // namespace

TEST_CASE("a spike sent before a delay change arrives with the old delay, one sent after with the new") {
    for (const auto& [before, after] : std::vector<std::pair<int, int>>{{5, 3}, {5, 8}, {4, 1}, {1, 12}, {5, 5}}) {
        INFO(before << " -> " << after);
        const auto a = run_relay(before, after, 6, 30);
        REQUIRE(a.sent.size() == 5);
        CHECK(a.received == nest_arrivals(a.sent, before, after, 6));
    }
    // 5 -> 3 at tick 6: the spike of tick 4 (old delay) and that of tick 6 (new) arrive together.
    const auto shorter = run_relay(5, 3, 6, 30);
    CHECK(std::count_if(shorter.received.begin(), shorter.received.end(), [](const auto& r) { return r.second == 2; }) == 1);
    // Two changes before the next tick act as the last: spikes sent before keep the first delay.
    const auto twice = run_relay(5, 3, 6, 30, 9);
    CHECK(twice.received == nest_arrivals(twice.sent, 5, 3, 6));
}

namespace {

// Spike sources into a recurrent population: a projection of one delay (ticks of 0.1 ms),
// one of drawn delays (ms), a connection list (ticks), an explicit synapse (ticks).
model::network recurrent(const std::string& direct, const std::string& drawn_max, std::uint16_t list_delay,
                            const std::string& synapse_delay) {
    auto net = parse(R"(<spike-source id="S" size="4"><spike index="0" t-ms="1"/><spike index="1" t-ms="4.3"/><spike index="2" t-ms="9.1"/>
           <spike index="3" t-ms="14"/><spike index="0" t-ms="21.2"/><spike index="2" t-ms="27.5"/><spike index="1" t-ms="33"/></spike-source>
           <population id="P" size="40" model="iaf_psc_exp" seed="3" I_e="380" v-init="-70" v-init-max="-56"/>
           <projection from="S" to="P" kind="all" weight="60" delay=")" + direct + R"("/>
           <projection from="P" to="P" kind="random" p="0.15" seed="5" weight="-12"><delay distribution="uniform" min="0.2" max=")" +
           drawn_max + R"("/></projection>
           <synapse from="P[3]" to="P[4]" weight="200" delay=")" + synapse_delay + R"("/>)", "0.1");
    model::projection list;
    list.kind = model::projection_kind::list;
    list.from = "S[0:2]";
    list.to = "P[0:2]";
    list.connections = {{1, 0}, {0, 1}, {90, 90}, {2, list_delay}};  // by target
    net.projections.push_back(list);
    net.connection_order.push_back({model::connection_ref::type::projection, net.projections.size() - 1});
    return net;
}

}  // namespace

TEST_CASE("1 and 3 engines give the same bits through and after a delay change") {
    const auto before = recurrent("7", "1.3", 9, "4");
    const auto after = recurrent("2", "0.6", 13, "1");
    std::vector<std::vector<float>> rows[2];
    std::size_t spikes = 0;
    for (const std::size_t nodes : {1, 3}) {
        cluster c(before, test::scatter(44, nodes, 11), nodes);
        for (tick_t t = 0; t < 400; ++t) {
            if (t == 200)
                for (auto& e : c.engines()) e.set_synapses(after, {});
            rows[nodes == 3].push_back(c.tick());
        }
    }
    for (const auto& row : rows[0]) spikes += static_cast<std::size_t>(std::count(row.begin() + 4, row.end(), 1.0f));
    CHECK(rows[0] == rows[1]);
    CHECK(spikes > 20);
}

TEST_CASE("snapshots and a delay change at a later tick wait for the transition's end, then a restore goes on with the same bits") {
    const auto before = recurrent("7", "1.3", 9, "4");
    const auto after = recurrent("2", "0.6", 13, "1");
    const auto again = recurrent("3", "0.6", 13, "1");
    cluster c(before, test::scatter(44, 3, 5), 3);
    for (tick_t t = 0; t < 100; ++t) c.tick();
    for (auto& e : c.engines()) e.set_synapses(after, {});
    // The history: 13 ticks, from tick 100.
    for (tick_t t = 100; t < 113; ++t) {
        CHECK_THROWS_WITH(c.capture(), Catch::Contains("on their way until tick 113"));
        if (t > 100) CHECK_THROWS_WITH(c.engines().front().set_synapses(again, {}), Catch::Contains("change them again from then on"));
        c.tick();
    }
    const auto states = c.capture();
    cluster restored(after, test::scatter(44, 2, 9), 2);
    restored.restore(states, 113);
    for (tick_t t = 113; t < 300; ++t) REQUIRE(c.tick() == restored.tick());
}

TEST_CASE("a delay beyond the history the engines keep is refused, and the engine runs on unchanged") {
    const auto net = recurrent("7", "1.3", 9, "4");
    cluster changed(net, std::vector<std::uint32_t>(44, 0), 1), untouched(net, std::vector<std::uint32_t>(44, 0), 1);
    for (tick_t t = 0; t < 50; ++t) REQUIRE(changed.tick() == untouched.tick());
    // The history holds 13 ticks (the drawn delays' cap): 14 does not fit.
    CHECK_THROWS_WITH(changed.engines().front().set_synapses(recurrent("14", "1.3", 9, "4"), {}),
                      Catch::Contains("14 ticks exceed the 13 ticks of output this engine keeps"));
    for (tick_t t = 50; t < 300; ++t) REQUIRE(changed.tick() == untouched.tick());
}

TEST_CASE("new delays of static and of plastic synapses in a network with plastic synapses are taken") {
    // Regression: with plastic synapses, a change of static delays read the synapse models of
    // the store it had just handed to the transition (moved from: out of range, a crash).
    // Plastic delays change too now (test_plasticity: when their events are taken).
    const auto text = [](const std::string& plastic, const std::string& fixed) {
        return parse(R"(<synapse-model id="ee" model="stdp_synapse" Wmax="80"/>
                       <population id="P" size="10" model="iaf_psc_exp" seed="3" I_e="380"/>
                       <projection from="P" to="P" kind="all" weight="30" delay=")" + plastic + R"(" synapse-model="ee"/>
                       <synapse from="P[0]" to="P[1]" weight="1" delay=")" + fixed + R"("/>)");
    };
    cluster c(text("4", "9"), std::vector<std::uint32_t>(10, 0), 1);
    for (tick_t t = 0; t < 50; ++t) c.tick();
    c.engines().front().set_synapses(text("4", "6"), {});
    for (tick_t t = 50; t < 100; ++t) c.tick();
    c.engines().front().set_synapses(text("3", "6"), {});
    for (tick_t t = 100; t < 150; ++t) c.tick();
    CHECK(c.engines().front().incoming(c.neuron("P[1]")).back().delay == 6);
    CHECK(c.engines().front().incoming(c.neuron("P[1]")).front().delay == 3);
}

TEST_CASE("every lane of a batched engine takes new delays as a one-lane engine does") {
    const auto before = recurrent("7", "1.3", 9, "4");
    const auto after = recurrent("2", "0.6", 13, "1");
    const auto expanded = model::expand(before, "d.xml");
    auto spec = partition_specs(expanded, std::vector<std::uint32_t>(44, 0), 1, {}, with_synapses::no).front();
    engine one(spec, before);
    spec.batch = 2;
    engine lanes(spec, before);
    for (tick_t t = 0; t < 300; ++t) {
        if (t == 100) {
            one.set_synapses(after, {});
            lanes.set_synapses(after, {});
        }
        one.compute();
        lanes.compute();
        for (global_index i = 0; i < 44; ++i) {
            REQUIRE(lanes.output(i, 0) == one.output(i));
            REQUIRE(lanes.output(i, 1) == one.output(i));
        }
    }
}
