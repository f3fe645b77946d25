// Signal links: a connection opened with a signal_link frame (after its session's hello)
// leaves the server and is read by whoever collects from the inbox; frames arrive whole and
// in order however the bytes are cut, and a link that sends anything but authentic signals
// frames of its own session, in order, is closed while the server goes on. Compressed packets
// arrive as they were sent; a corrupt one, or one that claims more than the inbox's bound,
// closes its link.
#include "dnnc/node_server/outbox.hpp"
#include "dnnc/node_server/log.hpp"
#include "dnnc/node_server/server.hpp"
#include "dnnc/node_server/signal_inbox.hpp"
#include "dnnc/protocol/signal_compression.hpp"
#include "raw_session.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>

#include <thread>

using namespace dnnc;
using namespace dnnc::node_server;
using protocol::message_type;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

const std::string secret = "inbox secret";

struct inbox_server {
    signal_inbox inbox{protocol::default_max_payload};
    server srv{[] {
        server_options o;
        o.secret = secret;
        return o;
    }()};
    inbox_server() {
        srv.hand_over(message_type::signal_link, [this](const protocol::frame& f, int socket, protocol::frame_auth auth) {
            inbox.adopt(socket, f.payload, std::move(auth));
        });
        srv.start();
    }
    endpoint at() const { return {"127.0.0.1", srv.port()}; }

    // Collects until `count` packets have come or `patience` has passed.
    std::vector<protocol::binary_signals> collect(std::size_t count,
                                                  std::chrono::milliseconds patience = std::chrono::seconds(2)) {
        std::vector<protocol::binary_signals> got;
        const auto until = std::chrono::steady_clock::now() + patience;
        while (got.size() < count && std::chrono::steady_clock::now() < until)
            inbox.collect([&](protocol::binary_signals s) { got.push_back(std::move(s)); }, std::chrono::milliseconds(10));
        return got;
    }

    // Waits until the inbox holds `count` links.
    bool links_become(std::size_t count) {
        for (int i = 0; i < 200 && inbox.links() != count; ++i) {
            inbox.collect([](protocol::binary_signals) {}, std::chrono::milliseconds(10));
        }
        return inbox.links() == count;
    }
};

std::string signals_payload(std::int64_t tick) {
    return protocol::encode_signals({"peer", 7, tick, true, {float(tick), 0.5f}, {}});
}

// A raw connection to the inbox's server, in a session of its own (raw_session.hpp).
struct raw_link : test::raw_session {
    explicit raw_link(const endpoint& at, const std::string& key = secret) : raw_session(at.host, at.port, key) {}
    std::string opening(const signal_link_identity& who = {"peer", 7, 1234}) {
        return frame(message_type::signal_link, who.encode());
    }
    std::string signals(std::int64_t tick) { return frame(message_type::signals, signals_payload(tick)); }
    std::string compressed(const std::string& payload) {
        return auth.encode({message_type::signals, protocol::compressed_flag, 0, payload});
    }
};

// A packet of `count` zeros but the tick, compressed.
std::string compressed_payload(std::int64_t tick, std::size_t count) {
    std::vector<float> values(count, 0.0f);
    values[0] = float(tick);
    std::string out;
    REQUIRE(protocol::compress_signals(protocol::encode_signals({"peer", 7, tick, true, values, {}}), out));
    return out;
}

}  // namespace

TEST_CASE("an outbox that opens signal links delivers its packets, in order, to the inbox") {
    set_log_level(log_level::error);
    inbox_server s;
    outbox out(secret, protocol::frame{message_type::signal_link, 0, 0, signal_link_identity{"peer", 7, 1234}.encode()});
    for (std::int64_t t = 0; t < 500; ++t) out.send(s.at(), {message_type::signals, 0, 0, signals_payload(t)});
    const auto got = s.collect(500);
    REQUIRE(got.size() == 500);
    for (std::int64_t t = 0; t < 500; ++t) {
        CHECK(got[static_cast<std::size_t>(t)].tick == t);
        CHECK(got[static_cast<std::size_t>(t)].values == std::vector<float>{float(t), 0.5f});
    }
    CHECK(s.inbox.links() == 1);
}

