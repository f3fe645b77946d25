// A session's tags: frame_auth encoding and decoding a frame (one HMAC-SHA256 tag each way,
// keyed_mac: the key's context re-initialised per tag) against its peer measured in the
// same run, the same tags made the way frames made them before: a copy of the keyed
// context per tag (EVP_MAC_CTX_dup), about ten allocations each. Frames of 64 bytes (a
// lockstep tick's packet) and 4 KiB. Prints microseconds a frame (encode + decode) for
// both, the ratio, and whether the tags agree (exit 1 if not).
//   bench_frames [--frames N]   (default 200,000 of each size; anything else exits 2)
#include "dnnc/protocol/frame.hpp"

#include <openssl/evp.h>
#include <openssl/params.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

using namespace dnnc::protocol;
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) { return std::chrono::duration<double>(clock_type::now() - t0).count(); }

// The peer: HMAC(key, a || b) on a copy of a keyed context, made and freed per tag.
struct copied_mac {
    EVP_MAC_CTX* keyed = nullptr;
    explicit copied_mac(const std::string& key) {
        EVP_MAC* algorithm = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
        keyed = EVP_MAC_CTX_new(algorithm);
        EVP_MAC_free(algorithm);
        char digest[] = "SHA256";
        const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0), OSSL_PARAM_construct_end()};
        EVP_MAC_init(keyed, reinterpret_cast<const unsigned char*>(key.data()), key.size(), params);
    }
    ~copied_mac() { EVP_MAC_CTX_free(keyed); }
    std::string tag(std::string_view a, std::string_view b) const {
        EVP_MAC_CTX* ctx = EVP_MAC_CTX_dup(keyed);
        unsigned char out[EVP_MAX_MD_SIZE];
        std::size_t length = 0;
        EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(a.data()), a.size());
        EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(b.data()), b.size());
        EVP_MAC_final(ctx, out, &length, sizeof out);
        EVP_MAC_CTX_free(ctx);
        return std::string(reinterpret_cast<const char*>(out), length);
    }
};

// A session between a client and a server end.
struct session {
    frame_auth client{"the cluster's secret", frame_auth::side::client};
    frame_auth server{"the cluster's secret", frame_auth::side::server};
    session() {
        const std::string hello = client.hello();
        const auto h = decode_header(hello, default_max_payload, true);
        const std::string reply = server.answer(server.decode(h, hello, std::string_view(hello).substr(frame_header_size)));
        const auto r = decode_header(reply, default_max_payload, true);
        client.accept(client.decode(r, reply, std::string_view(reply).substr(frame_header_size)));
    }
};

struct timed {
    double us_keyed = 0, us_copied = 0;
    bool same = true;
};

timed measure(std::size_t payload_bytes, std::size_t frames) {
    timed t;
    const frame f{message_type::signals, 0, 7, std::string(payload_bytes, 'x')};
    {
        session s;
        std::size_t delivered = 0;
        const auto t0 = clock_type::now();
        for (std::size_t i = 0; i < frames; ++i) {
            const std::string bytes = s.client.encode(f);
            const auto h = decode_header(bytes, default_max_payload, true);
            delivered += s.server.decode(h, bytes, std::string_view(bytes).substr(frame_header_size)).payload.size();
        }
        t.us_keyed = seconds_since(t0) / static_cast<double>(frames) * 1e6;
        t.same = delivered == frames * payload_bytes;
    }
    // The peer: the same frame's bytes and the same two tags, by copies of a keyed context.
    const copied_mac mac("a session key of 32 bytes, say..");
    const keyed_mac check("a session key of 32 bytes, say..");
    const std::string body = encode_frame(f);
    const std::string prefix = "C" + std::string(8, '\0') + body.substr(0, frame_header_size);
    std::size_t agree = 0;
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < frames; ++i) {
        const std::string sent = body + mac.tag(prefix, f.payload);
        agree += std::memcmp(mac.tag(prefix, f.payload).data(), sent.data() + body.size(), frame_tag_size) == 0;
    }
    t.us_copied = seconds_since(t0) / static_cast<double>(frames) * 1e6;
    keyed_mac again = check;
    t.same = t.same && agree == frames && again.tag(prefix, f.payload) == mac.tag(prefix, f.payload);
    return t;
}

}  // namespace

int main(int argc, char** argv) {
    std::size_t frames = 200000;
    for (int i = 1; i < argc; ++i) {
        const bool given = std::strcmp(argv[i], "--frames") == 0 && i + 1 < argc;
        char* end = nullptr;
        if (given) frames = std::strtoull(argv[++i], &end, 10);
        if (!given || frames == 0 || *end != '\0') {
            std::fprintf(stderr, "usage: bench_frames [--frames N], N > 0\n");
            return 2;
        }
    }
    bool all_same = true;
    std::printf("{");
    const char* separator = "";
    for (const std::size_t bytes : {std::size_t{64}, std::size_t{4096}}) {
        const timed t = measure(bytes, frames);
        all_same = all_same && t.same;
        std::printf("%s\"%zu\": {\"us_a_frame\": %.3f, \"us_a_frame_context_copied\": %.3f, \"ratio\": %.2f, \"same_tags\": %s}", separator,
                    bytes, t.us_keyed, t.us_copied, t.us_copied / t.us_keyed, t.same ? "true" : "false");
        separator = ", ";
    }
    std::printf("}\n");
    return all_same ? 0 : 1;
}
