#pragma once
// The lead's log of structural plasticity (one row per population with synaptic elements at
// every structural update), page by page: what `dnnc run --structure` writes and the Python
// module's structure() returns.
#include "client.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace dnnc::cli {

struct structure_row {
    double t_ms = 0;
    std::string population;
    double mean_ca = 0;
    std::uint64_t connections_in = 0, created = 0, deleted = 0;
};

// f(row) for every row the lead holds, oldest first; error when the lead dropped some.
void read_structure(const client_options& o, const std::string& lead, const std::function<void(const structure_row&)>& f);

// f(structural synapse id, source, target) for every live grown synapse of the frozen network,
// in the order they were made, page by page from the node that runs the first neuron with
// synaptic elements (every such node lists them all).
void read_grown(const client_options& o, const std::string& lead,
                const std::function<void(const std::string& synapse, const std::string& source, const std::string& target)>& f);

// Writes them to `path` as CSV (header t_ms,population,mean_ca,connections_in,created,deleted;
// the calcium with 17 significant digits, which round-trip a double); returns how many rows.
std::uint64_t save_structure(const client_options& o, const std::string& lead, const std::string& path);

}  // namespace dnnc::cli
