#pragma once
// The METIS/Chaco `.graph` format: a header `n m [fmt [ncon]]`, then one line per vertex
// (1-based) listing `[size] [weight...] neighbour [edge-weight] ...`; `%` starts a comment
// line. fmt is up to three binary digits: vertex sizes, vertex weights, edge weights.
// Only one vertex-weight constraint (ncon = 1) is accepted; vertex sizes are read and ignored.
// Every problem is a config_error naming file:line:column.
#include "dnnc/partitioner/graph.hpp"

#include <string>
#include <string_view>

namespace dnnc::partitioner {

// Parses `text`; `file` names the source in messages. Rejects wrong counts, ids out of range,
// self-loops, repeated neighbours, non-positive edge weights, negative vertex weights,
// asymmetric lists (u lists v but v does not list u, or with another weight), and vertex or
// edge weights (each edge counted from both ends) that sum to more than 2^63 - 1.
graph parse_metis(std::string_view text, const std::string& file);

// Reads `path` (read_file: config_error when it cannot be read or is longer than
// max_file_bytes) and parses it.
graph read_metis(const std::string& path);

// The graph in METIS format; weights are written only when some differ from 1.
std::string to_metis(const graph& g);

// Writes to_metis(g) to `path`; io_error when it cannot be written.
void write_metis(const graph& g, const std::string& path);

}  // namespace dnnc::partitioner
