// A node survives whatever its peers send: every message type with garbage, truncated or
// out-of-place payloads gets an error reply (or, for one-way types, nothing) and the node
// keeps answering.
#include "dnnc/node_server/log.hpp"
#include "dnnc/node_server/node.hpp"
#include "dnnc/node_server/peer_client.hpp"
#include "raw_session.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <future>
#include <random>
#include <vector>

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

// A one-node network served by the node at `port`, its own lead.
std::string one_node_network(std::uint16_t port) {
    return "<dnnc xmlns=\"urn:dnnc:1\"><network name=\"r\"><population id=\"p\" size=\"20\" model=\"tanh\"/>"
           "<projection from=\"p\" to=\"p\" kind=\"all\" weight=\"0.1\"/><output id=\"y\" neurons=\"p[0]\"/>"
           "</network><cluster lead=\"a\"><node id=\"a\" port=\"" + std::to_string(port) + "\"/></cluster></dnnc>";
}

// Writes `bytes` on `socket` and reads what comes back until the node closes the
// connection or `wait` has passed (a frame the node answers with nothing).
std::string exchange_raw(boost::asio::ip::tcp::socket& socket, const std::string& bytes, std::chrono::milliseconds wait) {
    boost::system::error_code ec;
    boost::asio::write(socket, boost::asio::buffer(bytes), ec);
    socket.non_blocking(true);
    std::string answer;
    char buffer[4096];
    for (const auto until = std::chrono::steady_clock::now() + wait; std::chrono::steady_clock::now() < until;) {
        const auto n = socket.read_some(boost::asio::buffer(buffer), ec);
        answer.append(buffer, n);
        if (ec && ec != boost::asio::error::would_block) break;
        if (ec) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return answer;
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
        replica_payload(R"({"kind": "teleport"})"),
        // Weights pages: nodes that do not exist, counts of the wrong type or sign.
        R"({"node": -1, "from": 0, "limit": 5})", R"({"node": 99, "from": 0, "limit": 5})",
        R"({"node": 0, "from": "x", "limit": 1})", R"({"node": 0, "from": 0, "limit": 1e30})", R"({"from": -2, "limit": 3})",
        // Weight bins: too many bins, ranges upside down or not numbers, elements that are not.
        R"({"bins": 1e12, "groups": []})", R"({"bins": -3, "groups": []})", R"({"bins": 600000, "groups": [[0, 1, [0]], [0, 1, [1]]]})",
        R"({"bins": 4, "groups": [[5, 1, [0]]]})", R"({"bins": 4, "groups": [["a", 1, [0]]]})", R"({"bins": 4, "groups": [[0, 1, [-1, "x"]]]})",
        R"({"bins": 4, "groups": {"a": 1}})",
        // Updates and parameters: another network, other sizes, no network at all.
        R"(<dnnc xmlns="urn:dnnc:1"><network name="x"><population id="p" size="999" model="lif"/></network></dnnc>)",
        R"(<dnnc xmlns="urn:dnnc:1"><cluster lead="a"><node id="a" port="1"/></cluster></dnnc>)",
        // Uploads: names that climb out or are not hex, offsets past the end, submits of
        // uploads that are not there.
        std::string("\x05../ab", 6) + std::string(8, '\0') + "x", std::string("\x02zz", 3) + std::string(8, '\0'),
        std::string("\x02" "ab", 3) + std::string("\x10\0\0\0\0\0\0\0", 8) + "late", R"({"uploaded": "abc"})",
        R"({"uploaded": "../../etc"})"};
    const message_type requests[] = {message_type::submit,  message_type::configure,     message_type::probe,
                                     message_type::clock,   message_type::inputs,        message_type::control,
                                     message_type::output,  message_type::snapshot,      message_type::capture,
                                     message_type::restore_state, message_type::status,   message_type::error_reply,
                                     message_type::spikes, message_type::replica,  message_type::weights,
                                     message_type::weights_page, message_type::weight_histograms, message_type::weight_bins,
                                     message_type::update, message_type::parameters, message_type::upload,
                                     message_type::relay};
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

// A node's options for these tests, its log quiet: errors only (every refusal would log), and
// peers silent for 2 s counted dead.
node_options quiet_options() {
    set_log_level(log_level::error);
    node_options options;
    options.silence_limit = std::chrono::seconds(2);
    return options;
}
}  // namespace

TEST_CASE("garbage payloads of every message type leave a node answering, idle or serving") {
    auto options = quiet_options();
    options.server.threads = 2;
    node n(options);
    n.start();
    const endpoint at{"127.0.0.1", n.port()};
    pound(at);
    // Now serving a network (the node is its own lead), and again.
    peer_client client;
    REQUIRE(client.call(at, {message_type::submit, 0, 0, one_node_network(n.port())}, std::chrono::seconds(20)).type == message_type::submit_reply);
    pound(at);
    const auto status = client.call(at, {message_type::status, 0, 0, {}}, std::chrono::seconds(5));
    CHECK(status.payload.find("\"network\":\"r\"") != std::string::npos);
    n.stop();
}

