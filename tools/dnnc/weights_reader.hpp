#pragma once
// The plastic synapses' weights of the frozen network a lead runs, page by page from one node
// after another through the lead (lead.cpp): neither the lead nor the client ever holds a
// projection's weights at once. What `dnnc weights`, `dnnc run --weights` and the Python
// module's weights() read; and their histograms, binned by the nodes.
#include "client.hpp"

#include <functional>
#include <string>

namespace dnnc::cli {

struct weight_row {
    std::string projection, source, target;  // the projection's id (or projection[i], synapse[i]); neuron references
    float weight = 0;
};

// f(row) for every plastic synapse (only those of `projection` unless it is empty), node by
// node, each target's synapses in canonical order. Throws usage_error for a `projection`
// that names no plastic projection, and the lead's refusal while the network runs.
void read_weights(const client_options& o, const std::string& lead, const std::string& projection,
                  const std::function<void(const weight_row&)>& f);

// Writes them to `path` as CSV (header projection,source,target,weight; weights with 9
// significant digits, which round-trip a float32); returns how many rows it wrote.
std::uint64_t save_weights(const client_options& o, const std::string& lead, const std::string& path, const std::string& projection);

// The frozen network's plastic weights binned per projection, as the lead's status shows them
// (docs/live.md, "Weights"): {"tick", "bins", "projections": [{"projection", "model", "lo",
// "hi", "synapses", "bins", "min", "max"}...]}. Each node bins its own synapses.
nlohmann::json read_weight_histograms(const client_options& o, const std::string& lead);

// Where `dnnc run --weights PATH --weights-every T` writes the weights after `tick` ticks:
// beside PATH, its name with "-TICK" before the extension (w.csv: w-1000.csv).
std::string weights_sample_path(const std::string& path, std::int64_t tick);

}  // namespace dnnc::cli
