// The recorded spikes the lead holds: bounded, the oldest dropped and counted, answered in
// bounded replies, put in front of a later run's; and the raster's sample of the recent ones.
#include "lead/held_spikes.hpp"

#include "lead/state_samples.hpp"

#include <catch2/catch.hpp>

#include <numeric>
#include <tuple>

using namespace dnnc;
using namespace dnnc::node_server;

namespace {

// Group "a" of 10 neurons, all recorded, and group "b" of `others`, of which 200..399 recorded.
model::expanded_network recorded_network(model::neuron_index others = 500) {
    model::expanded_network net;
    for (auto [id, first, size] : {std::tuple{"a", 0u, 10u}, std::tuple{"b", 10u, others}}) {
        model::neuron_group g;
        g.id = id;
        g.first = first;
        g.size = size;
        net.groups.push_back(g);
    }
    net.group_of.assign(10 + others, 1);
    std::fill(net.group_of.begin(), net.group_of.begin() + 10, 0u);
    for (model::neuron_index i = 0; i < 10; ++i) net.recorded.push_back(i);
    for (model::neuron_index i = 210; i < 410; ++i) net.recorded.push_back(i);
    return net;
}

}  // namespace

TEST_CASE("held spikes sample every k-th recorded neuron of each group for the raster") {
    const held_spikes spikes(recorded_network());
    CHECK(spikes.recording());
    const auto& groups = spikes.groups();
    REQUIRE(groups.size() == 2);
    CHECK(groups[0]["id"] == "a");
    CHECK(groups[0]["recorded"] == 10);
    CHECK(groups[0]["every"] == 1);
    CHECK(groups[0]["sampled"] == 10);
    CHECK(groups[1]["recorded"] == 200);
    CHECK(groups[1]["every"] == 4);  // at most raster_per_group = 50 of 200
    CHECK(groups[1]["sampled"] == 50);
    CHECK(groups[1]["sample"][1] == 214);
    CHECK_FALSE(held_spikes(model::expanded_network{}).recording());
}

TEST_CASE("held spikes answer in tick order up to a tick, and forget what a client has") {
    held_spikes spikes(recorded_network());
    spikes.keep(3, {7, 1, 4});
    spikes.keep(5, {2});
    spikes.keep(6, {9, 8});
    std::int64_t through = 5;
    auto reply = spikes.answer(through);
    CHECK(through == 5);
    REQUIRE(reply.size() == 2);
    CHECK(reply[0] == nlohmann::json::array({3, {1, 4, 7}}));  // ascending
    CHECK(reply[1] == nlohmann::json::array({5, {2}}));
    spikes.forget_before(5);
    through = 10;
    reply = spikes.answer(through);
    REQUIRE(reply.size() == 2);
    CHECK(reply[0][0] == 5);
    CHECK(spikes.before(6).size() == 1);
    CHECK(spikes.lost() == 0);
}

TEST_CASE("held spikes end a reply at a tick boundary past max_per_reply spikes") {
    held_spikes spikes(recorded_network(held_spikes::max_per_reply));
    std::vector<std::uint32_t> many(held_spikes::max_per_reply / 2 + 1);
    std::iota(many.begin(), many.end(), 0u);
    for (std::int64_t t = 0; t < 3; ++t) spikes.keep(t, many);
    std::int64_t through = 2;
    const auto reply = spikes.answer(through);
    CHECK(reply.size() == 1);
    CHECK(through == 0);
}

TEST_CASE("held spikes drop the oldest ticks beyond max_held, and count them as lost") {
    held_spikes spikes(recorded_network(held_spikes::max_held / 4));
    std::vector<std::uint32_t> quarter(held_spikes::max_held / 4);
    std::iota(quarter.begin(), quarter.end(), 0u);
    for (std::int64_t t = 0; t < 5; ++t) spikes.keep(t, quarter);
    CHECK(spikes.lost() == static_cast<std::int64_t>(quarter.size()));
    REQUIRE(spikes.held().size() == 4);
    CHECK(spikes.held().front().tick == 1);
}

TEST_CASE("held spikes take a run's earlier spikes in front of their own") {
    held_spikes earlier_run(recorded_network());
    for (std::int64_t t = 0; t < 6; ++t) earlier_run.keep(t, {static_cast<std::uint32_t>(t)});
    held_spikes spikes(recorded_network());
    spikes.keep(4, {9});
    spikes.adopt(earlier_run.before(6), 4);  // this run starts at tick 4: its own tick 4 stays
    REQUIRE(spikes.held().size() == 5);
    CHECK(spikes.held().front().tick == 0);
    CHECK(spikes.held().back().neurons == std::vector<std::uint32_t>{9});
}

TEST_CASE("held spikes keep the raster sample's newest ticks, whether read or not") {
    held_spikes spikes(recorded_network());
    for (std::int64_t t = 0; t < 3 * held_spikes::max_peek_ticks; ++t) spikes.keep(t, {1, 211, 214});  // 211: not in the sample
    spikes.forget_before(3 * held_spikes::max_peek_ticks);  // a client read them all
    const auto slice = spikes.recent_from(0);
    REQUIRE(slice.ticks.size() == static_cast<std::size_t>(held_spikes::max_peek_ticks));
    CHECK(slice.ticks.back() == 3 * held_spikes::max_peek_ticks - 1);
    const auto json = slice.to_json();
    CHECK(json.back() == nlohmann::json::array({3 * held_spikes::max_peek_ticks - 1, {1, 214}}));
    CHECK(spikes.recent_from(3 * held_spikes::max_peek_ticks - 2).ticks.size() == 2);
}

TEST_CASE("a client's read of the recorded spikes forgets what it has and answers the rest through the last complete tick") {
    const auto net = recorded_network();
    held_spikes spikes(net);
    state_samples samples(net, std::vector<std::uint32_t>(net.group_of.size(), 0), 1);
    spikes.keep(3, {1, 2});
    spikes.keep(5, {4});
    spikes.keep(8, {7});
    auto reply = read_recorded(spikes, samples, {{"from", 4}, {"groups", true}}, 6, "running", 0.1);
    CHECK(reply["spikes"] == nlohmann::json::array({nlohmann::json::array({5, {4}})}));
    CHECK(reply["through"] == 6);
    CHECK(reply["completed"] == 6);
    CHECK(reply["state"] == "running");
    CHECK(reply["recording"] == true);
    CHECK(reply["groups"].size() == 2);
    CHECK_FALSE(reply["sampling"].get<bool>());
    // Acknowledging only: the spikes before "from" go, nothing is answered.
    reply = read_recorded(spikes, samples, {{"from", 7}, {"acknowledge", true}}, 8, "frozen", 0.1);
    CHECK(reply["spikes"].empty());
    CHECK(reply["through"] == 6);
    CHECK(spikes.held().size() == 1);
}
