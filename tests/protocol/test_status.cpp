// The status codecs (protocol/status.hpp): a run's progress and a node's status decode to
// what was encoded, keep the keys the live page and scripts read, and anything malformed is
// a protocol_error.
#include "dnnc/core/error.hpp"
#include "dnnc/protocol/status.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace dnnc;
using namespace dnnc::protocol;
using json = nlohmann::json;

namespace {

run_progress a_step() {
    run_progress p;
    p.state = "stepping";
    p.completed = 41;
    p.target = 99;
    p.granted = 60;
    p.sync = "window";
    p.signals_sent = 1200;
    p.packets_missing = 2;
    p.output_rows_first = 3;
    p.last_step_seconds = 0.25;
    p.checkpoint_every = 50;
    p.checkpoint_dir = "brunel";
    node_progress a;
    a.id = "a";
    a.completed = 41;
    a.sent = 700;
    a.sent_to = {{"b", 700}};
    a.late_from = {{"b", 1}};
    a.ms_per_tick = 0.5;
    a.cpu_wait_ms_per_tick = 0.125;
    node_progress b;
    b.id = "b";
    b.completed = 42;
    b.sent = 500;
    p.nodes = {a, b};
    return p;
}

node_status a_lead() {
    node_status s;
    s.state = "running";
    s.role = "lead";
    s.tick = 120;
    s.pid = 4242;
    s.memory = {1 << 30, 0, 4096};
    s.work = {{"install", 1.5}};
    s.node = "a";
    s.network = "brunel";
    s.neurons = 600;
    s.epoch = "7";
    s.http = node_status::page_status{"127.0.0.1:8080", true};
    s.ticks_per_second = 900;
    s.signals_sent = 1200;
    s.sync = "lockstep";
    s.moves = {{"rebalance", 80, 40, 12.5, {{"a", 600, 580}, {"b", 400, 420}, {"c", 300, 300, true}, {"d", 0, 100, false, true}}}};
    lead_status c;
    c.standby_node = "b";
    cluster_node_status a;
    a.id = "a";
    a.address = "127.0.0.1:7000";
    a.roles = {"lead", "clock"};
    a.neurons = 580;
    a.completed = 120;
    a.ms_per_tick = 1.25;
    cluster_node_status b;
    b.id = "b";
    b.address = "127.0.0.1:7001";
    b.roles = {"worker"};
    b.capacity = 2;
    b.neurons = 420;
    b.alive = false;
    b.silent_ms = 5000;
    b.error = "connection refused";
    c.nodes = {a, b};
    c.dead = {"b"};
    link_status l;
    l.from = "a";
    l.to = "b";
    l.latency_ms = 0.05;
    l.round_trip_ms = 0.1;
    l.bandwidth_bps = 1e7;
    l.packets_late = std::map<std::string, std::int64_t>{{"a", 0}, {"b", 3}};
    c.links = {l};
    c.wait_windows = {500, 0.1, 0.2, 0.4};
    c.populations = {{"E", 0, 800, {470, 330}}, {"(neurons)", std::nullopt, 200, {110, 90}}};
    c.dt_ms = 0.1;
    c.edge_cut = 1234;
    c.imbalance = 1.02;
    c.weight_histograms = {{"tick", 100}, {"projections", json::array()}};
    s.cluster = c;
    return s;
}

}  // namespace

TEST_CASE("a run's progress decodes to what was encoded") {
    const auto sent = encode(a_step());
    const auto back = decode_run_progress(json::parse(sent.dump()));
    CHECK(encode(back) == sent);
    CHECK(back.state == "stepping");
    CHECK(back.target == 99);
    CHECK(back.granted == 60);
    CHECK_FALSE(back.ticks_per_second);
    REQUIRE(back.nodes.size() == 2);
    CHECK(back.nodes[0].sent_to.at("b") == 700);
    CHECK(back.nodes[0].cpu_wait_ms_per_tick == 0.125);
    CHECK_FALSE(back.nodes[1].ms_per_tick);
    // The keys scripts read (dnnc step --json, the Python module).
    for (const char* key : {"state", "completed", "target", "nodes", "signals_sent", "sync", "last_step_seconds", "checkpoint_dir"})
        CHECK(sent.contains(key));
    CHECK_FALSE(sent.contains("error"));
}

