// Structural plasticity in the engine: NEST's homeostatic rule grows synapses into a network
// that starts without any, prunes them when activity overshoots, and every node keeps the
// same picture: the same spikes, calcium, records and grown synapses on 1, 2, 3 and 4 nodes.
#include "share_cluster.hpp"

#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace dnnc;
using namespace dnnc::sim;
using dnnc::test::cluster;
using dnnc::test::scatter;

namespace {

model::growth_curve curve(double growth_rate, double eps) {
    model::growth_curve c;
    c.growth_rate = growth_rate;
    c.eta = 0;
    c.eps = eps;
    c.continuous = false;
    return c;
}

// NEST's structural_plasticity.py at a tenth of its size, grown 100 times faster: 80
// excitatory and 20 inhibitory iaf_psc_alpha neurons without synapses, Poisson background.
model::network growing_network() {
    auto net = *protocol::parse_document(
                    "<dnnc xmlns=\"urn:dnnc:1\"><network name=\"sp\">"
                    "<population id=\"E\" size=\"80\" model=\"iaf_psc_alpha\" seed=\"1\"/>"
                    "<population id=\"I\" size=\"20\" model=\"iaf_psc_alpha\" seed=\"2\"/>"
                    "<poisson to=\"E I\" rate=\"10000\" weight=\"6.2\" seed=\"3\"/>"
                    "</network></dnnc>",
                    "sp.xml")
                    .net;
    auto& e = net.populations[0];
    auto& i = net.populations[1];
    for (auto* p : {&e, &i}) {
        p->tau_ca = 1000;
        p->beta_ca = 0.01;
    }
    e.synaptic_elements = {{"Den_ex", curve(0.01, 0.05), {}}, {"Den_in", curve(0.01, 0.05), {}}, {"Axon_ex", curve(0.01, 0.05), {}}};
    i.synaptic_elements = {{"Den_ex", curve(0.04, 0.2), {}}, {"Den_in", curve(0.01, 0.2), {}}, {"Axon_in", curve(0.01, 0.2), {}}};
    model::structural_plasticity sp;
    sp.update_interval_ms = 100;
    sp.seed = 7;
    sp.synapses = {{"synapse_ex", "Axon_ex", "Den_ex", "", 585, 1, 1.0, {}}, {"synapse_in", "Axon_in", "Den_in", "", -585, 1, 1.0, {}}};
    net.structural = sp;
    return net;
}

struct observed {
    std::vector<std::vector<float>> outputs;
    std::vector<structure_record> records;  // node 0's
    std::vector<engine::grown_synapse> connections;  // node 0's
};

observed run(cluster& c, int ticks) {
    observed o;
    for (int t = 0; t < ticks; ++t) o.outputs.push_back(c.tick());
    o.records = c.engines().front().take_structure_records();
    o.connections = c.engines().front().grown_synapses(0, ~std::uint64_t{0});
    // Every node keeps the same picture.
    for (auto& e : c.engines()) {
        if (&e == &c.engines().front()) continue;
        REQUIRE(e.grown_synapses(0, ~std::uint64_t{0}) == o.connections);
        const auto records = e.take_structure_records();
        REQUIRE(records.size() == o.records.size());
        for (std::size_t k = 0; k < records.size(); ++k) {
            REQUIRE(records[k].mean_ca == o.records[k].mean_ca);
            REQUIRE(records[k].created == o.records[k].created);
            REQUIRE(records[k].deleted == o.records[k].deleted);
            REQUIRE(records[k].connections == o.records[k].connections);
        }
    }
    return o;
}

}  // namespace

TEST_CASE("structural plasticity grows and prunes the same synapses, spikes and calcium on 1, 2, 3 and 4 nodes") {
    const auto net = growing_network();
    const int ticks = 30000;  // 3 s: 30 updates
    observed reference;
    for (std::size_t nodes = 1; nodes <= 4; ++nodes) {
        INFO(nodes << " nodes");
        cluster c(net, scatter(100, nodes, static_cast<unsigned>(nodes)), nodes);
        auto o = run(c, ticks);
        if (nodes == 1) {
            reference = std::move(o);
            std::uint64_t created = 0, deleted = 0;
            for (const auto& r : reference.records) {
                created += r.created;
                deleted += r.deleted;
            }
            INFO("created " << created << ", deleted " << deleted << ", live " << reference.connections.size());
            REQUIRE(reference.records.size() == 2 * 30);
            REQUIRE(created > 100);
            REQUIRE(deleted > 0);
            REQUIRE(reference.connections.size() == created - deleted);
            REQUIRE(reference.records.back().mean_ca > 0);
            continue;
        }
        REQUIRE(o.outputs == reference.outputs);
        REQUIRE(o.connections == reference.connections);
        REQUIRE(o.records.size() == reference.records.size());
        for (std::size_t k = 0; k < o.records.size(); ++k) REQUIRE(o.records[k].mean_ca == reference.records[k].mean_ca);
    }
}

