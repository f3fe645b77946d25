#pragma once
// What the partitioner benchmarks that compare against 4elt share: the path of the real
// graph (../shared/data/4elt.graph beside the checkout, or --data PATH), the graphs they
// run on, 4elt and a generated neural graph, and how a flag's count is read.
#include "dnnc/partitioner/generators.hpp"
#include "dnnc/partitioner/metis_io.hpp"

#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace dnnc::bench {

struct named_graph {
    std::string name;
    partitioner::graph g;
};

// `text` as a count of at least 1, or none when it is anything else ("3x", "0", "-2").
inline std::optional<unsigned long long> positive_count(const std::string& text) {
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    try {
        const unsigned long long n = std::stoull(text);
        if (n >= 1) return n;
    } catch (const std::exception&) {  // out of range
    }
    return std::nullopt;
}

// The 4elt file the command line names (`name [--data PATH]`), or none after a usage line.
inline std::optional<std::string> data_path(int argc, char** argv, const char* name) {
    if (argc == 3 && std::string(argv[1]) == "--data") return std::string(argv[2]);
    if (argc == 1) return std::string(DNNC_SOURCE_DIR "/../shared/data/4elt.graph");
    std::cerr << "usage: " << name << " [--data 4elt.graph]\n";
    return std::nullopt;
}

// 4elt (read from `data`) and feed-forward-16k: 4 layers of 4,000 neurons, p = 0.002, seed 1.
inline std::vector<named_graph> benchmark_graphs(const std::string& data) {
    std::vector<named_graph> graphs;
    graphs.push_back({"4elt", partitioner::read_metis(data)});
    graphs.push_back({"feed-forward-16k", partitioner::layered_feed_forward({4000, 4000, 4000, 4000}, 0.002, 1)});
    return graphs;
}

}  // namespace dnnc::bench
