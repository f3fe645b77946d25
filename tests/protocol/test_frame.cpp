// The frame codec: round trips, byte-by-byte feeding, bounds, HMAC authentication, and
// rejection of malformed headers.
#include "dnnc/protocol/frame.hpp"

#include <catch2/catch.hpp>

#include <random>

using namespace dnnc;
using namespace dnnc::protocol;

TEST_CASE("frames round-trip with and without a secret") {
    for (const std::string secret : {"", "s3cret"}) {
        INFO("secret '" << secret << "'");
        const frame f{message_type::submit, replace_flag, 0x0102030405060708ULL, std::string("payload\0bytes", 13)};
        const std::string bytes = encode_frame(f, secret);
        CHECK(bytes.size() == frame_header_size + 13 + (secret.empty() ? 0 : frame_tag_size));
        CHECK(bytes.substr(0, 4) == "DNNC");
        frame_decoder decoder(secret);
        decoder.feed(bytes);
        const auto got = decoder.next();
        REQUIRE(got);
        CHECK(got->type == f.type);
        CHECK(got->flags == replace_flag);
        CHECK(got->request_id == f.request_id);
        CHECK(got->payload == f.payload);
        CHECK_FALSE(decoder.next());
    }
}

TEST_CASE("a stream fed one byte at a time yields every frame in order") {
    std::string stream;
    for (std::uint64_t id = 1; id <= 5; ++id)
        stream += encode_frame({message_type::heartbeat, 0, id, std::string(id * 7, 'x')}, "k");
    frame_decoder decoder("k");
    std::vector<std::uint64_t> ids;
    for (char c : stream) {
        decoder.feed(std::string_view(&c, 1));
        while (auto f = decoder.next()) ids.push_back(f->request_id);
    }
    CHECK(ids == std::vector<std::uint64_t>{1, 2, 3, 4, 5});
}

TEST_CASE("a keyed MAC is HMAC-SHA256, tag after tag, and so is its copy") {
    // RFC 4231, test case 2, split between the two parts a tag covers.
    auto hex = [](const std::string& bytes) {
        static const char digits[] = "0123456789abcdef";
        std::string out;
        for (unsigned char c : bytes) {
            out += digits[c >> 4];
            out += digits[c & 15];
        }
        return out;
    };
    const std::string rfc = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";
    keyed_mac mac("Jefe");
    CHECK(hex(mac.tag("what do ya want ", "for nothing?")) == rfc);
    CHECK(hex(mac.tag("other", "bytes")) != rfc);
    CHECK(hex(mac.tag("", "what do ya want for nothing?")) == rfc);  // each tag starts afresh
    keyed_mac copy = mac;
    CHECK(hex(copy.tag("what do ya want for nothing?", "")) == rfc);
    CHECK(hex(mac.tag("what do ya want for nothing", "?")) == rfc);
    keyed_mac none;
    CHECK_FALSE(none);
    CHECK_THROWS_AS(none.tag("a", "b"), error);  // no key: an error, never a null context
}

TEST_CASE("oversized, unknown and malformed headers are rejected") {
    std::string big = encode_frame({message_type::status, 0, 1, std::string(100, 'a')});
    CHECK_THROWS_AS(decode_header(big, 99, false), protocol_error);
    CHECK_NOTHROW(decode_header(big, 100, false));

    std::string bad_magic = big;
    bad_magic[0] = 'X';
    CHECK_THROWS_WITH(decode_header(bad_magic, default_max_payload, false), Catch::Contains("magic"));
    std::string bad_version = big;
    bad_version[4] = 9;
    CHECK_THROWS_WITH(decode_header(bad_version, default_max_payload, false), Catch::Contains("version"));
    std::string bad_type = big;
    bad_type[5] = static_cast<char>(200);
    CHECK_THROWS_WITH(decode_header(bad_type, default_max_payload, false), Catch::Contains("unknown message type"));
    CHECK_THROWS_AS(decode_header("DNNC", default_max_payload, false), protocol_error);
}

TEST_CASE("with a secret, untagged, wrongly tagged and altered frames are rejected") {
    const frame f{message_type::configure, 0, 9, "<node-config/>"};
    frame_decoder plain_then_keyed("key");
    plain_then_keyed.feed(encode_frame(f));
    CHECK_THROWS_WITH(plain_then_keyed.next(), Catch::Contains("not authenticated"));

    frame_decoder wrong_key("key");
    wrong_key.feed(encode_frame(f, "other"));
    CHECK_THROWS_WITH(wrong_key.next(), Catch::Contains("authentication failed"));

    std::string altered = encode_frame(f, "key");
    altered[frame_header_size + 2] ^= 1;
    frame_decoder tampered("key");
    tampered.feed(altered);
    CHECK_THROWS_WITH(tampered.next(), Catch::Contains("authentication failed"));

    frame_decoder keyless;
    keyless.feed(encode_frame(f, "key"));
    CHECK_THROWS_WITH(keyless.next(), Catch::Contains("no secret"));
}