TEST_CASE("frames cut into single bytes arrive whole") {
    set_log_level(log_level::error);
    inbox_server s;
    raw_link link(s.at());
    std::string bytes = link.opening();
    bytes += link.signals(1);
    bytes += link.signals(2);
    link.write(bytes, 1);
    const auto got = s.collect(2);
    REQUIRE(got.size() == 2);
    CHECK(got[0].tick == 1);
    CHECK(got[1].tick == 2);
}

TEST_CASE("a link is closed for a frame that is not signals, for a forged one and for garbage, the server goes on") {
    set_log_level(log_level::error);
    inbox_server s;
    for (int bad = 0; bad < 4; ++bad) {
        raw_link link(s.at());
        std::string bytes = link.opening();
        bytes += link.signals(0);
        if (bad == 0) bytes += link.frame(message_type::heartbeat, {});
        if (bad == 1) bytes += raw_link(s.at()).signals(1);  // tagged in another connection's session
        if (bad == 2) bytes += link.frame(message_type::signals, "not a packet");
        if (bad == 3) bytes += std::string(64, '\x7f');
        bytes += link.signals(2);
        link.write(bytes, bytes.size());
        const auto got = s.collect(3, std::chrono::milliseconds(300));
        REQUIRE(got.size() == 1);  // what came before the bad frame
        CHECK(got[0].tick == 0);
        CHECK(s.links_become(0));
    }
    // A hello with the wrong secret opens no session, and no link.
    CHECK_THROWS(raw_link(s.at(), "wrong secret"));
    CHECK(s.inbox.links() == 0);
    raw_link link(s.at());
    std::string bytes = link.opening();
    bytes += link.signals(9);
    link.write(bytes, 4096);
    const auto got = s.collect(1);
    REQUIRE(got.size() == 1);
    CHECK(got[0].tick == 9);
}

TEST_CASE("compressed packets arrive as sent, and a corrupt one or one past the bound closes its link while the server goes on") {
    set_log_level(log_level::error);
    inbox_server s;
    outbox out(secret, protocol::frame{message_type::signal_link, 0, 0, signal_link_identity{"peer", 7, 1234}.encode()});
    for (std::int64_t t = 0; t < 50; ++t) out.send(s.at(), {message_type::signals, protocol::compressed_flag, 0, compressed_payload(t, 1000)});
    const auto got = s.collect(50);
    REQUIRE(got.size() == 50);
    CHECK(got[49].tick == 49);
    CHECK(got[49].values.size() == 1000);
    CHECK(got[49].values[0] == 49.0f);
    for (int bad = 0; bad < 2; ++bad) {
        raw_link link(s.at());
        std::string bytes = link.opening();
        bytes += link.compressed(compressed_payload(0, 1000));
        auto broken = compressed_payload(1, 1000);
        if (bad == 0) broken.resize(broken.size() / 2);  // a block cut short
        if (bad == 1) broken = compressed_payload(1, protocol::default_max_payload / 4 + 1);  // decompresses past the bound
        bytes += link.compressed(broken);
        bytes += link.signals(2);
        link.write(bytes, bytes.size());
        const auto arrived = s.collect(3, std::chrono::milliseconds(300));
        REQUIRE(arrived.size() == 1);
        CHECK(arrived[0].tick == 0);
        CHECK(s.links_become(1));  // the outbox's link stays
    }
}

