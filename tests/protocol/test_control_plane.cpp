// The control plane's codecs (protocol/control_plane.hpp): clock requests and replies, tick
// reports and clients' commands decode to what was encoded, and anything malformed is a
// protocol_error (a usage_error, a refusal, for a command).
#include "dnnc/core/error.hpp"
#include "dnnc/protocol/control_plane.hpp"

#include <catch2/catch.hpp>

#include <limits>
#include <utility>
#include <vector>

using namespace dnnc;
using namespace dnnc::model;
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

TEST_CASE("a clock request whose hold is not true or false is a protocol_error") {
    // Found by the control fuzz target: {"hold": [...]} escaped as nlohmann's type_error.
    for (const json& hold : {json::array({1}), json("yes"), json(1), json()}) {
        INFO(hold.dump());
        CHECK_THROWS_AS(decode_clock_request(json{{"hold", hold}}), protocol_error);
    }
    CHECK(decode_clock_request(json{{"hold", false}}).what == clock_request::kind::ask);
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

TEST_CASE("every kind of command decodes to what was encoded, with its own fields") {
    using kind = control_request::kind;
    auto same = [](const control_request& r) {
        const auto back = decode_control_request(encode(r));
        CHECK(back.what == r.what);
        return back;
    };
    for (auto k : {kind::progress, kind::start, kind::resume, kind::freeze, kind::recover}) {
        INFO(to_string(k));
        CHECK(control_kind(to_string(k)) == k);
        same(control_request(k));
    }
    control_request step(kind::step);
    step.ticks = max_tick_count;
    CHECK(same(step).ticks == max_tick_count);
    control_request checkpoint(kind::checkpoint);
    checkpoint.every = 0;
    checkpoint.keep = 3;
    checkpoint.dir = "run/a";
    const auto c = same(checkpoint);
    CHECK((c.every == 0 && c.keep == 3 && c.dir == "run/a" && !c.now));
    checkpoint = control_request(kind::checkpoint);
    checkpoint.now = true;
    CHECK((same(checkpoint).now && !same(checkpoint).every));
    control_request input(kind::input);
    input.rows = {{0, "in", 1.5f, -1, {}}, {max_state_tick, "p[3]", -2.25f, 7, {}}};
    const auto i = same(input);
    REQUIRE(i.rows.size() == 2);
    CHECK((i.rows[1].tick == max_state_tick && i.rows[1].target == "p[3]" && i.rows[1].value == -2.25f && i.rows[1].lane == 7));
    control_request structure(kind::structure);
    structure.from = 12;
    CHECK((same(structure).from == 12 && !same(structure).recent));
    structure.recent = 400;
    CHECK(same(structure).recent == 400);
    control_request grow(kind::grow);
    grow.population = "E";
    grow.add = 10;
    CHECK((same(grow).population == "E" && same(grow).add == 10));
    control_request rebalance(kind::rebalance);
    rebalance.dry_run = true;
    rebalance.capacities = {{"a", 0.5}, {"b", 2}};
    rebalance.migration_weight = 0;
    rebalance.by_load = true;
    const auto r = same(rebalance);
    CHECK((r.dry_run && r.capacities == rebalance.capacities && r.migration_weight == 0.0 && r.by_load));
    control_request join(kind::join);
    join.node = "z";
    join.address = "127.0.0.1:7000";
    join.capacity = 2;
    join.links = {"a", "b"};
    const auto j = same(join);
    CHECK((j.node == "z" && j.address == join.address && j.capacity == 2 && j.links == join.links && !j.migration_weight));
    control_request drain(kind::drain);
    drain.node = "b";
    CHECK((same(drain).node == "b" && !same(drain).by_load));
}

TEST_CASE("a malformed command is a usage_error that names the command and the field") {
    for (const auto& [bad, says] : std::vector<std::pair<json, std::string>>{
             {json::array(), "JSON object"},
             {json{{"command", 5}}, "JSON object"},
             {json{{"command", "fly"}}, "unknown command 'fly'"},
             {json{{"command", "step"}}, "step: ticks is missing"},
             {json{{"command", "step"}, {"ticks", 0}}, "step: ticks must be a whole number in 1.."},
             {json{{"command", "step"}, {"ticks", 2.5}}, "(got 2.5)"},
             {json{{"command", "step"}, {"ticks", std::numeric_limits<std::uint64_t>::max()}}, "step: ticks"},
             {json{{"command", "checkpoint"}, {"keep", 0}}, "checkpoint: keep"},
             {json{{"command", "checkpoint"}, {"now", "yes"}}, "checkpoint: now must be true or false"},
             {json{{"command", "checkpoint"}, {"dir", 3}}, "checkpoint: dir must be a non-empty string"},
             {json{{"command", "input"}}, "input: rows must be an array"},
             {json{{"command", "input"}, {"rows", json::array({json::array({1, "x"})})}}, "[tick, target, value(, lane)]"},
             {json{{"command", "input"}, {"rows", json::array({json::array({1, 2, 0.5})})}}, "target"},
             {json{{"command", "input"}, {"rows", json::array({json::array({1, "x", 1e300})})}}, "finite float32"},
             {json{{"command", "input"}, {"rows", json::array({json::array({1, "x", 1, -2})})}}, "input: lane"},
             {json{{"command", "structure"}, {"recent", 100001}}, "structure: recent"},
             {json{{"command", "grow"}, {"add", 1}}, "grow: population must be a non-empty string"},
             {json{{"command", "grow"}, {"population", "E"}, {"add", 0}}, "grow: add"},
             {json{{"command", "rebalance"}, {"capacity", json::array({1})}}, "rebalance: capacity must map node ids"},
             {json{{"command", "rebalance"}, {"capacity", {{"a", "fast"}}}}, "the capacity of 'a' must be a finite number > 0"},
             {json{{"command", "rebalance"}, {"dry_run", "yes"}}, "rebalance: dry_run must be true or false"},
             {json{{"command", "rebalance"}, {"migration_weight", -1}}, "the migration weight must be a finite number >= 0"},
             {json{{"command", "join"}, {"node", "z"}}, "join: address must be a non-empty string"},
             {json{{"command", "join"}, {"node", "z"}, {"address", "h:1"}, {"capacity", 0}}, "join: the capacity must be a finite number > 0"},
             {json{{"command", "join"}, {"node", "z"}, {"address", "h:1"}, {"links", 5}}, "join: links must be an array"},
             {json{{"command", "drain"}, {"node", json::array()}}, "drain: node must be a non-empty string"},
             {json{{"command", "drain"}, {"by_load", 1}}, "drain: node"}}) {
        INFO(bad.dump());
        CHECK_THROWS_AS(decode_control_request(bad), usage_error);
        CHECK_THROWS_WITH(decode_control_request(bad), Catch::Contains(says));
    }
}
