#include "dnnc/protocol/signal_compression.hpp"

#include "bytes.hpp"

#include <lz4.h>

namespace dnnc::protocol {

namespace {
constexpr std::size_t size_field = sizeof(std::uint32_t);
}  // namespace

bool compress_signals(std::string_view packet, std::string& out) {
    if (packet.size() > LZ4_MAX_INPUT_SIZE) return false;
    const int input = static_cast<int>(packet.size());
    out.resize(size_field + static_cast<std::size_t>(LZ4_compressBound(input)));
    byte_writer(out.data()).put(static_cast<std::uint32_t>(packet.size()));
    // Room for a payload smaller than the packet only: a block that would not fit fails.
    if (packet.size() <= size_field + 1) return false;
    const int room = static_cast<int>(packet.size() - size_field - 1);
    const int written = LZ4_compress_default(packet.data(), out.data() + size_field, input, room);
    if (written <= 0) return false;
    out.resize(size_field + static_cast<std::size_t>(written));
    return true;
}

void decompress_signals(std::string_view payload, std::uint32_t max_packet, std::string& out) {
    byte_reader r(payload, "compressed signal packet");
    const auto size = r.get<std::uint32_t>();
    if (size > max_packet)
        throw protocol_error("compressed signal packet of " + std::to_string(size) + " bytes, more than the " +
                             std::to_string(max_packet) + " allowed");
    const auto block = r.take(r.left());
    if (block.size() > static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE)) throw protocol_error("compressed signal packet too large");
    out.resize(size);
    const int got = LZ4_decompress_safe(block.data(), out.data(), static_cast<int>(block.size()), static_cast<int>(size));
    if (got < 0 || static_cast<std::uint32_t>(got) != size)
        throw protocol_error("compressed signal packet is corrupt (it does not decompress to its stated size)");
}

}  // namespace dnnc::protocol
