#pragma once
// A raw connection to a node for tests that write frames by hand: with a secret it opens
// the session first (frame_auth's hello exchange), then encodes every frame in it.
#include "dnnc/protocol/frame.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <chrono>
#include <string>
#include <thread>

namespace dnnc::test {

struct raw_session {
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket socket{io};
    protocol::frame_auth auth;

    raw_session(const std::string& host, std::uint16_t port, const std::string& secret)
        : auth(secret, protocol::frame_auth::side::client) {
        socket.connect({boost::asio::ip::make_address(host), port});
        socket.set_option(boost::asio::ip::tcp::no_delay(true));
        if (!auth.required()) return;
        boost::asio::write(socket, boost::asio::buffer(auth.hello()));
        auth.accept(read());
    }

    // The next frame from the node: checked by the session, or an untagged refusal.
    protocol::frame read() {
        std::string header(protocol::frame_header_size, '\0');
        boost::asio::read(socket, boost::asio::buffer(header));
        const auto h = protocol::decode_header(header, protocol::default_max_payload, false);
        std::string body(h.body_size(), '\0');
        boost::asio::read(socket, boost::asio::buffer(body));
        if (!(h.flags & protocol::authenticated_flag)) return protocol::decode_body(h, header, body, {});
        return auth.decode(h, header, body);
    }

    // The next frame of this session, encoded.
    std::string frame(protocol::message_type type, const std::string& payload) { return auth.encode({type, 0, 0, payload}); }

    // Writes `bytes` `piece` bytes at a time.
    void write(const std::string& bytes, std::size_t piece) {
        for (std::size_t k = 0; k < bytes.size(); k += piece) {
            boost::asio::write(socket, boost::asio::buffer(bytes.data() + k, std::min(piece, bytes.size() - k)));
            if (piece < bytes.size()) std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
    }
};

}  // namespace dnnc::test
