// The server core in-process: dispatch by message type, error replies, and survival of
// garbage, oversize and unauthenticated frames.
#include "dnnc/node_server/peer_client.hpp"
#include "dnnc/node_server/server.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>

#include <random>
#include <thread>

using namespace dnnc;
using namespace dnnc::node_server;
using protocol::message_type;

namespace {
class echo_module final : public module {
public:
    std::vector<message_type> handles() const override { return {message_type::status, message_type::probe}; }
    void handle(const protocol::frame& request, responder respond) override {
        if (request.type == message_type::probe) throw error("probe refused: " + request.payload);
        // Answer from another thread, as long-running modules do.
        std::thread([respond, payload = request.payload] {
            respond({message_type::status_reply, 0, 0, "echo:" + payload});
        }).detach();
    }
};

struct running_server {
    explicit running_server(std::string secret = {}, std::uint32_t max_payload = protocol::default_max_payload) {
        server_options o;
        o.secret = std::move(secret);
        o.max_payload = max_payload;
        srv = std::make_unique<server>(o);
        srv->add_module(std::make_shared<echo_module>());
        srv->start();
    }
    endpoint at() const { return {"127.0.0.1", srv->port()}; }
    std::unique_ptr<server> srv;
};

// Sends raw bytes and reports whether the server closed the connection.
bool server_closes_after(const endpoint& at, const std::string& bytes) {
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket socket(io);
    socket.connect({boost::asio::ip::make_address(at.host), at.port});
    boost::asio::write(socket, boost::asio::buffer(bytes));
    char c;
    boost::system::error_code ec;
    boost::asio::read(socket, boost::asio::buffer(&c, 1), ec);
    return ec == boost::asio::error::eof || ec == boost::asio::error::connection_reset;
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
    CHECK_THROWS_AS(ask(s.at(), "unsigned"), io_error);
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

TEST_CASE("endpoints parse HOST:PORT and reject the rest") {
    CHECK(parse_endpoint("127.0.0.1:7100").port == 7100);
    CHECK(parse_endpoint("[::1]:80").host == "::1");
    CHECK_THROWS_AS(parse_endpoint("localhost"), usage_error);
    CHECK_THROWS_AS(parse_endpoint("h:0"), usage_error);
    CHECK_THROWS_AS(parse_endpoint("h:99999"), usage_error);
    CHECK_THROWS_AS(parse_endpoint("h:12ab"), usage_error);
}
