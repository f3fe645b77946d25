// Routes through a sub-lead (relays.hpp): a route carries a process's calls to a node through
// another node, and stops carrying them when that node goes; without it they go straight
// again. A sub-lead refuses what it cannot reach. Over TLS the session with the node is end
// to end, the sub-lead carrying it inside its own hop.
#include "dnnc/node_server/log.hpp"
#include "dnnc/node_server/node.hpp"
#include "dnnc/node_server/peer_client.hpp"
#include "dnnc/node_server/tls.hpp"
#include "net/relays.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <random>

using namespace dnnc;
using namespace dnnc::node_server;
using protocol::message_type;

namespace {

const std::string secret = "a secret of this cluster";

std::unique_ptr<node> node_with(std::shared_ptr<const tls_config> tls = nullptr) {
    node_options options;
    options.server.secret = secret;
    options.server.tls = std::move(tls);
    auto n = std::make_unique<node>(options);
    n->start();
    return n;
}

bool answers(peer_client& client, const endpoint& at) {
    return client.call(at, {message_type::status, 0, 0, {}}, std::chrono::seconds(5)).type == message_type::status_reply;
}

}  // namespace

TEST_CASE("a route carries calls to a node through its sub-lead until the sub-lead goes, and a sub-lead refuses what it cannot reach") {
    set_log_level(log_level::error);
    const auto target = node_with();
    auto sublead = node_with();
    const endpoint at{"127.0.0.1", target->port()}, through{"127.0.0.1", sublead->port()};
    relays::route(at, through, secret, nullptr);
    CHECK(relays::via(at)->text() == through.text());
    CHECK(relays::connect_to(at).port != at.port);  // the forwarder on the loopback
    peer_client client(secret);
    CHECK(answers(client, at));
    CHECK(answers(client, at));  // the same carried connection, a second call

    // A target the sub-lead cannot reach: refused, and the sub-lead serves on.
    const endpoint nowhere{"127.0.0.1", 1};
    relays::route(nowhere, through, secret, nullptr);
    peer_client other(secret);
    CHECK_THROWS_AS(answers(other, nowhere), io_error);
    CHECK(answers(other, through));
    relays::unroute(nowhere);

    // The sub-lead gone: a new connection to the node fails through it, and goes straight
    // once the route is gone.
    sublead.reset();
    peer_client later(secret);
    CHECK_THROWS_AS(answers(later, at), io_error);
    relays::unroute(at);
    CHECK_FALSE(relays::via(at));
    CHECK(answers(later, at));
}

TEST_CASE("over TLS a route carries the node's own TLS session inside the hop to its sub-lead") {
    set_log_level(log_level::error);
    const auto dir = std::filesystem::temp_directory_path() / ("dnnc-relay-tls-" + std::to_string(std::random_device{}()));
    REQUIRE(std::system((std::string(DNNC_SOURCE_DIR) + "/scripts/tls_certs.sh " + dir.string() + " node 127.0.0.1 > /dev/null").c_str()) ==
            0);
    const auto node_tls = tls_config::load({(dir / "node.pem").string(), (dir / "node.key").string(), (dir / "ca.pem").string()});
    const auto client_tls = tls_config::load({{}, {}, (dir / "ca.pem").string()});
    {
        const auto target = node_with(node_tls), sublead = node_with(node_tls);
        const endpoint at{"127.0.0.1", target->port()}, through{"127.0.0.1", sublead->port()};
        relays::route(at, through, secret, client_tls);
        peer_client client(secret, protocol::default_max_payload, client_tls);
        CHECK(answers(client, at));
        CHECK(answers(client, at));
        // A client without TLS gets no answer through the route either: the node speaks only TLS.
        peer_client plain(secret);
        CHECK_THROWS_AS(answers(plain, at), io_error);
        relays::unroute(at);
    }
    std::filesystem::remove_all(dir);
}

TEST_CASE("a relay frame naming no reachable HOST:PORT is refused with the reason, and the sub-lead serves on") {
    set_log_level(log_level::error);
    const auto sublead = node_with();
    const endpoint at{"127.0.0.1", sublead->port()};
    const std::pair<std::string, std::string> cases[] = {
        {"", "is not HOST:PORT"},
        {"nowhere", "is not HOST:PORT"},
        {"127.0.0.1:0", "the port must be a number in 1..65535"},
        {"127.0.0.1:70000", "the port must be a number in 1..65535"},
        {std::string(5000, '\x01') + ":7", "cannot resolve"},
        {"127.0.0.1:1", "cannot connect to 127.0.0.1:1"},
    };
    for (const auto& [target, reason] : cases) {
        INFO(target.substr(0, 40));
        peer_client client(secret);
        try {
            client.call(at, {message_type::relay, 0, 0, target}, std::chrono::seconds(5));
            FAIL("the relay was opened");
        } catch (const remote_refusal& e) {
            CHECK_THAT(e.what(), Catch::Contains(reason));
        }
        peer_client after(secret);
        CHECK(answers(after, at));
    }
}
