// A node survives whatever its peers send: every message type with garbage, truncated or
// out-of-place payloads gets an error reply (or, for one-way types, nothing) and the node
// keeps answering.
#include "dnnc/node_server/log.hpp"
#include "dnnc/node_server/node.hpp"
#include "dnnc/node_server/peer_client.hpp"

#include <catch2/catch.hpp>

#include <random>

using namespace dnnc;
using namespace dnnc::node_server;
using protocol::message_type;

namespace {
// A replica payload (standby.hpp): u32 header length, header, body.
std::string replica_payload(const std::string& header, const std::string& body = {}) {
    const auto n = static_cast<std::uint32_t>(header.size());
    return std::string{static_cast<char>(n & 0xff), static_cast<char>((n >> 8) & 0xff), static_cast<char>((n >> 16) & 0xff),
                       static_cast<char>(n >> 24)} +
           header + body;
}

// Sends every payload as every message type and checks that the node still answers.
void pound(const endpoint& at) {
    peer_client client;
    auto alive = [&] {
        return client.call(at, {message_type::heartbeat, 0, 0, {}}, std::chrono::seconds(5)).type == message_type::heartbeat_reply;
    };
    std::mt19937 gen(5);
    const std::vector<std::string> payloads{
        "", "garbage", "{}", "[]", "{\"command\": 7}", "{\"command\": \"step\", \"ticks\": -3}",
        "{\"grant\": \"x\"}", "[[999999, 0, 1]]", "[[0, -5, 1]]", "<dnnc xmlns=\"urn:dnnc:1\"/>", "<node-config/>",
        std::string("\x01\x00\x02\x00", 4), std::string(1000, '\xff'), "DNNCSNAP" + std::string(100, '\x01'),
        R"({"route": [{"id": "x", "host": "127.0.0.1", "port": 1, "delay": 0}], "hop": 5})",
        // Heartbeats that name the lead's page wrongly.
        R"({"page": 5})", R"({"page": ["127.0.0.1:1"]})", R"({"page": null})",
        // Spike requests.
        R"({"from": "x"})", R"({"from": -7})", R"({"from": 0, "acknowledge": 3})",
        // Replicas: lengths past the end, headers that are not objects, kinds before their
        // document, documents missing fields, unknown kinds.
        std::string("\xff\xff\xff\x7f{}", 6), replica_payload("[1]"), replica_payload("{}"),
        replica_payload(R"({"kind": "rows", "start": 0, "from": 0, "count": 1, "width": 1})", "abcd"),
        replica_payload(R"({"kind": "spikes", "forget_before": 0})", std::string(13, '\x01')),
        replica_payload(R"({"kind": "checkpoint", "tick": 5})", "x"), replica_payload(R"({"kind": "document", "lead": 3})"),
        replica_payload(R"({"kind": "teleport"})")};
    const message_type requests[] = {message_type::submit,  message_type::configure,     message_type::probe,
                                     message_type::clock,   message_type::inputs,        message_type::control,
                                     message_type::output,  message_type::snapshot,      message_type::capture,
                                     message_type::restore_state, message_type::status,   message_type::error_reply,
                                     message_type::spikes, message_type::replica};
    for (auto type : requests)
        for (const auto& payload : payloads) {
            INFO(protocol::to_string(type) << " with " << payload.size() << " bytes");
            try {
                client.call(at, {type, 0, 0, payload}, std::chrono::seconds(10));
            } catch (const remote_error&) {
                // refused, as it should be
            }
            REQUIRE(alive());
        }
    // One-way types get no reply; the node must simply stay up. A signal-link frame hands
    // the connection to the node's signal inbox: the junk after it goes there.
    // Tick reports also come well formed but with impossible recorded spikes.
    const std::vector<std::string> reports{R"({"node": "a", "tick": 0, "rows": [[0, [], "x"]]})",
                                           R"({"node": "a", "tick": 0, "rows": [[0, [1], [-5, 1e30]]]})"};
    for (auto type : {message_type::signals, message_type::tick_report, message_type::signal_link}) {
        for (int k = 0; k < 22; ++k) {
            std::string junk(gen() % 200, '\0');
            for (auto& c : junk) c = static_cast<char>(gen());
            if (k >= 20) junk = type == message_type::tick_report ? reports[k - 20] : junk;
            try {
                client.call(at, {type, 0, 0, junk}, std::chrono::milliseconds(50));
            } catch (const io_error&) {
                client.forget(at);  // no reply comes, the call times out
            }
        }
        REQUIRE(alive());
    }
}
}  // namespace

TEST_CASE("garbage payloads of every message type leave a node answering, idle or serving") {
    set_log_level(log_level::error);
    node_options options;
    options.server.threads = 2;
    options.silence_limit = std::chrono::seconds(2);
    node n(options);
    n.start();
    const endpoint at{"127.0.0.1", n.port()};
    pound(at);
    // Now serving a network (the node is its own lead), and again.
    const std::string doc = "<dnnc xmlns=\"urn:dnnc:1\"><network name=\"r\"><population id=\"p\" size=\"20\" model=\"tanh\"/>"
                            "<projection from=\"p\" to=\"p\" kind=\"all\" weight=\"0.1\"/><output id=\"y\" neurons=\"p[0]\"/>"
                            "</network><cluster lead=\"a\"><node id=\"a\" port=\"" + std::to_string(n.port()) +
                            "\"/></cluster></dnnc>";
    peer_client client;
    REQUIRE(client.call(at, {message_type::submit, 0, 0, doc}, std::chrono::seconds(20)).type == message_type::submit_reply);
    pound(at);
    const auto status = client.call(at, {message_type::status, 0, 0, {}}, std::chrono::seconds(5));
    CHECK(status.payload.find("\"network\":\"r\"") != std::string::npos);
    n.stop();
}

TEST_CASE("a config whose network share is bad is refused with the reason, and the node stays up") {
    set_log_level(log_level::error);
    node_options options;
    options.silence_limit = std::chrono::seconds(2);
    node n(options);
    n.start();
    const endpoint at{"127.0.0.1", n.port()};
    auto config = [&](const std::string& neuron_index, const std::string& share) {
        return "<node-config xmlns=\"urn:dnnc:1\" node=\"a\" network=\"x\" lead=\"a\" port=\"" + std::to_string(n.port()) +
               "\"><run/><neuron id=\"p[0]\" index=\"" + neuron_index + "\"/><network name=\"x\">" + share +
               "</network></node-config>";
    };
    const std::pair<std::string, std::string> cases[] = {
        {config("0", R"(<population id="p" size="2"/><projection from="p" to="q" kind="all"/>)"), "no neuron or population 'q'"},
        {config("0", R"(<population id="p" size="2"/><projection from="p" to="p" kind="dense" init="zeros"/>)"),
         "carries no dense projections"},
        {config("7", R"(<population id="p" size="2"/>)"), "neuron 7 lies outside the share's 2 neurons"},
    };
    peer_client client;
    for (const auto& [payload, reason] : cases) {
        INFO(payload);
        try {
            client.call(at, {message_type::configure, 0, 0, payload}, std::chrono::seconds(10));
            FAIL("the config was accepted");
        } catch (const remote_error& e) {
            CHECK_THAT(e.what(), Catch::Contains(reason));
        }
        CHECK(client.call(at, {message_type::heartbeat, 0, 0, {}}, std::chrono::seconds(5)).type ==
              message_type::heartbeat_reply);
    }
    CHECK(client.call(at, {message_type::status, 0, 0, {}}, std::chrono::seconds(5)).payload.find("unconfigured") !=
          std::string::npos);
    n.stop();
}
