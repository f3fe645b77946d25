// The frame decoder. The first byte picks the set-up: bit 0 a cluster secret (then only
// tagged frames pass), bits 1-7 the size of the pieces the stream is fed in (1-128 bytes).
// The rest is the byte stream. Every frame decoded must encode back to the bytes it came
// from; decode_header/decode_body, called directly on the stream's start, must agree with
// the stream decoder.
#include "dnnc/core/error.hpp"
#include "dnnc/protocol/frame.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace {

using namespace dnnc::protocol;

void require(bool ok) {
    if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    const std::string secret = (data[0] & 1) ? "fuzz-secret" : "";
    const std::size_t piece = 1 + (data[0] >> 1);
    const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);

    // The stream decoder: fed in pieces, frames taken as they complete.
    std::string decoded;  // the frames decoded, encoded again
    std::optional<frame> first;
    bool broken = false;
    frame_decoder decoder(secret);
    for (std::size_t at = 0; at < stream.size() && !broken; at += piece) {
        decoder.feed(stream.substr(at, piece));
        try {
            while (auto f = decoder.next()) {
                require(is_known(static_cast<std::uint8_t>(f->type)));
                if (!first) first = *f;
                decoded += encode_frame(*f, secret);
            }
        } catch (const dnnc::protocol_error&) {
            broken = true;
        }
    }
    // Untagged frames encode back byte for byte; tagged ones too, the tag being a function
    // of the header and payload.
    require(stream.substr(0, decoded.size()) == decoded);

    // The two steps by hand on the start of the stream.
    try {
        const frame_header h = decode_header(stream, default_max_payload, !secret.empty());
        if (stream.size() >= frame_header_size + h.body_size()) {
            const frame f = decode_body(h, stream, stream.substr(frame_header_size, h.body_size()), secret);
            require(first && first->type == f.type && first->flags == f.flags &&
                    first->request_id == f.request_id && first->payload == f.payload);
        }
    } catch (const dnnc::protocol_error&) {
    }
    return 0;
}
