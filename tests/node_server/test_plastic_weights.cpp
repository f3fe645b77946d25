// The lead's weight histograms: one per plastic projection and one per synapse model's
// plastic explicit synapses, bins over [0, Wmax], or over the weights seen for a model
// without a bound (a first round), added over the nodes.
#include "plastic_weights.hpp"

#include <catch2/catch.hpp>

#include <map>

using namespace dnnc;
using namespace dnnc::node_server;

namespace {

// Two nodes' plastic weights, by connection element.
const std::vector<std::map<std::size_t, std::vector<float>>> node_weights{
    {{0, {1.0f, 9.5f}}, {1, {4.0f}}, {3, {-0.5f, 2.0f}}},
    {{0, {10.0f}}, {2, {0.5f, 5.0f}}, {3, {3.0f}}},
};

// What the nodes would answer a weight-bins frame, added up.
void bin_on_both_nodes(weight_groups& groups, int& rounds) {
    ++rounds;
    for (const auto& weights : node_weights)
        for (std::size_t k = 0; k < groups.histograms.size(); ++k) {
            sim::weight_histogram own{groups.histograms[k].lo, groups.histograms[k].hi,
                                      std::vector<std::uint64_t>(groups.histograms[k].bins.size(), 0)};
            for (const auto element : groups.elements[k])
                if (auto it = weights.find(element); it != weights.end())
                    for (const float w : it->second) own.add(w);
            groups.histograms[k].merge(own);
        }
}

}  // namespace

TEST_CASE("weight histograms: a projection each, a synapse model's explicit synapses together, unbounded models binned over what they hold") {
    const std::vector<plastic_element> plastic{
        {0, "ee", false, "stdp_synapse", "stdp_synapse", 10.0},
        {1, "synapse[0]", true, "fast", "stdp_synapse", 5.0},
        {2, "synapse[1]", true, "fast", "stdp_synapse", 5.0},
        {3, "tt", false, "tsodyks2_synapse", "tsodyks2_synapse", std::nullopt},
    };
    int rounds = 0;
    const auto h = weight_histograms_of(plastic, 41, [&](weight_groups& groups) { bin_on_both_nodes(groups, rounds); });
    CHECK(rounds == 2);  // the unbounded model's range first, then the bins
    CHECK(h["tick"] == 41);
    CHECK(h["bins"] == weight_histogram_bins);
    const auto& p = h["projections"];
    REQUIRE(p.size() == 3);
    CHECK(p[0]["projection"] == "ee");
    CHECK(p[0]["lo"] == 0.0);
    CHECK(p[0]["hi"] == 10.0);
    CHECK(p[0]["synapses"] == 3);
    CHECK(p[0]["bins"][2] == 1);   // 1.0
    CHECK(p[0]["bins"][19] == 2);  // 9.5 and Wmax itself
    CHECK(p[1]["projection"] == "synapses (fast)");
    CHECK(p[1]["synapses"] == 3);
    CHECK(p[1]["min"] == 0.5f);
    CHECK(p[1]["max"] == 5.0f);
    CHECK(p[2]["projection"] == "tt");
    CHECK(p[2]["model"] == "tsodyks2_synapse");
    CHECK(p[2]["lo"] == -0.5);
    CHECK(p[2]["hi"] == 3.0);
    CHECK(p[2]["synapses"] == 3);
}

TEST_CASE("weight histograms of a network without plastic synapses ask no node") {
    int rounds = 0;
    const auto h = weight_histograms_of({}, 0, [&](weight_groups& groups) { bin_on_both_nodes(groups, rounds); });
    CHECK(rounds == 0);
    CHECK(h["projections"].empty());
}