TEST_CASE("re-balance, join, drain and release commands with fields of the wrong kind are refused, and the node serves on") {
    node n(quiet_options());
    n.start();
    const endpoint at{"127.0.0.1", n.port()};
    peer_client client;
    REQUIRE(client.call(at, {message_type::submit, 0, 0, one_node_network(n.port())}, std::chrono::seconds(20)).type == message_type::submit_reply);
    for (const char* command :
         {R"({"command":"rebalance","capacity":[1]})", R"({"command":"rebalance","capacity":{"a":"fast"}})",
          R"({"command":"rebalance","dry_run":"yes"})", R"({"command":"rebalance","migration_weight":-1})",
          R"({"command":"rebalance","migration_weight":"x"})", R"({"command":"join","node":5})", R"({"command":"join"})",
          R"({"command":"join","node":"z","address":7})", R"({"command":"join","node":"z","address":"nowhere"})",
          R"({"command":"join","node":"z","address":"127.0.0.1:1","capacity":"big"})",
          R"({"command":"join","node":"z","address":"127.0.0.1:1","links":5})", R"({"command":"drain","node":[]})",
          R"({"command":"drain"})", R"({"command":"drain","node":"nobody"})"}) {
        INFO(command);
        CHECK_THROWS(client.call(at, {message_type::control, 0, 0, command}, std::chrono::seconds(10)));
    }
    for (const char* release : {"{}", R"({"epoch":5})", R"({"epoch":"1"})", "[]", "x"}) {
        INFO(release);
        CHECK_THROWS(client.call(at, {message_type::release, 0, 0, release}, std::chrono::seconds(10)));
    }
    // The node still serves its network, and its clock moves.
    const auto status = client.call(at, {message_type::status, 0, 0, {}}, std::chrono::seconds(5));
    CHECK(status.payload.find("\"network\":\"r\"") != std::string::npos);
    CHECK_NOTHROW(client.call(at, {message_type::control, 0, 0, R"({"command":"step","ticks":5})"}, std::chrono::seconds(10)));
    n.stop();
}

TEST_CASE("handshake frames and every other type, captured or forged, first or later, never end a node") {
    const std::string secret = "cluster-key";
    auto options = quiet_options();
    options.server.secret = secret;
    node n(options);
    n.start();
    const endpoint at{"127.0.0.1", n.port()};
    peer_client client(secret);
    REQUIRE(client.call(at, {message_type::submit, 0, 0, one_node_network(n.port())}, std::chrono::seconds(20)).type ==
            message_type::submit_reply);
    auto alive = [&] {
        return client.call(at, {message_type::heartbeat, 0, 0, {}}, std::chrono::seconds(5)).type == message_type::heartbeat_reply;
    };
    // Captured: a client's hello, the node's hello_reply (valid tags: the secret's), and a
    // request and its reply tagged with their session's key.
    std::vector<std::pair<std::string, std::string>> frames;
    {
        boost::asio::io_context io;
        boost::asio::ip::tcp::socket socket(io);
        socket.connect({boost::asio::ip::make_address(at.host), at.port});
        protocol::frame_auth auth(secret, protocol::frame_auth::side::client);
        const std::string hello = auth.hello();
        frames.emplace_back("captured hello", hello);
        boost::asio::write(socket, boost::asio::buffer(hello));
        std::string header(protocol::frame_header_size, '\0');
        boost::asio::read(socket, boost::asio::buffer(header));
        const auto h = protocol::decode_header(header, protocol::default_max_payload, true);
        std::string body(h.body_size(), '\0');
        boost::asio::read(socket, boost::asio::buffer(body));
        frames.emplace_back("captured hello_reply", header + body);
        auth.accept(auth.decode(h, header, body));
        const std::string request = auth.encode({message_type::status, 0, 9, {}});
        frames.emplace_back("captured status", request);
        boost::asio::write(socket, boost::asio::buffer(request));
        boost::asio::read(socket, boost::asio::buffer(header));
        body.assign(protocol::decode_header(header, protocol::default_max_payload, true).body_size(), '\0');
        boost::asio::read(socket, boost::asio::buffer(body));
        frames.emplace_back("captured status_reply", header + body);
    }
    // Forged: every type with the secret's own tag (valid for a handshake frame only), with
    // another key's, and untagged.
    for (unsigned t = 0; t <= 255; ++t) {  // every known type
        if (!protocol::is_known(static_cast<std::uint8_t>(t))) continue;
        const auto type = static_cast<message_type>(t);
        const std::string payload = type == message_type::hello || type == message_type::hello_reply ? std::string(32, 'n') : "{}";
        const std::string name = protocol::to_string(type);
        frames.emplace_back(name + " tagged with the secret", protocol::encode_frame({type, 0, 1, payload}, secret));
        frames.emplace_back(name + " tagged with another key", protocol::encode_frame({type, 0, 1, payload}, "other-key"));
        frames.emplace_back(name + " untagged", protocol::encode_frame({type, 0, 1, payload}));
    }
    const auto wait = std::chrono::milliseconds(150);
    // Each frame three ways; whether the session's own request was answered in the third.
    auto send_three_ways = [&](const std::string& bytes) {
        {  // as a new connection's first frame
            boost::asio::io_context io;
            boost::asio::ip::tcp::socket socket(io);
            socket.connect({boost::asio::ip::make_address(at.host), at.port});
            exchange_raw(socket, bytes, wait);
        }
        {  // after the hello, inside a session
            test::raw_session session(at.host, at.port, secret);
            exchange_raw(session.socket, bytes, wait);
        }
        // after a request of the session
        test::raw_session session(at.host, at.port, secret);
        const auto answer = exchange_raw(session.socket, session.frame(message_type::status, {}), wait);
        exchange_raw(session.socket, bytes, wait);
        return answer.size() > protocol::frame_header_size;
    };
    // A few frames at once (most wait out `wait` for an answer that does not come), then
    // the node must still answer.
    constexpr std::size_t at_once = 8;
    for (std::size_t first = 0; first < frames.size(); first += at_once) {
        std::string names;
        std::vector<std::future<bool>> sent;
        for (auto k = first; k < std::min(frames.size(), first + at_once); ++k) {
            names += frames[k].first + ", ";
            sent.push_back(std::async(std::launch::async, send_three_ways, std::cref(frames[k].second)));
        }
        INFO(names);
        for (auto& answered : sent) CHECK(answered.get());
        REQUIRE(alive());
    }
    // Every type with the session's own valid tag, handshake types included (but shutdown:
    // a peer with the secret may stop the node).
    for (unsigned t = 0; t <= 255; ++t) {  // every known type
        const auto type = static_cast<message_type>(t);
        if (!protocol::is_known(static_cast<std::uint8_t>(t)) || type == message_type::shutdown) continue;
        INFO(protocol::to_string(type) << " in its session");
        test::raw_session session(at.host, at.port, secret);
        exchange_raw(session.socket, session.frame(type, type == message_type::hello ? std::string(32, 'n') : "{}"), wait);
        REQUIRE(alive());
    }
    // A session still opens and is served.
    test::raw_session session(at.host, at.port, secret);
    CHECK_THAT(exchange_raw(session.socket, session.frame(message_type::status, {}), std::chrono::milliseconds(500)),
               Catch::Contains("\"network\":\"r\""));
    n.stop();
}

