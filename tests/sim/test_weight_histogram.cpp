// Weight histograms: the bins' edges, the ends and an empty range; adding nodes' histograms;
// and the bins of a plastic network's weights, more than one page of them, per projection and
// for a group of projections, binned by one engine or by three and added, equal to its
// weights binned one by one.
#include "dnnc/sim/weight_histogram.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/model/expand.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

using namespace dnnc;
using namespace dnnc::sim;

namespace {

weight_histogram over(double lo, double hi, std::size_t bins) {
    weight_histogram h;
    h.lo = lo;
    h.hi = hi;
    h.bins.assign(bins, 0);
    return h;
}

}  // namespace

TEST_CASE("a weight histogram bins over its range, the ends taking what lies beyond") {
    auto h = over(0, 3, 3);
    for (float w : {0.0f, 0.999f, 1.0f, 2.5f, 3.0f, -1.0f, 5.0f}) h.add(w);
    CHECK(h.bins == std::vector<std::uint64_t>{3, 1, 3});
    CHECK(h.count == 7);
    CHECK(h.min == -1.0f);
    CHECK(h.max == 5.0f);

    auto negative = over(-8, 0, 4);
    for (float w : {-8.0f, -5.5f, -2.0f, -0.0f}) negative.add(w);
    CHECK(negative.bins == std::vector<std::uint64_t>{1, 1, 0, 2});

    auto empty_range = over(0, 0, 5);
    empty_range.add(0);
    empty_range.add(0);
    CHECK(empty_range.bins == std::vector<std::uint64_t>{2, 0, 0, 0, 0});

    weight_histogram counting;
    for (float w : {4.0f, -2.0f, 7.0f}) counting.add(w);
    CHECK(counting.bins.empty());
    CHECK(counting.count == 3);
    CHECK(counting.min == -2.0f);
    CHECK(counting.max == 7.0f);
}

TEST_CASE("weight histograms of the same bins add up, and refuse other bins") {
    auto a = over(0, 2, 2), b = over(0, 2, 2);
    a.add(0.5f);
    b.add(1.5f);
    b.add(0.1f);
    a.merge(b);
    CHECK(a.bins == std::vector<std::uint64_t>{2, 1});
    CHECK(a.count == 3);
    CHECK(a.min == 0.1f);
    CHECK(a.max == 1.5f);
    a.merge(over(0, 2, 2));  // a node without synapses of the element
    CHECK(a.count == 3);
    CHECK(a.min == 0.1f);
    CHECK_THROWS_AS(a.merge(over(0, 3, 2)), protocol_error);
    CHECK_THROWS_AS(a.merge(over(0, 2, 3)), protocol_error);
}

TEST_CASE("a plastic network's weights binned per projection or group, by one engine or by three and added, are its weights binned one by one") {
    // 300,000 plastic synapses of drawn weights: more than one page of them per engine.
    const auto doc = protocol::parse_document(R"(<dnnc xmlns="urn:dnnc:1"><network name="h">
        <synapse-model id="ee" model="stdp_synapse" Wmax="4"/>
        <synapse-model id="ie" model="vogels_sprekeler_synapse" Wmax="-6"/>
        <population id="E" size="800" model="iaf_psc_delta"/>
        <population id="I" size="200" model="iaf_psc_delta"/>
        <projection id="EE" from="E" to="E" kind="fixed-indegree" indegree="300" seed="1" synapse-model="ee">
          <weight distribution="uniform" min="0" max="4"/></projection>
        <projection from="E" to="I" kind="fixed-indegree" indegree="30" weight="2" seed="2"/>
        <projection id="IE" from="I" to="E" kind="fixed-indegree" indegree="60" seed="3" synapse-model="ie">
          <weight distribution="normal" mean="-3" std="1" max="0"/></projection>
      </network></dnnc>)", "h.xml");
    const auto net = model::expand(*doc.net, "h.xml");
    // Connection elements in document order: EE 0, E->I 1 (static), IE 2; a group of all
    // three counts the plastic ones.
    auto binned_on = [&](std::size_t nodes) {
        std::vector<std::uint32_t> node_of(net.neuron_count());
        for (std::size_t i = 0; i < node_of.size(); ++i) node_of[i] = static_cast<std::uint32_t>(i * 7 % nodes);
        const std::vector<weight_histogram> empty{over(0, 4, 20), over(-6, 0, 12)};
        auto total = empty, by_hand = empty;
        weight_histogram all;
        for (auto& spec : partition_specs(net, node_of, nodes, {}, with_synapses::no)) {
            const engine e(spec, *doc.net);
            auto own = empty;
            bin_plastic_weights(e, {{0}, {2}}, own);
            for (std::size_t k = 0; k < total.size(); ++k) total[k].merge(own[k]);
            std::vector<weight_histogram> grouped(1);
            bin_plastic_weights(e, {{0, 1, 2}}, grouped);
            all.merge(grouped[0]);
            for (const auto& w : e.plastic_weights()) by_hand[w.element == 0 ? 0 : 1].add(w.weight);
        }
        CHECK(all.count == 288000);
        for (std::size_t k = 0; k < total.size(); ++k) {
            CHECK(total[k].bins == by_hand[k].bins);
            CHECK(total[k].count == by_hand[k].count);
            CHECK(total[k].max == by_hand[k].max);
        }
        return total;
    };
    const auto one = binned_on(1), three = binned_on(3);
    CHECK(one[0].count == 240000);
    CHECK(one[1].count == 48000);
    CHECK(one[0].min >= 0.0f);
    CHECK(one[1].max <= 0.0f);
    for (std::size_t k = 0; k < one.size(); ++k) {
        CHECK(three[k].bins == one[k].bins);
        CHECK(three[k].min == one[k].min);
        CHECK(three[k].max == one[k].max);
    }
}
