// The control plane's codecs (protocol/control_plane.hpp): clock requests and replies and
// tick reports decode to what was encoded, and anything malformed is a protocol_error.
#include "dnnc/core/error.hpp"
#include "dnnc/protocol/control_plane.hpp"

#include <catch2/catch.hpp>

using namespace dnnc;
using namespace dnnc::protocol;
using json = nlohmann::json;

TEST_CASE("clock requests and replies decode to what was encoded") {
    for (const auto& r : {clock_request{clock_request::kind::ask, 0, {}}, clock_request{clock_request::kind::grant, 41, {"7"}},
                          clock_request{clock_request::kind::hold, 0, {"8"}}}) {
        const auto back = decode_clock_request(json::parse(encode(r).dump()));
        CHECK(back.what == r.what);
        CHECK(back.grant == r.grant);
        CHECK(back.epoch == r.epoch);
    }
    const auto reply = decode_clock_reply(json::parse(encode(clock_reply{12, 9}).dump()));
    CHECK(reply.horizon == 12);
    CHECK(reply.completed == 9);
    CHECK_THROWS_AS(decode_clock_request(json::array()), protocol_error);
    CHECK_THROWS_AS(decode_clock_request({{"grant", "soon"}}), protocol_error);
    CHECK_THROWS_AS(decode_clock_request({{"grant", 1.5}}), protocol_error);
    CHECK_THROWS_AS(decode_clock_request({{"epoch", 3}}), protocol_error);
    CHECK_THROWS_AS(decode_clock_reply({{"horizon", 1}}), protocol_error);
    CHECK_THROWS_AS(decode_clock_reply(json()), protocol_error);
}

TEST_CASE("tick reports decode to what was encoded") {
    tick_report r;
    r.node = "n1";
    r.hash = "abc";
    r.ticks.push_back({0, {0.5f, 1.0f}, {3, 7}, json::array({1.25, nullptr}), json::array({-65.0})});
    r.ticks.push_back({1, {0.0f, 0.0f}, {}, nullptr, nullptr});
    r.ticks.push_back({2, {}, {9}, nullptr, nullptr});
    r.sent = 10;
    r.dropped = 1;
    r.missing = 2;
    r.compute_ns = 123456789;
    r.cpu_wait_ns = 2345678;
    r.sent_to = {{"n0", 10}};
    r.late_from = {{"n2", 1}};
    r.structure = json::array({json::array({0, 0, 0.5, 1, 1, 0})});
    const auto back = decode_tick_report(json::parse(encode(r).dump()));
    CHECK(back.node == r.node);
    CHECK(back.hash == r.hash);
    REQUIRE(back.ticks.size() == 3);
    for (std::size_t k = 0; k < 3; ++k) {
        CHECK(back.ticks[k].tick == r.ticks[k].tick);
        CHECK(back.ticks[k].values == r.ticks[k].values);
        CHECK(back.ticks[k].spikes == r.ticks[k].spikes);
        CHECK(back.ticks[k].samples == r.ticks[k].samples);
        CHECK(back.ticks[k].initial == r.ticks[k].initial);
    }
    CHECK(back.sent == 10);
    CHECK(back.dropped == 1);
    CHECK(back.missing == 2);
    CHECK(back.compute_ns == 123456789);
    CHECK(back.cpu_wait_ns == 2345678);
    CHECK(back.sent_to == r.sent_to);
    CHECK(back.late_from == r.late_from);
    CHECK(back.missing_from.empty());
    CHECK(back.structure == r.structure);
}

TEST_CASE("a malformed tick report is a protocol_error") {
    const json good{{"node", "n0"}, {"ticks", json::array({json::array({0, json::array({1.0})})})}, {"sent", 0}, {"dropped", 0}, {"missing", 0}};
    CHECK_NOTHROW(decode_tick_report(good));
    auto with = [&](const char* key, json value) {
        json bad = good;
        bad[key] = std::move(value);
        return bad;
    };
    for (const auto& bad : {json::array(), json(), with("node", 3), with("ticks", "x"), with("sent", "many"), with("compute_ns", -1), with("compute_ns", 0.5), with("cpu_wait_ns", -1), with("cpu_wait_ns", "long"), with("sent_to", json::array()),
                            with("late_from", {{"n1", "x"}}), with("ticks", json::array({json::array({0})})),
                            with("ticks", json::array({json::array({"t", json::array()})})),
                            with("ticks", json::array({json::array({0, json::array({"v"})})})),
                            with("ticks", json::array({json::array({0, json::array(), json::array({-1})})})),
                            with("ticks", json::array({json::array({0, json::array(), json::array({4294967296ULL})})})),
                            with("ticks", json::array({json::array({0, json::array(), json::array(), "s"})})),
                            with("ticks", json::array({json::array({0, json::array(), json::array(), json::array({"s"})})})),
                            with("ticks", json::array({json::array({0, json::array(), json::array(), json::array(), json::array(), 5})}))}) {
        INFO(bad.dump());
        CHECK_THROWS_AS(decode_tick_report(bad), protocol_error);
    }
    json missing = good;
    missing.erase("dropped");
    CHECK_THROWS_AS(decode_tick_report(missing), protocol_error);
}