TEST_CASE("handshake frames sent to a node without a secret are refused, and it goes on") {
    set_log_level(log_level::error);
    node_options options;
    node n(options);
    n.start();
    const endpoint at{"127.0.0.1", n.port()};
    for (auto type : {message_type::hello, message_type::hello_reply}) {
        INFO(protocol::to_string(type));
        boost::asio::io_context io;
        boost::asio::ip::tcp::socket socket(io);
        socket.connect({boost::asio::ip::make_address(at.host), at.port});
        CHECK_THAT(exchange_raw(socket, protocol::encode_frame({type, 0, 1, std::string(32, 'n')}), std::chrono::seconds(2)),
                   Catch::Contains("an unexpected " + std::string(protocol::to_string(type))));
    }
    peer_client client;
    CHECK(client.call(at, {message_type::heartbeat, 0, 0, {}}, std::chrono::seconds(5)).type == message_type::heartbeat_reply);
    n.stop();
}

TEST_CASE("a config whose network share is bad is refused with the reason, also to build ahead or to restore, and the node stays up") {
    node n(quiet_options());
    n.start();
    const endpoint at{"127.0.0.1", n.port()};
    auto config = [&](const std::string& neuron_index, const std::string& share, const std::string& more = {}) {
        return "<node-config xmlns=\"urn:dnnc:1\" node=\"a\" network=\"x\" lead=\"a\" port=\"" + std::to_string(n.port()) +
               "\"" + more + "><run/><neuron id=\"p[0]\" index=\"" + neuron_index + "\"/><network name=\"x\">" + share +
               "</network></node-config>";
    };
    const std::pair<std::string, std::string> cases[] = {
        {config("0", R"(<population id="p" size="2"/><projection from="p" to="q" kind="all"/>)"), "no neuron or population 'q'"},
        {config("0", R"(<population id="p" size="2"/><projection from="p" to="p" kind="dense" init="zeros"/>)"),
         "carries no dense projections"},
        {config("7", R"(<population id="p" size="2"/>)"), "neuron 7 lies outside the share's 2 neurons"},
        {config("0", R"(<population id="p" size="2"/>)", R"( lead-via="nowhere")"), "lead-via: 'nowhere' is not HOST:PORT"},
        {config("0", R"(<population id="p" size="2"/>)", R"( lead-via="10.0.0.1:99999")"), "lead-via: '10.0.0.1:99999': the port"},
    };
    peer_client client;
    // Plain, to be restored after, and only to build an engine ahead: refused alike.
    for (const std::uint16_t flags : {std::uint16_t{0}, protocol::restoring_flag, protocol::prepare_flag})
        for (const auto& [payload, reason] : cases) {
            INFO(payload << " with flags " << flags);
            try {
                client.call(at, {message_type::configure, flags, 0, payload}, std::chrono::seconds(10));
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
