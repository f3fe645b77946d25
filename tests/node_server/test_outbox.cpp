// The outbox delivers every frame to a destination in order: straight from the sender's
// thread when nothing waits, through its io thread when the socket is full or a frame is
// held back, and the two ways never interleave.
#include "dnnc/node_server/outbox.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <thread>

using namespace dnnc::node_server;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

// A payload of `size` bytes carrying its sequence number in the first four.
std::string numbered(std::uint32_t n, std::size_t size) {
    std::string bytes(size, static_cast<char>('a' + n % 26));
    std::memcpy(bytes.data(), &n, sizeof n);
    return bytes;
}

constexpr std::size_t header = dnnc::protocol::frame_header_size;

}  // namespace

TEST_CASE("frames reach a slow reader complete and in order, also past a full socket buffer") {
    asio::io_context io;
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    const auto port = acceptor.local_endpoint().port();
    constexpr std::uint32_t frames = 3000;
    constexpr std::size_t size = 4096;  // 12 MB in all: more than loopback buffers hold
    std::vector<std::uint32_t> received;
    std::size_t damaged = 0;  // counted here: Catch's macros are for the test's own thread
    std::thread reader([&] {
        tcp::socket socket(io);
        acceptor.accept(socket);
        std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let the sender's buffer fill
        std::string frame(size, '\0');
        for (std::uint32_t k = 0; k < frames; ++k) {
            asio::read(socket, asio::buffer(frame.data(), frame.size()));
            std::uint32_t n;
            std::memcpy(&n, frame.data() + header, sizeof n);
            received.push_back(n);
            damaged += frame.substr(header + 4) != numbered(n, size - header).substr(4);
        }
    });
    {
        outbox out;
        const endpoint to{"127.0.0.1", port};
        for (std::uint32_t n = 0; n < frames; ++n) {
            // Every hundredth frame is held back a little: later ones must wait behind it.
            out.send(to, {dnnc::protocol::message_type::signals, 0, 0, numbered(n, size - header)}, n % 100 == 50 ? 2.0 : 0.0);
        }
        reader.join();
        CHECK(out.frames_lost() == 0);
    }
    CHECK(damaged == 0);
    REQUIRE(received.size() == frames);
    for (std::uint32_t n = 0; n < frames; ++n) REQUIRE(received[n] == n);
}