TEST_CASE("a lead's status decodes to what was encoded, with the keys the live page reads") {
    const auto sent = encode(a_lead());
    const auto back = decode_node_status(json::parse(sent.dump()));
    CHECK(encode(back) == sent);
    REQUIRE(back.cluster);
    CHECK(back.cluster->nodes[1].error == "connection refused");
    CHECK(back.cluster->links[0].packets_late->at("b") == 3);
    CHECK_FALSE(back.cluster->links[0].packets_missing);
    CHECK_FALSE(back.cluster->populations[1].first);
    CHECK(back.moves[0].nodes[1].after == 420);
    CHECK(back.moves[0].nodes[2].kept);
    CHECK_FALSE(back.moves[0].nodes[1].kept);
    CHECK(back.moves[0].nodes[3].prepared);
    CHECK_FALSE(back.moves[0].nodes[2].prepared);
    // A status from before nodes kept their engines has no "kept": none did.
    auto older = sent;
    for (auto& n : older["moves"][0]["nodes"]) {
        n.erase("kept");
        n.erase("prepared");
    }
    CHECK_FALSE(decode_node_status(older).moves[0].nodes[2].kept);
    CHECK_FALSE(decode_node_status(older).moves[0].nodes[3].prepared);
    // Flat on the wire, as the page reads it: the cluster beside the node's own fields.
    for (const char* key : {"nodes", "links", "wait_windows", "dead", "populations", "dt_ms", "edge_cut", "imbalance", "moves",
                            "standby_node", "weight_histograms", "http", "memory", "work"})
        CHECK(sent.contains(key));
    CHECK(sent["wait_windows"]["median_ms"] == 0.2);
    CHECK(sent["populations"][0]["nodes"] == json::array({470, 330}));
    CHECK_FALSE(sent.contains("structure"));  // none: not sent
}

TEST_CASE("a worker's status has no cluster, and a node that serves nothing says only what it is") {
    node_status idle;
    idle.pid = 17;
    const auto sent = encode(idle);
    CHECK(sent["role"] == "none");
    CHECK(sent["state"] == "unconfigured");
    const auto back = decode_node_status(sent);
    CHECK_FALSE(back.cluster);
    CHECK_FALSE(back.network);
    CHECK(back.pid == 17);
    node_status worker = idle;
    worker.role = "worker";
    worker.replica = replica_status{"a", 100, 20, 30.5};
    worker.lead_page = "127.0.0.1:8080";
    const auto again = decode_node_status(encode(worker));
    REQUIRE(again.replica);
    CHECK(again.replica->checkpoint_tick == 100);
    CHECK(again.lead_page == "127.0.0.1:8080");
}

TEST_CASE("a malformed progress or status is a protocol_error") {
    const auto progress = encode(a_step());
    const auto status = encode(a_lead());
    auto with = [](json j, const json::json_pointer& at, const json& value) {
        j[at] = value;
        return j;
    };
    CHECK_THROWS_AS(decode_run_progress(json::array()), protocol_error);
    CHECK_THROWS_AS(decode_run_progress(json()), protocol_error);
    for (const auto& bad : {with(progress, "/completed"_json_pointer, "soon"), with(progress, "/completed"_json_pointer, 1e300),
                            with(progress, "/nodes"_json_pointer, json::object()), with(progress, "/nodes/0/sent_to"_json_pointer, json::array()),
                            with(progress, "/nodes/0/sent_to/b"_json_pointer, 0.5), with(progress, "/granted"_json_pointer, true)}) {
        INFO(bad.dump());
        CHECK_THROWS_AS(decode_run_progress(bad), protocol_error);
    }
    json no_state = progress;
    no_state.erase("state");
    CHECK_THROWS_AS(decode_run_progress(no_state), protocol_error);
    CHECK_THROWS_AS(decode_node_status(json::array({1})), protocol_error);
    for (const auto& bad : {with(status, "/role"_json_pointer, 3), with(status, "/nodes/0/neurons"_json_pointer, -1),
                            with(status, "/nodes/0/roles"_json_pointer, json::array({1})), with(status, "/links"_json_pointer, "x"),
                            with(status, "/wait_windows"_json_pointer, json::array()), with(status, "/moves/0/nodes"_json_pointer, 5),
                            with(status, "/replica"_json_pointer, 5), with(status, "/http"_json_pointer, json::object()),
                            with(status, "/work"_json_pointer, json::object()), with(status, "/work/0/seconds"_json_pointer, "long"),
                            with(status, "/memory/limit"_json_pointer, "lots")}) {
        INFO(bad.dump());
        CHECK_THROWS_AS(decode_node_status(bad), protocol_error);
    }
}
