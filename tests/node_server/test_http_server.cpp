// The live page's server in-process: connections that have not sent an authorised request
// share a small quota and go first when it is full, so that idle strangers never lock out
// requests that carry the token; a snapshot streams a piece at a time, and a piece refused
// mid-way breaks the download instead of ending it.
#include "dnnc/node_server/log.hpp"
#include "../http_download.hpp"
#include "http/http_server.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <limits>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <sys/socket.h>
#include <unistd.h>
#include <sys/time.h>

using namespace dnnc::node_server;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

tcp::socket connect_to(asio::io_context& io, std::uint16_t port) {
    tcp::socket s(io);
    s.connect({asio::ip::make_address("127.0.0.1"), port});
    timeval tv{10, 0};  // generous: a timeout is not what these tests check
    ::setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return s;
}

// Sends a GET of /api/status and reads one response; its status, 0 when the connection
// closed (or timed out) first.
int get_status(tcp::socket& s, const std::string& token, bool keep_alive) {
    const std::string request = "GET /api/status HTTP/1.1\r\nHost: localhost\r\n" +
                                (token.empty() ? std::string() : "Authorization: Bearer " + token + "\r\n") +
                                (keep_alive ? "" : "Connection: close\r\n") + "\r\n";
    boost::system::error_code ec;
    asio::write(s, asio::buffer(request), ec);
    std::string all;
    char buffer[4096];
    while (true) {
        const auto split = all.find("\r\n\r\n");
        if (split != std::string::npos) {
            const auto length_at = all.find("Content-Length: ");
            const auto length = length_at < split ? std::stoul(all.substr(length_at + 16)) : 0;
            if (all.size() >= split + 4 + length) break;
        }
        const auto n = ::recv(s.native_handle(), buffer, sizeof buffer, 0);
        if (n <= 0) return 0;
        all.append(buffer, static_cast<std::size_t>(n));
    }
    return std::stoi(all.substr(9, 3));
}

int get_status(std::uint16_t port, const std::string& token) {
    asio::io_context io;
    auto s = connect_to(io, port);
    return get_status(s, token, false);
}

// A snapshot of `size` bytes (byte i is i % 251) in the pieces the page asks for; from
// `refuse_from` on, each piece is refused, as the lead refuses them once the network runs,
// and from `recapture_from` on, the pieces are of another capture (another client's).
// `largest` is the largest piece asked for.
struct fake_snapshot {
    std::uint64_t size, refuse_from, recapture_from = std::numeric_limits<std::uint64_t>::max();
    std::shared_ptr<std::size_t> largest = std::make_shared<std::size_t>(0);
    void operator()(std::uint64_t from, std::size_t count, std::string buffer, const http_handlers::done_piece& done) const {
        *largest = std::max(*largest, count);
        if (from >= refuse_from) {
            http_handlers::snapshot_piece refused;
            refused.http_status = 409;
            refused.error = "the network must be frozen before a snapshot";
            done(std::move(refused));
            return;
        }
        http_handlers::snapshot_piece piece;
        piece.total = size;
        piece.capture = from >= recapture_from ? 2 : 1;
        piece.bytes = std::move(buffer);
        piece.bytes.clear();
        for (auto i = from; i < std::min<std::uint64_t>(size, from + count); ++i) piece.bytes.push_back(static_cast<char>(i % 251));
        done(std::move(piece));
    }
};

struct page {
    explicit page(std::string token, fake_snapshot snapshot = {0, 0}) {
        http_options o;
        o.token = std::move(token);
        o.request_timeout = std::chrono::seconds(60);  // strangers are not closed by a timeout here
        http_handlers h;
        h.status = [] { return nlohmann::json{{"state", "idle"}}; };
        h.spikes = [](const nlohmann::json&) { return nlohmann::json::object(); };
        h.control = [](const dnnc::protocol::control_request&, http_handlers::done done) { done(200, nlohmann::json::object()); };
        h.snapshot = snapshot;
        server = std::make_unique<http_server>(o, h);
        server->start();
    }
    std::unique_ptr<http_server> server;
};

}  // namespace