TEST_CASE("a captured signals frame is refused on another connection and when replayed on its own") {
    set_log_level(log_level::error);
    inbox_server s;
    raw_link link(s.at());
    std::string bytes = link.opening();
    const std::string captured = link.signals(0);
    bytes += captured;
    link.write(bytes, 4096);
    REQUIRE(s.collect(1).size() == 1);
    // The same bytes again on their own link: out of order.
    link.write(captured, 4096);
    CHECK(s.collect(1, std::chrono::milliseconds(300)).empty());
    CHECK(s.links_become(0));
    // On another connection: another session key.
    raw_link elsewhere(s.at());
    bytes = elsewhere.opening({"other", 7, 1});
    bytes += captured;
    elsewhere.write(bytes, 4096);
    CHECK(s.collect(1, std::chrono::milliseconds(300)).empty());
    CHECK(s.links_become(0));
}

TEST_CASE("a signal-link frame after a connection's first closes the connection") {
    set_log_level(log_level::error);
    inbox_server s;
    raw_link link(s.at());
    std::string bytes = link.frame(message_type::heartbeat, {});
    bytes += link.opening();
    bytes += link.signals(0);
    link.write(bytes, 4096);
    std::string reply(256, '\0');
    boost::system::error_code ec;
    while (!ec) link.socket.read_some(asio::buffer(reply), ec);  // the heartbeat's error reply, then the end
    CHECK((ec == asio::error::eof || ec == asio::error::connection_reset));  // reset: it left bytes unread
    CHECK(s.collect(1, std::chrono::milliseconds(300)).empty());
    CHECK(s.inbox.links() == 0);
}

TEST_CASE("a link that ends is dropped") {
    set_log_level(log_level::error);
    inbox_server s;
    {
        raw_link link(s.at());
        std::string bytes = link.opening();
        bytes += link.signals(0);
        link.write(bytes, 4096);
        REQUIRE(s.collect(1).size() == 1);
        CHECK(s.inbox.links() == 1);
    }
    CHECK(s.links_become(0));
}

TEST_CASE("a link opened without saying who opens it is refused") {
    set_log_level(log_level::error);
    inbox_server s;
    for (const std::string payload : {"", "{}", R"({"node": "", "epoch": 1, "pid": 2})", "[1,2]"}) {
        raw_link link(s.at());
        std::string bytes = link.frame(message_type::signal_link, payload);
        bytes += link.signals(0);
        link.write(bytes, 4096);
        CHECK(s.collect(1, std::chrono::milliseconds(200)).empty());
        CHECK(s.inbox.links() == 0);
    }
}

TEST_CASE("a node's new link (a restarted process, a new network) closes its older ones") {
    set_log_level(log_level::error);
    inbox_server s;
    raw_link old_process(s.at());
    std::string bytes = old_process.opening({"peer", 7, 1000});
    bytes += old_process.signals(0);
    old_process.write(bytes, 4096);
    REQUIRE(s.collect(1).size() == 1);
    raw_link other_node(s.at());
    other_node.write(other_node.opening({"other", 7, 1000}), 4096);
    CHECK(s.links_become(2));
    raw_link new_process(s.at());
    bytes = new_process.opening({"peer", 7, 2000});
    bytes += new_process.signals(1);
    new_process.write(bytes, 4096);
    const auto got = s.collect(1);
    REQUIRE(got.size() == 1);
    CHECK(got[0].tick == 1);
    CHECK(s.inbox.links() == 2);  // the old process's link is gone, the other node's stays
    raw_link new_network(s.at());
    new_network.write(new_network.opening({"peer", 8, 2000}), 4096);
    CHECK(s.links_become(2));
}

TEST_CASE("links whose peers hung up are dropped as new ones come, even with no reader") {
    set_log_level(log_level::error);
    inbox_server s;
    for (int k = 0; k < 5; ++k) {
        raw_link junk(s.at());
        junk.write(junk.opening({"junk-" + std::to_string(k), 1, 1}), 4096);
        for (int i = 0; i < 100 && s.inbox.links() != 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        CHECK(s.inbox.links() == 1);  // the one just made; the earlier ones hung up and were swept
    }
}
