#pragma once
// A kind="list" projection's connections (model.hpp, connection_list) in and out of their
// two forms: a NumPy file the user writes, and the binary <connections> child the writer
// emits when there is no file (a node's share of the list travels so). Private to
// dnnc_protocol.
#include "dnnc/model/expand.hpp"
#include "dnnc/model/model.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace dnnc::protocol {

// The most connections a list may hold: as many as a network may have synapses.
inline constexpr std::uint64_t max_listed_connections = model::expand_limits{}.max_synapses;

// Reads a connections file: a .npy 2-D array of n rows (source, target, weight, delay in ms),
// dtype '<f8' or '<f4', C order. Sources and targets are whole numbers >= 0 (positions in
// `from` and `to`; their upper bounds are check_network's), weights finite, delays rounded
// to ticks of `dt` as delay-ms is and within 1..65535 ticks. Throws config_error located at
// `where`, naming the file and, for a bad value, its row.
model::connection_list read_connections_file(const std::string& path, double dt, const source_location& where);

// The inline form: base64 (RFC 4648, with padding) of, little-endian,
//   u32 R, then R runs (u32 target, u32 count) with targets strictly ascending and counts
//   >= 1, then the N = sum of counts sources (u32), weights (f32) and delays (u16, ticks),
// each column in canonical order: 10 bytes a connection.
std::string encode_connections(const model::connection_list& list);
// Decodes and checks the inline form (whitespace in the text is skipped); throws
// config_error located at `where` for any text that is not exactly such a list, with finite
// weights and delays of at least one tick.
model::connection_list decode_connections(std::string_view base64, const source_location& where);

}  // namespace dnnc::protocol
