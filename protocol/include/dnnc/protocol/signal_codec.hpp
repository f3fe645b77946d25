#pragma once
// The binary form of a signal packet (the default on the wire; signals.xsd is the XML form):
//   u8  version (2) | u8 flags (bit 0: dense) | u16 sender id length | sender id bytes
//   u64 epoch | i64 tick | u32 count | dense: count x f32 | sparse: count x (u32 position, f32 value)
// Little-endian. Dense packets carry the sender's outputs in the receiver's order; sparse
// ones only the non-zero values with their positions in that order. The epoch names the
// installation of the network the packet belongs to (node_config::epoch): a packet sent
// before a network was replaced or restored is recognised as such and dropped.
#include "dnnc/core/error.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dnnc::protocol {

struct binary_signals {
    std::string from;
    std::uint64_t epoch = 0;
    std::int64_t tick = 0;
    bool dense = true;
    std::vector<float> values;
    std::vector<std::pair<std::uint32_t, float>> nonzero;
};

std::string encode_signals(const binary_signals& s);
// The same bytes into `out`, which is cleared first but keeps its memory: a sender that
// reuses one buffer per peer allocates nothing once it has grown to its packets' size.
void encode_signals(std::string_view from, std::uint64_t epoch, std::int64_t tick, bool dense, const std::vector<float>& values,
                    const std::vector<std::pair<std::uint32_t, float>>& nonzero, std::string& out);
// The same bytes at `out`, which has room for signals_size(from.size(), dense, count);
// returns how many were written.
std::size_t encode_signals(std::string_view from, std::uint64_t epoch, std::int64_t tick, bool dense,
                           const std::vector<float>& values, const std::vector<std::pair<std::uint32_t, float>>& nonzero,
                           char* out);
// The size of an encoded packet of `count` values.
std::size_t signals_size(std::size_t from_size, bool dense, std::size_t count);
// The size of the packet that `bytes` begins with, from its header (bytes past it are not
// read); throws protocol_error when even the header is incomplete.
std::size_t signals_length(std::string_view bytes);

// Throws protocol_error for a truncated or inconsistent payload.
binary_signals decode_signals(std::string_view bytes);
// The same into `out`, whose buffers are reused: nothing is allocated once they have grown.
void decode_signals(std::string_view bytes, binary_signals& out);

}  // namespace dnnc::protocol
