// engine::spiked(): after each tick, the local neurons of spiking models whose output is
// non-zero, ascending — the same neurons on any partition, lane 0 of a batched engine, none
// of a rate model's however busy.
#include "dnnc/sim/runner.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <mutex>

using namespace dnnc;
using namespace dnnc::sim;

namespace {

using spike_trace = std::vector<std::vector<global_index>>;  // per tick

// A CUBA-like network (excitatory and inhibitory lif neurons, delays 1 and 2) with rate
// neurons beside it whose outputs are never zero.
model::expanded_network mixed_network() {
    const auto doc = protocol::parse_document(R"(<dnnc xmlns="urn:dnnc:1"><network name="mixed">
        <neuron id="rate" model="linear" bias="0.5"/>
        <population id="P" size="400" model="lif" seed="42" refractory="50" v-init="-60" v-init-max="-50"/>
        <population id="Q" size="60" model="lif" seed="7" refractory="20" v-init="-60" v-init-max="-49"/>
        <population id="R" size="20" model="relu" bias="1"/>
        <projection from="P[0:320]" to="P" kind="random" p="0.05" weight="1.62" seed="1"/>
        <projection from="P[320:400]" to="P" kind="random" p="0.05" weight="-9" seed="2"/>
        <projection from="P" to="Q" kind="random" p="0.1" weight="2" delay="2" seed="3"/>
        <projection from="Q" to="rate" kind="all" weight="0.25"/>
        <projection from="P" to="R" kind="random" p="0.1" weight="0.5" seed="4"/>
      </network></dnnc>)",
                                              "mixed.xml");
    return model::expand(*doc.net, doc.file);
}

// What spiked() must hold after a tick: every spiking neuron with a non-zero output.
std::vector<global_index> nonzero_spiking(const model::expanded_network& net, const engine& e) {
    std::vector<global_index> expected;
    for (const auto& n : e.spec().neurons)
        if (model::is_spiking(net.params_of(static_cast<model::neuron_index>(n.index)).model) && e.output(n.index) != 0.0f)
            expected.push_back(n.index);
    std::sort(expected.begin(), expected.end());
    return expected;
}

}  // namespace

TEST_CASE("spiked() lists the spiking neurons with a non-zero output, ascending, and no rate neuron") {
    const auto net = mixed_network();
    engine e(whole_network(net));
    std::size_t spikes = 0, q_spikes = 0;
    for (int t = 0; t < 400; ++t) {
        e.compute();
        const auto expected = nonzero_spiking(net, e);
        REQUIRE(e.spiked() == expected);
        spikes += expected.size();
        q_spikes += static_cast<std::size_t>(std::count_if(expected.begin(), expected.end(), [](global_index i) { return i >= 401 && i < 461; }));
        CHECK(e.output(0) != 0.0f);  // the rate neuron is busy, yet never listed
    }
    CHECK(spikes > 100);
    CHECK(q_spikes > 0);
}

TEST_CASE("every partition lists the same spikes as the single engine") {
    const auto net = mixed_network();
    const int ticks = 300;
    engine whole(whole_network(net));
    spike_trace reference;
    for (int t = 0; t < ticks; ++t) {
        whole.compute();
        reference.push_back(whole.spiked());
    }
    for (std::size_t nodes : {2u, 3u}) {
        std::vector<std::uint32_t> node_of(net.neuron_count());
        for (std::size_t i = 0; i < node_of.size(); ++i) node_of[i] = static_cast<std::uint32_t>((i * 7 + i / 13) % nodes);
        local_exchange exchange(partition_specs(net, node_of, nodes));
        spike_trace seen(ticks);
        std::mutex m;
        for (std::size_t n = 0; n < nodes; ++n)
            exchange.observe(n, [&](tick_t t, const engine& e) {
                REQUIRE(std::is_sorted(e.spiked().begin(), e.spiked().end()));
                for (auto i : e.spiked()) REQUIRE(e.is_local(i));
                std::lock_guard<std::mutex> lock(m);
                auto& row = seen[static_cast<std::size_t>(t)];
                row.insert(row.end(), e.spiked().begin(), e.spiked().end());
            });
        exchange.run_until(ticks - 1);
        for (auto& row : seen) std::sort(row.begin(), row.end());
        CHECK(seen == reference);
    }
}

