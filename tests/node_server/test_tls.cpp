// TLS between nodes and clients (tls.hpp): a node with a certificate talks only TLS, to
// clients that trust its CA and call it by an address its certificate names; what travels
// cannot be read on the way; bad certificate files are refused with their names.
#include "dnnc/node_server/log.hpp"
#include "dnnc/node_server/node.hpp"
#include "dnnc/node_server/peer_client.hpp"
#include "dnnc/node_server/tls.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <random>
#include <thread>

using namespace dnnc;
using namespace dnnc::node_server;
using protocol::message_type;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

// Certificates made by the script users run: a CA and a node certificate for 127.0.0.1;
// a second CA that signed nothing of this cluster's.
struct certificates {
    std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("dnnc-tls-" + std::to_string(std::random_device{}()));
    certificates() {
        const std::string script = std::string(DNNC_SOURCE_DIR) + "/scripts/tls_certs.sh ";
        REQUIRE(std::system((script + dir.string() + " node 127.0.0.1 > /dev/null").c_str()) == 0);
        REQUIRE(std::system((script + (dir / "other").string() + " stranger 127.0.0.1 > /dev/null").c_str()) == 0);
    }
    ~certificates() { std::filesystem::remove_all(dir); }
    tls_files node() const { return {(dir / "node.pem").string(), (dir / "node.key").string(), (dir / "ca.pem").string()}; }
    tls_files client() const { return {{}, {}, (dir / "ca.pem").string()}; }
    tls_files stranger() const { return {{}, {}, (dir / "other" / "ca.pem").string()}; }
};

// Passes one connection's bytes both ways between a client and `to`, keeping a copy of
// everything it saw: what someone on the path could read.
class eavesdropper {
public:
    explicit eavesdropper(std::uint16_t to) : acceptor_(io_, {asio::ip::make_address("127.0.0.1"), 0}), to_(to) {
        thread_ = std::thread([this] { relay(); });
    }
    ~eavesdropper() {
        io_.stop();
        thread_.join();
    }
    std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
    std::string seen() {
        std::lock_guard<std::mutex> lock(mutex_);
        return seen_;
    }

private:
    void relay() {
        tcp::socket client(io_), server(io_);
        acceptor_.accept(client);
        server.connect({asio::ip::make_address("127.0.0.1"), to_});
        pump(client, server);
        pump(server, client);
        io_.run();
    }
    void pump(tcp::socket& from, tcp::socket& to) {
        auto buffer = std::make_shared<std::array<char, 4096>>();
        from.async_read_some(asio::buffer(*buffer), [this, &from, &to, buffer](const boost::system::error_code& ec, std::size_t n) {
            if (ec) return;
            {
                std::lock_guard<std::mutex> lock(mutex_);
                seen_.append(buffer->data(), n);
            }
            boost::system::error_code ignored;
            asio::write(to, asio::buffer(buffer->data(), n), ignored);
            pump(from, to);
        });
    }

    asio::io_context io_;
    tcp::acceptor acceptor_;
    std::uint16_t to_;
    std::thread thread_;
    std::mutex mutex_;
    std::string seen_;
};

std::unique_ptr<node> node_with(const tls_files& tls) {
    node_options options;
    options.server.secret = "a secret of this cluster";
    if (tls.enabled()) options.server.tls = tls_config::load(tls);
    auto n = std::make_unique<node>(options);
    n->start();
    return n;
}

// A request whose words must not be readable on the way.
const std::string private_words = "zebra-quartz-private-words";
protocol::frame private_request() { return {message_type::control, 0, 0, "{\"command\": \"" + private_words + "\"}"}; }

}  // namespace

TEST_CASE("a TLS node answers clients that trust its CA and drops the others at the handshake") {
    set_log_level(log_level::error);
    const certificates certs;
    const auto n = node_with(certs.node());
    const endpoint at{"127.0.0.1", n->port()};
    peer_client trusting("a secret of this cluster", protocol::default_max_payload, tls_config::load(certs.client()));
    CHECK(trusting.call(at, {message_type::status, 0, 0, {}}, std::chrono::seconds(5)).type == message_type::status_reply);

    peer_client plain("a secret of this cluster");
    CHECK_THROWS_AS(plain.call(at, {message_type::status, 0, 0, {}}, std::chrono::seconds(5)), io_error);

    peer_client stranger("a secret of this cluster", protocol::default_max_payload, tls_config::load(certs.stranger()));
    CHECK_THROWS_WITH(stranger.call(at, {message_type::status, 0, 0, {}}, std::chrono::seconds(5)),
                      Catch::Contains("TLS handshake failed") && Catch::Contains("certificate verify failed"));

    // The certificate names 127.0.0.1, not localhost: a node called by another name is not trusted.
    CHECK_THROWS_WITH(trusting.call({"localhost", n->port()}, {message_type::status, 0, 0, {}}, std::chrono::seconds(5)),
                      Catch::Contains("TLS handshake failed"));
    // And the node still serves.
    CHECK(trusting.call(at, {message_type::status, 0, 0, {}}, std::chrono::seconds(5)).type == message_type::status_reply);
}

TEST_CASE("what travels between a client and a TLS node cannot be read on the way, and without TLS it can") {
    set_log_level(log_level::error);
    const certificates certs;
    for (const bool tls : {false, true}) {
        INFO((tls ? "TLS" : "plain TCP"));
        const auto n = node_with(tls ? certs.node() : tls_files{});
        eavesdropper path(n->port());
        peer_client client("a secret of this cluster", protocol::default_max_payload, tls ? tls_config::load(certs.client()) : nullptr);
        // Refused by the node (it leads nothing): what matters is that it got there.
        CHECK_THROWS_AS(client.call({"127.0.0.1", path.port()}, private_request(), std::chrono::seconds(5)), remote_error);
        const auto seen = path.seen();
        CHECK(seen.size() > private_words.size());
        CHECK((seen.find(private_words) != std::string::npos) == !tls);
    }
}

TEST_CASE("bad TLS files are refused with their names") {
    const certificates certs;
    auto files = certs.node();
    files.certificate = (certs.dir / "missing.pem").string();
    CHECK_THROWS_WITH(tls_config::load(files), Catch::Contains("missing.pem"));
    files = certs.node();
    files.key = (certs.dir / "other" / "stranger.key").string();  // another certificate's key
    CHECK_THROWS_AS(tls_config::load(files), usage_error);
    files = certs.node();
    files.key.clear();
    CHECK_THROWS_WITH(tls_config::load(files), Catch::Contains("together"));
    CHECK_THROWS_WITH(tls_config::load({}), Catch::Contains("--tls-ca"));
    CHECK_FALSE(tls_config::load(certs.client())->serves());
    // Each file is read within a bound: OpenSSL once read /dev/zero for ever looking for a
    // PEM header.
    files = certs.node();
    files.authority = "/dev/zero";
    CHECK_THROWS_WITH(tls_config::load(files), Catch::Contains("/dev/zero: the file is longer than 1 MiB"));
    files = certs.node();
    files.key = "/dev/zero";
    CHECK_THROWS_WITH(tls_config::load(files), Catch::Contains("--tls-key") && Catch::Contains("/dev/zero"));
}
