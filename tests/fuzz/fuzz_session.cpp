// The handshake and session state machine (frame_auth) over sequences of frames on one
// connection and across connections. A legitimate client and a server (each a frame_auth,
// reading its stream the way dnnc-node's connections do: header, body, decode, a hello
// answered) talk while the input interleaves what an attacker on the wire adds: frames
// captured earlier (on this connection or another) replayed, frames forged with the secret's
// own tag, another key's or none, bit flips of the client's frames, and raw bytes.
//
// Byte 0: bit 0 a cluster secret; bits 1-7 the size of the pieces the server's stream is fed
// in (1-128 bytes). Then operations, one byte each followed by their arguments:
//   0 T L ...   the client sends a request of type T with the next L bytes as its payload
//   1 K         the attacker replays captured frame K (mod the number captured)
//   2 T F L ... the attacker forges a frame of type T (F mod 3: tagged with the secret,
//               with another key, untagged) with the next L bytes as its payload
//   3 L ...     the attacker sends the next L bytes as they are
//   4 P         the attacker sends the client's last frame with byte P (mod its size) flipped
//   5 T         the server replies to the client with type T
//   6 K         the attacker sends captured frame K to the client
//   7           a new connection (the client opens it with its hello when there is a secret)
//   8           a new connection the attacker opens: its first frame is the attacker's
//
// What must hold (anything else aborts):
// - only dnnc::error is ever thrown;
// - a handshake frame is accepted only where the handshake expects it (a server's first
//   frame, the client's answer to its own hello), and never without a secret;
// - with a secret, every other frame either end accepts is the next one its legitimate peer
//   sent on this connection, in order: nothing replayed, forged or altered gets through;
// - a refused frame ends the connection (as a node drops it), so nothing is read after it.
#include "dnnc/core/error.hpp"
#include "dnnc/protocol/frame.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace dnnc::protocol;

void require(bool ok) {
    if (!ok) std::abort();
}

constexpr std::uint32_t max_payload = 4096;

bool is_handshake(message_type t) { return t == message_type::hello || t == message_type::hello_reply; }

bool same(const frame& a, const frame& b) {
    return a.type == b.type && a.flags == b.flags && a.request_id == b.request_id && a.payload == b.payload;
}

// One end's reading of its stream: frames as they complete, checked by its frame_auth. A
// server answers a hello; a client takes the answer to its own.
struct end {
    frame_auth auth;
    bool is_server = false;
    bool secret = false;
    std::string in;
    bool closed = false;
    bool hello_taken = false;        // a handshake frame was accepted on this connection
    std::deque<frame> expected;      // what the legitimate peer sent, not read yet
    std::string* answers = nullptr;  // a server's hello_reply goes to its client's stream

    void read(std::size_t piece, std::string_view bytes) {
        for (std::size_t at = 0; at < bytes.size() && !closed; at += piece) {
            in.append(bytes.substr(at, piece));
            pump();
        }
    }

    void pump() {
        while (!closed && in.size() >= frame_header_size) {
            try {
                const frame_header h = decode_header(in, max_payload, secret);
                if (in.size() < frame_header_size + h.body_size()) return;
                const frame f = auth.decode(h, in, std::string_view(in).substr(frame_header_size, h.body_size()));
                in.erase(0, frame_header_size + h.body_size());
                take(f);
            } catch (const dnnc::error&) {
                closed = true;  // refused: the connection ends
            }
        }
    }

    void take(const frame& f) {
        if (is_handshake(f.type)) {
            require(secret && !hello_taken);
            require(f.type == (is_server ? message_type::hello : message_type::hello_reply));
            hello_taken = true;
            if (is_server) {
                *answers += auth.answer(f);
            } else {
                auth.accept(f);
            }
            return;
        }
        if (!secret) return;  // without a secret every well-formed frame passes
        require(auth.established());
        require(!expected.empty() && same(expected.front(), f));
        expected.pop_front();
    }
};

struct connection {
    end client, server;
    std::string client_last;

    explicit connection(const std::string& secret) {
        client.auth = frame_auth(secret, frame_auth::side::client);
        server.auth = frame_auth(secret, frame_auth::side::server);
        server.is_server = true;
        client.secret = server.secret = !secret.empty();
        server.answers = &client.in;
    }
};

struct reader {
    std::string_view data;
    std::size_t at = 0;
    bool done() const { return at >= data.size(); }
    std::uint8_t byte() { return done() ? 0 : static_cast<std::uint8_t>(data[at++]); }
    std::string bytes(std::size_t n) {
        const auto s = data.substr(std::min(at, data.size()), n);
        at += n;
        return std::string(s);
    }
};

message_type type_of(std::uint8_t b) {
    // Known types only: an unknown one is refused by the header decoder, as it should be.
    return static_cast<message_type>(1 + b % static_cast<std::uint8_t>(message_type::relay_reply));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    const std::string secret = (data[0] & 1) ? "fuzz-secret" : "";
    const std::size_t piece = 1 + (data[0] >> 1);
    reader in{std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1)};

    std::vector<std::string> captured;  // every frame that passed on the wire, any connection
    std::uint64_t next_id = 1;
    auto open = [&](bool by_client) {
        auto c = std::make_unique<connection>(secret);
        if (by_client && !secret.empty()) {
            const std::string hello = c->client.auth.hello();
            captured.push_back(hello);
            c->server.read(piece, hello);
            require(!c->server.closed);
            captured.push_back(c->client.in);  // the server's hello_reply
            c->client.pump();
            require(!c->client.closed && c->client.auth.established() && c->server.auth.established());
        }
        return c;
    };
    // A legitimate frame from one end to the other, captured on the way.
    auto send = [&](end& from, end& to, const frame& f) {
        std::string bytes = from.auth.encode(f);
        captured.push_back(bytes);
        to.expected.push_back(f);
        to.read(piece, bytes);
        return bytes;
    };
    auto c = open(true);
    while (!in.done()) {
        // The legitimate ends speak only in a session they opened (with a secret).
        const bool client_can = secret.empty() || c->client.auth.established();
        const bool server_can = secret.empty() || c->server.auth.established();
        switch (in.byte() % 9) {
        case 0: {  // a legitimate request
            const frame f{type_of(in.byte()), 0, next_id++, in.bytes(in.byte())};
            if (is_handshake(f.type) || !client_can) break;  // never sent as a request
            c->client_last = send(c->client, c->server, f);
            break;
        }
        case 1:
            if (!captured.empty()) c->server.read(piece, captured[in.byte() % captured.size()]);
            break;
        case 2: {
            const auto type = type_of(in.byte());
            const auto how = in.byte() % 3;
            const frame f{type, 0, next_id++, in.bytes(in.byte())};
            c->server.read(piece, encode_frame(f, how == 0 ? secret : how == 1 ? std::string("other-key") : std::string()));
            break;
        }
        case 3:
            c->server.read(piece, in.bytes(in.byte()));
            break;
        case 4:
            if (!c->client_last.empty()) {
                std::string bytes = c->client_last;
                bytes[in.byte() % bytes.size()] ^= static_cast<char>(1 + in.byte() % 255);
                c->server.read(piece, bytes);
            }
            break;
        case 5: {  // a reply: only while the server still serves the connection
            const frame f{type_of(in.byte()), 0, next_id++, "reply"};
            if (c->server.closed || !server_can || is_handshake(f.type)) break;
            send(c->server, c->client, f);
            break;
        }
        case 6:
            if (!captured.empty()) c->client.read(piece, captured[in.byte() % captured.size()]);
            break;
        case 7:
            c = open(true);
            break;
        default:
            c = open(false);
        }
    }
    return 0;
}
