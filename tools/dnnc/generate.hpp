#pragma once
// Synthetic graphs (partitioner/generators.hpp) from named parameters, written as a METIS
// `.graph` file or as a DNNC network (`.xml`) whose synapses run from the lower neuron id
// to the higher one: `dnnc gen` and the Python module's generate. See docs/partitioner.md
// for the kinds and their parameters.
#include "dnnc/partitioner/graph.hpp"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace dnnc::cli {

struct gen_options {
    std::string kind;
    std::string output;
    std::string name;
    std::uint64_t seed = 1;
    std::size_t n = 0;
    double p = 0;
    double degree = 0;
    std::vector<std::size_t> blocks;
    double p_in = 0;
    double p_out = 0;
    std::size_t k = 0;
    double beta = 0;
    std::size_t m = 0;
    std::vector<std::size_t> dims;
    double radius = 0;
    std::vector<std::size_t> layers;
    std::set<std::string> given;  // the parameters given, by option name ("--n", "--p-in", ...)
};

// The kinds, each with the parameters it requires and accepts; "a|b" means exactly one of
// a and b.
const std::map<std::string, std::vector<std::string>>& generator_kinds();
// Every parameter's option name.
extern const std::vector<std::string> generator_parameters;

// Checks the parameters against the kind and the output's extension (usage_error), builds
// the graph and writes it to o.output.
partitioner::graph write_generated(const gen_options& o);

}  // namespace dnnc::cli