TEST_CASE("random bytes never decode into a frame without an error") {
    std::mt19937 gen(3);
    for (int round = 0; round < 2000; ++round) {
        std::string junk(static_cast<std::size_t>(gen() % 64), '\0');
        for (auto& c : junk) c = static_cast<char>(gen());
        frame_decoder decoder("k", 1024);
        decoder.feed(junk);
        try {
            while (decoder.next()) {
            }
        } catch (const protocol_error&) {
        }
    }
    SUCCEED("no crash");
}

TEST_CASE("sha256_hex matches the standard test vector") {
    CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

#include "dnnc/protocol/signal_codec.hpp"

TEST_CASE("binary signal packets round-trip, dense and sparse, and reject truncation") {
    binary_signals dense{"n1", 0xfedcba9876543210u, 42, true, {0.5f, -1.0f, 3.25f}, {}};
    const auto d = decode_signals(encode_signals(dense));
    CHECK(d.from == "n1");
    CHECK(d.epoch == 0xfedcba9876543210u);
    CHECK(d.tick == 42);
    CHECK(d.dense);
    CHECK(d.values == dense.values);
    binary_signals sparse{"node-7", 1, -1, false, {}, {{3, 1.0f}, {900, -2.5f}}};
    const auto s = decode_signals(encode_signals(sparse));
    CHECK_FALSE(s.dense);
    CHECK(s.nonzero == sparse.nonzero);
    const std::string bytes = encode_signals(dense);
    for (std::size_t cut = 0; cut < bytes.size(); ++cut)
        CHECK_THROWS_AS(decode_signals(bytes.substr(0, cut)), protocol_error);
    CHECK_THROWS_AS(decode_signals(bytes + "x"), protocol_error);
    std::string first_version = bytes;
    first_version[0] = 1;
    CHECK_THROWS_WITH(decode_signals(first_version), Catch::Contains("version 1, expected 2"));
}

TEST_CASE("signals encoded into a reused buffer are the same bytes, and the buffer keeps its memory") {
    binary_signals big{"n1", 7, 3, true, std::vector<float>(1000, 0.25f), {}};
    std::string buffer;
    encode_signals(big.from, big.epoch, big.tick, big.dense, big.values, big.nonzero, buffer);
    CHECK(buffer == encode_signals(big));
    const auto* memory = buffer.data();
    const auto capacity = buffer.capacity();
    binary_signals small{"n1", 7, 4, false, {}, {{5, 1.5f}}};
    encode_signals(small.from, small.epoch, small.tick, small.dense, small.values, small.nonzero, buffer);
    CHECK(buffer == encode_signals(small));
    CHECK(buffer.data() == memory);
    CHECK(buffer.capacity() == capacity);
}

TEST_CASE("a padded packet's length comes from its header, and decoding into reused buffers gives the same packet") {
    const binary_signals sparse{"node-7", 9, 12, false, {}, {{3, 1.0f}, {900, -2.5f}}};
    const auto bytes = encode_signals(sparse);
    CHECK(signals_size(6, false, 2) == bytes.size());
    // What an MPI receive holds: the packet, then padding up to its size class.
    std::vector<char> padded(256, 'x');
    CHECK(encode_signals(sparse.from, sparse.epoch, sparse.tick, sparse.dense, sparse.values, sparse.nonzero, padded.data()) ==
          bytes.size());
    const std::string_view received(padded.data(), padded.size());
    REQUIRE(signals_length(received) == bytes.size());
    CHECK(received.substr(0, bytes.size()) == bytes);
    for (std::size_t cut = 0; cut < 24 + 6; ++cut) CHECK_THROWS_AS(signals_length(bytes.substr(0, cut)), protocol_error);

    binary_signals reused{"", 0, 0, true, std::vector<float>(1000, 1.0f), {}};
    const auto* memory = reused.values.data();
    decode_signals(encode_signals({"n1", 2, 5, true, {0.5f, 0.75f}, {}}), reused);
    CHECK(reused.values == std::vector<float>{0.5f, 0.75f});
    CHECK(reused.values.data() == memory);
    decode_signals(received.substr(0, signals_length(received)), reused);
    CHECK(reused.from == "node-7");
    CHECK(reused.epoch == 9);
    CHECK(reused.tick == 12);
    CHECK_FALSE(reused.dense);
    CHECK(reused.values.empty());
    CHECK(reused.nonzero == sparse.nonzero);
}

TEST_CASE("a session's frames pass only on their own connection, in order, in their direction") {
    using protocol::frame_auth;
    auto connect = [](const std::string& client_secret, const std::string& server_secret) {
        frame_auth client(client_secret, frame_auth::side::client), server(server_secret, frame_auth::side::server);
        auto read = [](const std::string& bytes, frame_auth& at) {
            const auto h = protocol::decode_header(bytes, protocol::default_max_payload, false);
            return at.decode(h, bytes, std::string_view(bytes).substr(protocol::frame_header_size));
        };
        const auto answer = server.answer(read(client.hello(), server));
        client.accept(read(answer, client));
        return std::make_tuple(std::move(client), std::move(server), read);
    };
    auto [client, server, read] = connect("k", "k");
    CHECK(client.established());
    CHECK(server.established());
    const auto step = client.encode({protocol::message_type::control, 0, 7, R"({"command":"step","ticks":10})"});
    CHECK(read(step, server).payload == R"({"command":"step","ticks":10})");
    // Replayed on its own connection: out of order.
    CHECK_THROWS_WITH(read(step, server), Catch::Contains("frame authentication failed"));
    // On another connection with the same secret: another session key.
    auto [other_client, other_server, other_read] = connect("k", "k");
    CHECK_THROWS_WITH(other_read(step, other_server), Catch::Contains("frame authentication failed"));
    // Reflected back to the client that sent it: the direction is in the tag.
    auto [c2, s2, r2] = connect("k", "k");
    const auto mine = c2.encode({protocol::message_type::status, 0, 1, ""});
    CHECK_THROWS_WITH(r2(mine, c2), Catch::Contains("frame authentication failed"));
    // Replies pass the other way, and frames before the hello do not pass at all.
    CHECK(r2(s2.encode({protocol::message_type::status_reply, 0, 1, "ok"}), c2).payload == "ok");
    frame_auth fresh("k", frame_auth::side::server);
    CHECK_THROWS_WITH(read(step, fresh), Catch::Contains("no session"));
    // A hello tagged with another secret opens no session.
    CHECK_THROWS(connect("k", "not k"));
}

TEST_CASE("handshake frames pass only where the handshake expects them, however valid their tag") {
    using protocol::frame_auth;
    using protocol::message_type;
    auto read = [](const std::string& bytes, frame_auth& at) {
        const auto h = protocol::decode_header(bytes, protocol::default_max_payload, false);
        return at.decode(h, bytes, std::string_view(bytes).substr(protocol::frame_header_size));
    };
    frame_auth client("k", frame_auth::side::client), server("k", frame_auth::side::server);
    const std::string hello = client.hello();
    const std::string reply = server.answer(read(hello, server));
    // A server's captured hello_reply sent to a server as a first frame, or to a client that
    // sent no hello.
    frame_auth other_server("k", frame_auth::side::server), other_client("k", frame_auth::side::client);
    CHECK_THROWS_WITH(read(reply, other_server), Catch::Contains("an unexpected hello-reply"));
    CHECK_THROWS_WITH(read(reply, other_client), Catch::Contains("an unexpected hello-reply"));
    // A hello sent to a client; a hello, or a hello_reply, once the session is open.
    CHECK_THROWS_WITH(read(hello, client), Catch::Contains("an unexpected hello"));
    client.accept(read(reply, client));
    CHECK_THROWS_WITH(read(reply, client), Catch::Contains("an unexpected hello-reply"));
    CHECK_THROWS_WITH(read(hello, server), Catch::Contains("an unexpected hello"));
    // Without a secret there is no handshake at all.
    frame_auth plain_server("", frame_auth::side::server), plain_client("", frame_auth::side::client);
    for (auto type : {message_type::hello, message_type::hello_reply}) {
        const auto untagged = protocol::encode_frame({type, 0, 1, std::string(32, 'n')});
        CHECK_THROWS_AS(read(untagged, plain_server), protocol_error);
        CHECK_THROWS_AS(read(untagged, plain_client), protocol_error);
    }
    // The session still works after the refusals.
    CHECK(read(client.encode({message_type::status, 0, 2, "x"}), server).payload == "x");
}