namespace {

// What a run does from some tick on: every neuron's outputs, node 0's records of the updates
// in that stretch, and the grown synapses at its end.
observed run_on(cluster& c, int ticks) {
    observed o = run(c, ticks);
    REQUIRE(!o.records.empty());
    return o;
}

void require_same(const observed& a, const observed& b) {
    // Tick by tick: a failure names the first tick that differs (not a million values).
    REQUIRE(a.outputs.size() == b.outputs.size());
    for (std::size_t t = 0; t < a.outputs.size(); ++t)
        if (a.outputs[t] != b.outputs[t]) FAIL("the outputs differ first " << t << " ticks after the restore");
    REQUIRE(a.connections == b.connections);
    REQUIRE(a.records.size() == b.records.size());
    for (std::size_t k = 0; k < a.records.size(); ++k) {
        REQUIRE(a.records[k].tick == b.records[k].tick);
        REQUIRE(a.records[k].group == b.records[k].group);
        REQUIRE(a.records[k].mean_ca == b.records[k].mean_ca);
        REQUIRE(a.records[k].connections == b.records[k].connections);
        REQUIRE(a.records[k].created == b.records[k].created);
        REQUIRE(a.records[k].deleted == b.records[k].deleted);
    }
}

}  // namespace

TEST_CASE("a snapshot carries the grown synapses, calcium and elements onto any partition, bit for bit") {
    struct restart {
        std::size_t from, onto;
        int half;
        // Excitatory synapses of 10 ms, the snapshot 2 ms after an update: synapses that
        // update deleted still deliver what was sent before it.
        bool slow_excitation;
    };
    const int ticks = 30000;
    for (const auto& [from, onto, half, slow_excitation] :
         {restart{1, 3, 15000, false}, restart{2, 4, 15000, false}, restart{3, 1, 15000, false}, restart{1, 3, 14020, true}}) {
        INFO(from << " nodes onto " << onto << " at tick " << half);
        auto net = growing_network();
        if (slow_excitation) net.structural->synapses[0].delay_ms = 10.0;
        cluster straight(net, scatter(100, from, 11), from);
        for (int t = 0; t < half; ++t) straight.tick();
        (void)straight.engines().front().take_structure_records();
        for (auto& e : straight.engines()) (void)e.take_structure_records();
        const auto states = straight.capture();
        const auto grown_then = straight.engines().front().grown_synapses(0, ~std::uint64_t{0});
        REQUIRE(!grown_then.empty());
        // Every neuron has synaptic elements here: each carries its growth, laid out as documented.
        for (const auto& s : states) {
            REQUIRE(s.growth.size() >= 4 + 2 * 3);
            REQUIRE(s.growth.size() == 4 + 2 * 3 + 5 * static_cast<std::size_t>(s.growth[3 + 2 * 3]));
        }
        // Some synapses deleted at the last update are still held, for ticks that read them.
        std::size_t dying = 0;
        for (const auto& s : states)
            for (std::size_t k = 4 + 2 * 3 + 4; k < s.growth.size(); k += 5) dying += s.growth[k] != -1;
        CHECK(dying > 0);
        const auto reference = run_on(straight, ticks - half);

        cluster restored(net, scatter(100, onto, 23), onto);
        restored.restore(states, half);
        REQUIRE(restored.engines().front().grown_synapses(0, ~std::uint64_t{0}) == grown_then);
        for (auto& e : restored.engines()) REQUIRE(e.take_structure_records().empty());
        for (const auto& s : states) REQUIRE(restored.engines().front().calcium(s.index) == s.growth[0]);
        require_same(run_on(restored, ticks - half), reference);
    }
}

TEST_CASE("a restore refuses growth that is missing, of the wrong length or inconsistent, and changes nothing") {
    const auto net = growing_network();
    cluster c(net, scatter(100, 2, 5), 2);
    for (int t = 0; t < 12000; ++t) c.tick();
    const auto states = c.capture();
    const auto grown = c.engines().front().grown_synapses(0, ~std::uint64_t{0});
    // A member with a grown synapse into it, and its source.
    const auto into = std::find_if(states.begin(), states.end(), [](const neuron_state& s) { return s.growth[3 + 2 * 3] > 0; });
    REQUIRE(into != states.end());
    const auto target = static_cast<std::size_t>(into->index);
    const auto refused = [&](std::vector<neuron_state> bad, const std::string& why) {
        INFO(why);
        cluster other(net, scatter(100, 3, 9), 3);
        for (auto& e : other.engines()) {
            std::vector<neuron_state> part;
            for (const auto& s : bad) {
                part.push_back(s);
                if (!e.is_local(s.index)) part.back().synapses.clear();
            }
            REQUIRE_THROWS_AS(e.restore(part, 12000), usage_error);
            REQUIRE(e.grown_synapses(0, ~std::uint64_t{0}).empty());
            REQUIRE(e.next_tick() == 0);
        }
    };
    {
        auto bad = states;
        bad[target].growth.pop_back();
        refused(bad, "one value short");
    }
    {
        auto bad = states;
        bad[target].growth.push_back(0);
        refused(bad, "one value too many");
    }
    {
        auto bad = states;
        bad[target].growth.clear();
        refused(bad, "missing");
    }
    {
        auto bad = states;
        bad[target].growth[3 + 3] += 1;  // its first element kind (Den_ex) connected once more
        refused(bad, "a connected count the grown synapses do not make");
    }
    {
        auto bad = states;
        bad[target].growth[3 + 2 * 3 + 1] = 1e9;  // a source that is no neuron
        refused(bad, "a source without synaptic elements");
    }
    {
        auto bad = states;
        bad[target].growth[2] += 1;  // next_seq unlike the others'
        refused(bad, "two next_seq");
    }
    {
        auto bad = states;
        bad[target].growth[0] = -1;
        refused(bad, "a negative calcium");
    }
    // The states as captured restore.
    cluster other(net, scatter(100, 3, 9), 3);
    other.restore(states, 12000);
    REQUIRE(other.engines().back().grown_synapses(0, ~std::uint64_t{0}) == grown);
}
