// The server core in-process: dispatch by message type, error replies, and survival of
// garbage, oversize and unauthenticated frames.
#include "dnnc/node_server/peer_client.hpp"
#include "dnnc/node_server/server.hpp"
#include "raw_session.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

using namespace dnnc;
using namespace dnnc::node_server;
using protocol::message_type;

namespace {
class echo_module final : public module {
public:
    std::atomic<int> handled{0};
    std::vector<message_type> handles() const override { return {message_type::status, message_type::probe}; }
    void handle(const protocol::frame& request, responder respond) override {
        if (request.type == message_type::probe) throw error("probe refused: " + request.payload);
        ++handled;
        // Answer from another thread, as long-running modules do; "slow..." after 600 ms,
        // "slower..." after 2 s. Once the server stops, at once.
        std::string answer = "echo:" + request.payload.substr(0, 32);
        const std::lock_guard<std::mutex> lock(mutex_);
        if (stopped_) return respond({message_type::status_reply, 0, 0, std::move(answer)});
        answering_.emplace_back([respond, payload = request.payload, answer = std::move(answer)] {
            if (payload.rfind("slower", 0) == 0)
                std::this_thread::sleep_for(std::chrono::seconds(2));
            else if (payload.rfind("slow", 0) == 0)
                std::this_thread::sleep_for(std::chrono::milliseconds(600));
            respond({message_type::status_reply, 0, 0, answer});
        });
    }
    // The server stops its modules while its event loop still runs: the answers being worked
    // on are sent then. One sent after the server is gone would use its freed event loop (a
    // detached thread here did, once the tests after a timed-out call ran quickly).
    void stop() override {
        const std::lock_guard<std::mutex> lock(mutex_);
        stopped_ = true;
        for (auto& t : answering_) t.join();
        answering_.clear();
    }

private:
    std::mutex mutex_;
    bool stopped_ = false;
    std::vector<std::thread> answering_;
};

server_options options_with(std::string secret, std::uint32_t max_payload = protocol::default_max_payload) {
    server_options o;
    o.secret = std::move(secret);
    o.max_payload = max_payload;
    return o;
}

struct running_server {
    explicit running_server(std::string secret = {}, std::uint32_t max_payload = protocol::default_max_payload)
        : running_server(options_with(std::move(secret), max_payload)) {}
    explicit running_server(const server_options& o) {
        srv = std::make_unique<server>(o);
        srv->add_module(echo);
        srv->start();
    }
    std::shared_ptr<echo_module> echo = std::make_shared<echo_module>();
    endpoint at() const { return {"127.0.0.1", srv->port()}; }
    std::unique_ptr<server> srv;
};

// Sends raw bytes and reports whether the server closed the connection.
bool server_closes_after(const endpoint& at, const std::string& bytes) {
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket socket(io);
    socket.connect({boost::asio::ip::make_address(at.host), at.port});
    boost::asio::write(socket, boost::asio::buffer(bytes));
    // The server says why in an error reply first, then closes.
    char buffer[4096];
    boost::system::error_code ec;
    while (!ec) socket.read_some(boost::asio::buffer(buffer), ec);
    return ec == boost::asio::error::eof || ec == boost::asio::error::connection_reset;
}

boost::asio::ip::tcp::socket connect_raw(boost::asio::io_context& io, const endpoint& at) {
    boost::asio::ip::tcp::socket socket(io);
    socket.connect({boost::asio::ip::make_address(at.host), at.port});
    return socket;
}

// Whether the server has closed `socket` within `wait` (reads until end of stream).
bool closed_within(boost::asio::ip::tcp::socket& socket, std::chrono::milliseconds wait) {
    socket.non_blocking(true);
    const auto until = std::chrono::steady_clock::now() + wait;
    char buffer[4096];
    while (std::chrono::steady_clock::now() < until) {
        boost::system::error_code ec;
        socket.read_some(boost::asio::buffer(buffer), ec);
        if (ec == boost::asio::error::eof || ec == boost::asio::error::connection_reset) return true;
        // What the server said before closing (an error reply) is read at once, all of it:
        // a byte per wait took a second a connection.
        if (ec == boost::asio::error::would_block) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

// This process's resident memory in kB.
long resident_kb() {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
    return -1;
}

// A frame header declaring a 64 MiB payload (and a tag), then `body` bytes of it.
std::string large_frame_start(std::size_t body) {
    std::string bytes = protocol::encode_frame({message_type::status, 0, 1, ""}, "cluster-key");
    bytes.resize(protocol::frame_header_size);
    const std::uint32_t length = 64u << 20;
    std::memcpy(&bytes[16], &length, 4);
    return bytes + std::string(body, 'x');
}

// A session with the secret that has proven itself with one request.
std::unique_ptr<test::raw_session> proven_session(const endpoint& at) {
    auto session = std::make_unique<test::raw_session>(at.host, at.port, "cluster-key");
    const auto request = session->frame(message_type::status, "proving");
    session->write(request, request.size());
    REQUIRE(session->read().payload == "echo:proving");
    return session;
}

std::string ask(const endpoint& at, const std::string& payload, const std::string& secret = {}) {
    peer_client client(secret);
    return client.call(at, {message_type::status, 0, 0, payload}, std::chrono::seconds(5)).payload;
}
}  // namespace

TEST_CASE("requests reach the module for their type and replies keep the request id") {
    running_server s;
    CHECK(ask(s.at(), "hello") == "echo:hello");
    peer_client client;
    CHECK_THROWS_WITH(client.call(s.at(), {message_type::probe, 0, 0, "x"}, std::chrono::seconds(5)),
                      Catch::Contains("probe refused: x"));
    CHECK_THROWS_WITH(client.call(s.at(), {message_type::submit, 0, 0, ""}, std::chrono::seconds(5)),
                      Catch::Contains("no module for submit"));
    // The connection survives module errors.
    CHECK(client.call(s.at(), {message_type::status, 0, 0, "again"}, std::chrono::seconds(5)).payload == "echo:again");
}

TEST_CASE("garbage, oversize and unknown frames close only their connection") {
    running_server s("", 1024);
    std::mt19937 gen(11);
    for (int round = 0; round < 20; ++round) {
        std::string junk(64 + gen() % 512, '\0');
        for (auto& c : junk) c = static_cast<char>(gen());
        CHECK(server_closes_after(s.at(), junk));
    }
    CHECK(server_closes_after(s.at(), protocol::encode_frame({message_type::status, 0, 1, std::string(2048, 'x')})));
    std::string unknown = protocol::encode_frame({message_type::status, 0, 1, ""});
    unknown[5] = static_cast<char>(250);
    CHECK(server_closes_after(s.at(), unknown));
    CHECK(ask(s.at(), "still here") == "echo:still here");
}

TEST_CASE("a node with a secret rejects unauthenticated and wrongly keyed frames") {
    running_server s("cluster-key");
    CHECK(ask(s.at(), "signed", "cluster-key") == "echo:signed");
    // Refused with the reason, then the connection closes.
    CHECK_THROWS_WITH(ask(s.at(), "unsigned"), Catch::Contains("frame is not authenticated and this cluster requires it"));
    CHECK_THROWS_AS(ask(s.at(), "unsigned"), remote_error);
    CHECK_THROWS_WITH(ask(s.at(), "wrong", "other-key"), Catch::Contains("the node refused the frame: frame authentication failed"));
    CHECK_THROWS_AS(ask(s.at(), "wrong", "other-key"), io_error);
    CHECK(ask(s.at(), "signed again", "cluster-key") == "echo:signed again");
}

TEST_CASE("many clients at once are all answered") {
    running_server s;
    std::vector<std::thread> clients;
    std::atomic<int> answered{0};
    for (int i = 0; i < 16; ++i)
        clients.emplace_back([&, i] {
            for (int k = 0; k < 20; ++k)
                if (ask(s.at(), std::to_string(i * 100 + k)) == "echo:" + std::to_string(i * 100 + k)) ++answered;
        });
    for (auto& t : clients) t.join();
    CHECK(answered == 320);
}

TEST_CASE("a peer that cannot be reached is an io_error naming it") {
    running_server s;
    const endpoint gone{"127.0.0.1", s.srv->port()};
    s.srv.reset();
    CHECK_THROWS_WITH(ask(gone, "x"), Catch::Contains("127.0.0.1:"));
}

TEST_CASE("a call whose work outlasts the silence limit waits while the peer answers, and fails soon after it goes silent") {
    running_server s;
    peer_client client;
    // Two seconds of work, with heartbeats answered (here refused: a refusal is an answer).
    const auto reply = client.call_while_alive(s.at(), {message_type::status, 0, 0, "slower"}, std::chrono::milliseconds(300));
    CHECK(reply.payload == "echo:slower");
    CHECK_THROWS_WITH(client.call(s.at(), {message_type::status, 0, 0, "slower"}, std::chrono::milliseconds(300)),
                      Catch::Contains("timed out"));
    // A stopped process: the kernel takes connections and bytes, nothing answers.
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor stopped(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
    const endpoint silent{"127.0.0.1", stopped.local_endpoint().port()};
    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_WITH(client.call_while_alive(silent, {message_type::status, 0, 0, "x"}, std::chrono::milliseconds(300)),
                      Catch::Contains("silent for 300 ms") && Catch::Contains(silent.text()));
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(3));
}

TEST_CASE("endpoints parse HOST:PORT and reject the rest") {
    CHECK(parse_endpoint("127.0.0.1:7100").port == 7100);
    CHECK(parse_endpoint("[::1]:80").host == "::1");
    CHECK_THROWS_AS(parse_endpoint("localhost"), usage_error);
    CHECK_THROWS_AS(parse_endpoint("h:0"), usage_error);
    CHECK_THROWS_AS(parse_endpoint("h:99999"), usage_error);
    CHECK_THROWS_AS(parse_endpoint("h:12ab"), usage_error);
}

TEST_CASE("frames declaring 64 MiB cost no memory: refused before the sender proves itself, read as bytes arrive after") {
    boost::asio::io_context io;
    {
        // With a secret: a stranger's large header is refused at once, however many come.
        running_server s("cluster-key");
        const long before = resident_kb();
        std::vector<boost::asio::ip::tcp::socket> attackers;
        for (int k = 0; k < 32; ++k) {
            attackers.push_back(connect_raw(io, s.at()));
            boost::asio::write(attackers.back(), boost::asio::buffer(large_frame_start(1000)));
        }
        for (auto& a : attackers) CHECK(closed_within(a, std::chrono::seconds(5)));
        CHECK(resident_kb() - before < 8 * 1024);
        // A client with the secret proves itself first and may send more than the pre-proof limit.
        CHECK(ask(s.at(), std::string(3u << 20, 'y'), "cluster-key") == "echo:" + std::string(32, 'y'));
    }
    {
        // Without one: bodies grow with the bytes that arrive, not with the declared length.
        running_server s;
        const long before = resident_kb();
        std::vector<boost::asio::ip::tcp::socket> slow;
        for (int k = 0; k < 32; ++k) {
            slow.push_back(connect_raw(io, s.at()));
            boost::asio::write(slow.back(), boost::asio::buffer(large_frame_start(1000)));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        CHECK(resident_kb() - before < 8 * 1024);
        CHECK(ask(s.at(), "still here") == "echo:still here");
    }
}

TEST_CASE("unproven connections share a quota, the oldest closed first, and silent ones go after the timeout") {
    boost::asio::io_context io;
    auto o = options_with("");
    o.max_unproven_connections = 3;
    o.first_frame_timeout = std::chrono::milliseconds(300);
    running_server s(o);
    std::vector<boost::asio::ip::tcp::socket> held;
    for (int k = 0; k < 3; ++k) held.push_back(connect_raw(io, s.at()));
    auto fourth = connect_raw(io, s.at());
    CHECK(closed_within(held[0], std::chrono::milliseconds(250)));  // the oldest, before any timeout
    // The others that never sent a frame go after first_frame_timeout.
    for (std::size_t k = 1; k < held.size(); ++k) CHECK(closed_within(held[k], std::chrono::seconds(3)));
    CHECK(closed_within(fourth, std::chrono::seconds(3)));
}

TEST_CASE("proven connections are capped in all and by address, with an error reply saying so") {
    auto o = options_with("cluster-key");
    o.max_connections_per_address = 3;
    running_server s(o);
    std::vector<std::unique_ptr<test::raw_session>> proven;
    for (int k = 0; k < 3; ++k) proven.push_back(proven_session(s.at()));
    {
        test::raw_session fourth("127.0.0.1", s.at().port, "cluster-key");  // its hello is still answered
        const auto request = fourth.frame(message_type::status, "one more");
        fourth.write(request, request.size());
        const auto refusal = fourth.read();
        CHECK(refusal.type == message_type::error_reply);
        CHECK_THAT(refusal.payload, Catch::Contains("the limits are 1024 and 3"));
        CHECK(closed_within(fourth.socket, std::chrono::seconds(3)));
    }
    proven.pop_back();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(ask(s.at(), "room again", "cluster-key") == "echo:room again");
}

TEST_CASE("idle strangers never lock out peers that prove the secret") {
    boost::asio::io_context io;
    running_server s("cluster-key");  // the default limits: 64 unproven, 256 proven per address
    std::vector<std::unique_ptr<test::raw_session>> proven;
    for (int k = 0; k < 10; ++k) proven.push_back(proven_session(s.at()));
    // 300 connections that send nothing, then 100 that replay a captured hello (answered,
    // but proving nothing): more than the 256 a node once took from one address.
    std::vector<boost::asio::ip::tcp::socket> strangers;
    for (int k = 0; k < 300; ++k) strangers.push_back(connect_raw(io, s.at()));
    const std::string hello = protocol::frame_auth("cluster-key", protocol::frame_auth::side::client).hello();
    for (int k = 0; k < 100; ++k) {
        strangers.push_back(connect_raw(io, s.at()));
        boost::system::error_code closed_meanwhile;  // an older stranger may be closed already
        boost::asio::write(strangers.back(), boost::asio::buffer(hello), closed_meanwhile);
    }
    // New peers with the secret are served, and those that were already are still.
    for (int k = 0; k < 20; ++k) CHECK(ask(s.at(), "new " + std::to_string(k), "cluster-key") == "echo:new " + std::to_string(k));
    for (auto& p : proven) {
        const auto request = p->frame(message_type::status, "after");
        p->write(request, request.size());
        CHECK(p->read().payload == "echo:after");
    }
}

TEST_CASE("a reply being worked on keeps its connection past the idle timeout") {
    auto o = options_with("");
    o.idle_timeout = std::chrono::milliseconds(200);
    running_server s(o);
    peer_client client;
    CHECK(client.call(s.at(), {message_type::status, 0, 0, "a"}, std::chrono::seconds(5)).payload == "echo:a");
    // A reply still being worked on keeps its connection past idle_timeout.
    CHECK(client.call(s.at(), {message_type::status, 0, 0, "slow"}, std::chrono::seconds(5)).payload == "echo:slow");
    // The idle connection is closed meanwhile; the client reconnects.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    CHECK(client.call(s.at(), {message_type::status, 0, 0, "b"}, std::chrono::seconds(5)).payload == "echo:b");
}

TEST_CASE("a captured authenticated frame cannot be replayed, on its connection or another") {
    running_server s("cluster-key");
    // The frame as it passed on the wire, and its reply.
    test::raw_session original("127.0.0.1", s.at().port, "cluster-key");
    const std::string captured = original.frame(message_type::status, "step 10");
    original.write(captured, captured.size());
    std::string reply(protocol::frame_header_size, '\0');
    boost::asio::read(original.socket, boost::asio::buffer(reply));
    REQUIRE(s.echo->handled == 1);
    // A stranger without the secret, three times; a client with it, in its own session;
    // the original connection again.
    for (int k = 0; k < 3; ++k) CHECK(server_closes_after(s.at(), captured));
    {
        test::raw_session other("127.0.0.1", s.at().port, "cluster-key");
        other.write(captured, captured.size());
        char buffer[4096];
        boost::system::error_code ec;
        std::string answer;
        while (!ec) answer.append(buffer, other.socket.read_some(boost::asio::buffer(buffer), ec));
        CHECK_THAT(answer, Catch::Contains("frame authentication failed"));
    }
    {
        original.write(captured, captured.size());  // out of order on its own connection
        char buffer[4096];
        boost::system::error_code ec;
        std::string answer;
        while (!ec) answer.append(buffer, original.socket.read_some(boost::asio::buffer(buffer), ec));
        CHECK_THAT(answer, Catch::Contains("frame authentication failed"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(s.echo->handled == 1);  // none of the replays reached the module
    CHECK(ask(s.at(), "still here", "cluster-key") == "echo:still here");
}

TEST_CASE("a malformed or misplaced hello is refused and the server goes on") {
    running_server s("cluster-key");
    // A nonce of the wrong size, an untagged hello, and a hello after the session began.
    CHECK(server_closes_after(s.at(), protocol::encode_frame({message_type::hello, 0, 1, "short"}, "cluster-key")));
    CHECK(server_closes_after(s.at(), protocol::encode_frame({message_type::hello, 0, 1, std::string(32, 'n')})));
    {
        test::raw_session session("127.0.0.1", s.at().port, "cluster-key");
        const std::string again = protocol::encode_frame({message_type::hello, 0, 2, std::string(32, 'n')}, "cluster-key");
        session.write(again, again.size());
        char buffer[4096];
        boost::system::error_code ec;
        std::string answer;
        while (!ec) answer.append(buffer, session.socket.read_some(boost::asio::buffer(buffer), ec));
        CHECK_THAT(answer, Catch::Contains("an unexpected hello"));
    }
    CHECK(ask(s.at(), "still here", "cluster-key") == "echo:still here");
}
