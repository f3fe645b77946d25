// The binary signal codec: decode_signals accepts a packet or throws protocol_error, and a
// packet it accepts encodes to bytes that decode to the same packet. The same bytes as a
// compressed payload: decompress_signals restores at most its bound or throws
// protocol_error, and what it restores compresses to a payload that restores it again.
#include "dnnc/core/error.hpp"
#include "dnnc/protocol/signal_codec.hpp"
#include "dnnc/protocol/signal_compression.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace {

using dnnc::protocol::binary_signals;

// Values compared bit for bit: a NaN must come back as the same NaN.
bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

bool same(const binary_signals& a, const binary_signals& b) {
    if (a.from != b.from || a.epoch != b.epoch || a.tick != b.tick || a.dense != b.dense ||
        a.values.size() != b.values.size() || a.nonzero.size() != b.nonzero.size())
        return false;
    for (std::size_t i = 0; i < a.values.size(); ++i)
        if (!same_bits(a.values[i], b.values[i])) return false;
    for (std::size_t i = 0; i < a.nonzero.size(); ++i)
        if (a.nonzero[i].first != b.nonzero[i].first || !same_bits(a.nonzero[i].second, b.nonzero[i].second))
            return false;
    return true;
}

void check_decompression(std::string_view bytes) {
    constexpr std::uint32_t bound = 1u << 20;
    std::string packet, compressed, again;
    try {
        dnnc::protocol::decompress_signals(bytes, bound, packet);
    } catch (const dnnc::protocol_error&) {
        return;
    }
    if (packet.size() > bound) std::abort();
    if (!dnnc::protocol::compress_signals(packet, compressed)) return;
    dnnc::protocol::decompress_signals(compressed, bound, again);
    if (again != packet) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    check_decompression(bytes);
    binary_signals s;
    try {
        s = dnnc::protocol::decode_signals(bytes);
    } catch (const dnnc::protocol_error&) {
        return 0;
    }
    const auto again = dnnc::protocol::decode_signals(dnnc::protocol::encode_signals(s));
    if (!same(s, again)) std::abort();
    return 0;
}