TEST_CASE("idle connections without the token never lock out requests that carry it") {
    set_log_level(log_level::error);
    const std::string token(64, 'a');
    page p(token);
    const auto port = p.server->port();
    asio::io_context io;
    // Clients with the token keep 40 connections open (keep-alive).
    std::vector<tcp::socket> clients;
    for (int k = 0; k < 40; ++k) {
        clients.push_back(connect_to(io, port));
        REQUIRE(get_status(clients.back(), token, true) == 200);
    }
    // Four times the page's cap of idle strangers, and strangers with a wrong token.
    std::vector<tcp::socket> strangers;
    for (int k = 0; k < 256; ++k) strangers.push_back(connect_to(io, port));
    for (int k = 0; k < 20; ++k) CHECK(get_status(port, std::string(64, 'b')) == 401);
    // The token is served at once on new connections, and on those held.
    for (int k = 0; k < 20; ++k) CHECK(get_status(port, token) == 200);
    for (auto& c : clients) CHECK(get_status(c, token, true) == 200);
    // Strangers are renewed: still no lock-out.
    for (auto& s : strangers) s = connect_to(io, port);
    CHECK(get_status(port, token) == 200);
}

TEST_CASE("without a token, a client on this machine is served past idle connections") {
    set_log_level(log_level::error);
    page p("");
    asio::io_context io;
    std::vector<tcp::socket> idle;
    for (int k = 0; k < 256; ++k) idle.push_back(connect_to(io, p.server->port()));
    for (int k = 0; k < 10; ++k) CHECK(get_status(p.server->port(), "") == 200);
}

TEST_CASE("a snapshot streams as the chunks of one response, a piece at a time") {
    set_log_level(log_level::error);
    const std::string token(64, 'a');
    const std::uint64_t size = (11u << 19) + 7;  // 5.5 MiB and a little more: six pieces, the last short
    const fake_snapshot snapshot{size, size};
    page p(token, snapshot);
    const auto file = (std::filesystem::temp_directory_path() / ("dnnc-http-snapshot-" + std::to_string(::getpid()))).string();
    const auto got = dnnc::test::http_download(p.server->port(), "/api/snapshot", token, file);
    INFO(got.error.message());
    CHECK(got.complete());
    CHECK(got.status == 200);
    CHECK(got.content_type == "application/octet-stream");
    CHECK(got.disposition == "attachment; filename=\"snapshot.dnncs\"");
    CHECK(got.bytes == size);
    std::ifstream in(file, std::ios::binary);
    std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bool same = body.size() == size;
    for (std::uint64_t i = 0; same && i < size; ++i) same = body[i] == static_cast<char>(i % 251);
    CHECK(same);
    CHECK(*snapshot.largest == 1u << 20);
    // Without the token: 401 before anything else.
    CHECK(dnnc::test::http_download(p.server->port(), "/api/snapshot", std::string(64, 'b'), file).status == 401);
    std::filesystem::remove(file);
}

TEST_CASE("a snapshot refused mid-way (the network unfrozen) or taken again breaks the download, and refused at once is a 409") {
    set_log_level(log_level::error);
    const std::string token(64, 'a');
    const std::uint64_t size = 5u << 20;
    page p(token, fake_snapshot{size, 2u << 20});
    const auto file = (std::filesystem::temp_directory_path() / ("dnnc-http-snapshot-" + std::to_string(::getpid()))).string();
    const auto broken = dnnc::test::http_download(p.server->port(), "/api/snapshot", token, file);
    CHECK(broken.status == 200);
    CHECK(broken.error == boost::beast::http::error::partial_message);  // no last chunk
    CHECK(broken.bytes == 2u << 20);
    CHECK_FALSE(broken.complete());

    page taken_again(token, fake_snapshot{size, size, 3u << 20});
    const auto mixed = dnnc::test::http_download(taken_again.server->port(), "/api/snapshot", token, file);
    CHECK(mixed.error == boost::beast::http::error::partial_message);
    CHECK(mixed.bytes == 3u << 20);

    page frozen_never(token, fake_snapshot{size, 0});
    const auto refused = dnnc::test::http_download(frozen_never.server->port(), "/api/snapshot", token, file);
    CHECK(refused.complete());
    CHECK(refused.status == 409);
    CHECK(refused.content_type == "application/json");
    std::ifstream in(file);
    CHECK(nlohmann::json::parse(in)["error"] == "the network must be frozen before a snapshot");
    std::filesystem::remove(file);

    // HTTP/1.0 has no chunks: refused, not sent a file its client would misread.
    asio::io_context io;
    auto s = connect_to(io, p.server->port());
    asio::write(s, asio::buffer("GET /api/snapshot HTTP/1.0\r\nAuthorization: Bearer " + token + "\r\n\r\n"));
    char head[12] = {};
    CHECK(::recv(s.native_handle(), head, sizeof head, MSG_WAITALL) == 12);
    CHECK(std::string(head, 12) == "HTTP/1.0 505");
}
