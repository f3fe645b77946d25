#pragma once
// LZ4 compression of a signals frame's payload, on links whose decision says so
// (peer_route::compress). A compressed payload is marked by the frame's `compressed_flag`
// and laid out as
//   u32 size of the packet | LZ4 block of the packet (signal_codec.hpp)
// Little-endian. Pure code: the sender compresses, the receiver restores the same bytes.
#include "dnnc/core/error.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace dnnc::protocol {

// Compresses `packet` into `out` (cleared first, its memory kept). False, with `out` left
// unspecified, when compression would not make the payload smaller: the packet then goes
// as it is, without the flag.
bool compress_signals(std::string_view packet, std::string& out);

// The packet a compressed payload holds, into `out` (cleared first, its memory kept). Throws
// protocol_error when the payload is malformed or says the packet is larger than
// `max_packet` bytes (checked before anything is allocated: a small payload cannot make the
// receiver hold more than that).
void decompress_signals(std::string_view payload, std::uint32_t max_packet, std::string& out);

}  // namespace dnnc::protocol