TEST_CASE("outgoing_nonzero sends each peer every non-zero output it reads, listing spikes or not, in position order") {
    // The non-zero outputs are looked up from the tick's list of non-zero local neurons;
    // each node sends in descending index order here, so positions do not follow slots.
    const auto net = mixed_network();
    const std::size_t nodes = 3;
    std::vector<std::uint32_t> node_of(net.neuron_count());
    for (std::size_t i = 0; i < node_of.size(); ++i) node_of[i] = static_cast<std::uint32_t>((i * 7 + i / 13) % nodes);
    for (const bool listing : {true, false}) {
        INFO("listing spikes: " << listing);
        auto specs = partition_specs(net, node_of, nodes);
        for (auto& spec : specs) {
            spec.list_spikes = listing;
            for (auto& peer : spec.peers) {
                std::reverse(peer.sends.begin(), peer.sends.end());
                for (auto& other : specs)
                    if (other.node == peer.id)
                        for (auto& back : other.peers)
                            if (back.id == spec.node) std::reverse(back.receives.begin(), back.receives.end());
            }
        }
        local_exchange exchange(specs);
        std::size_t sent = 0;
        std::mutex m;
        for (std::size_t n = 0; n < nodes; ++n)
            exchange.observe(n, [&](tick_t, const engine& e) {
                for (std::size_t peer = 0; peer < e.spec().peers.size(); ++peer) {
                    std::vector<float> all;
                    std::vector<std::pair<std::uint32_t, float>> expected, got;
                    e.outgoing(peer, all);
                    for (std::size_t k = 0; k < all.size(); ++k)
                        if (all[k] != 0.0f) expected.push_back({static_cast<std::uint32_t>(k), all[k]});
                    e.outgoing_nonzero(peer, got);
                    REQUIRE(got == expected);
                    std::lock_guard<std::mutex> lock(m);
                    sent += got.size();
                }
            });
        exchange.run_until(299);
        CHECK(sent > 300);
    }
}

TEST_CASE("a batched engine lists the spikes of lane 0") {
    const auto net = mixed_network();
    auto spec = whole_network(net);
    spec.batch = 2;
    engine batched(spec);
    engine lane0(whole_network(net));
    // Lane 1 gets a strong drive that lane 0 does not: their spikes differ.
    for (tick_t t = 0; t < 100; ++t)
        for (global_index i = 1; i < 401; i += 3) batched.add_input(i, t, 5.0f, 1);
    bool differ = false;
    for (int t = 0; t < 100; ++t) {
        batched.compute();
        lane0.compute();
        REQUIRE(batched.spiked() == lane0.spiked());
        for (global_index i = 1; i < 401 && !differ; ++i) differ = batched.output(i, 0) != batched.output(i, 1);
    }
    CHECK(differ);
}

TEST_CASE("after a restore the list starts empty and the spikes go on as before") {
    const auto net = mixed_network();
    engine straight(whole_network(net));
    engine restored(whole_network(net));
    for (int t = 0; t < 50; ++t) straight.compute(), restored.compute();
    restored.restore(restored.capture(), restored.next_tick());
    CHECK(restored.spiked().empty());
    for (int t = 0; t < 100; ++t) {
        straight.compute();
        restored.compute();
        REQUIRE(restored.spiked() == straight.spiked());
    }
}

TEST_CASE("an engine told not to list spikes lists none and computes the same outputs") {
    const auto net = mixed_network();
    auto quiet_spec = whole_network(net);
    quiet_spec.list_spikes = false;
    engine quiet(quiet_spec);
    engine listing(whole_network(net));
    std::size_t listed = 0;
    for (int t = 0; t < 200; ++t) {
        quiet.compute();
        listing.compute();
        CHECK(quiet.spiked().empty());
        listed += listing.spiked().size();
        for (global_index i = 0; i < static_cast<global_index>(net.neuron_count()); ++i) REQUIRE(quiet.output(i) == listing.output(i));
    }
    CHECK(listed > 0);
}

TEST_CASE("a node's engine lists spikes only when its config records a neuron") {
    model::node_config config;
    config.node = "n0";
    config.neurons.push_back({"a", 0, 0, 0, false, false, {}});
    config.neurons.back().params.model = model::neuron_model::lif;
    CHECK_FALSE(from_node_config(config).list_spikes);
    config.neurons.back().record = true;
    CHECK(from_node_config(config).list_spikes);
}
