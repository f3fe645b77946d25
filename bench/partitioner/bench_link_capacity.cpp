// bench_link_capacity: placement when one link is slow. On 4elt and a generated neural graph
// (layered feed-forward, 4 layers of 4000), over rings and stars of 4 and 8 nodes of equal
// capacity whose link 0 - 1 (ring) or hub - last leaf (star) runs at 10 Mbit/s and the others
// at 1 Gbit/s, three mappings:
//   dnnc blind: assign() on the cluster without link capacities (what dnnc did before);
//   dnnc aware: assign() with them (place_parts minimises the largest link load);
//   Scotch:     gmap onto a decomposition-defined target architecture that amk_grf builds from
//               the cluster as a graph (vertex weight = node capacity, edge weight = 1 Gbit/s ÷
//               link bandwidth: Scotch minimises Σ edge weight × path weight, so the slow link
//               costs as much as 100 fast hops), imbalance bound -b0.03 like dnnc's default.
// All three are measured by evaluate() on the cluster with capacities: largest link load
// (cut weight per Gbit/s on the busiest link), cut, condition-1 violations, imbalance, time.
// Scotch's graphs are written in its own format here; its tools are found on the PATH
// (Debian's scotch names gmap scotch_gmap).
#include "bench_graphs.hpp"
#include "dnnc/partitioner/assign.hpp"
#include "dnnc/partitioner/generators.hpp"
#include "dnnc/partitioner/metis_io.hpp"
#include "dnnc/partitioner/metrics.hpp"
#include "dnnc/partitioner/physical.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

namespace dp = dnnc::partitioner;
namespace fs = std::filesystem;

namespace {

using dnnc::bench::named_graph;

struct named_cluster {
    std::string name;
    dp::physical_cluster cluster;  // link capacities in Gbit/s
};

constexpr double fast = 1.0;   // Gbit/s
constexpr double slow = 0.01;  // 10 Mbit/s

named_cluster ring(std::uint32_t nodes) {
    named_cluster r{"ring " + std::to_string(nodes), {}};
    r.cluster.capacity.assign(nodes, 1.0);
    for (std::uint32_t a = 0; a < nodes; ++a) {
        r.cluster.names.push_back("n" + std::to_string(a));
        r.cluster.links.emplace_back(a, (a + 1) % nodes);
        r.cluster.link_capacity.push_back(a == 0 ? slow : fast);
    }
    return r;
}

named_cluster star(std::uint32_t nodes) {  // node 0 is the hub
    named_cluster s{"star " + std::to_string(nodes), {}};
    s.cluster.capacity.assign(nodes, 1.0);
    s.cluster.names.push_back("hub");
    for (std::uint32_t leaf = 1; leaf < nodes; ++leaf) {
        s.cluster.names.push_back("n" + std::to_string(leaf));
        s.cluster.links.emplace_back(0, leaf);
        s.cluster.link_capacity.push_back(leaf + 1 == nodes ? slow : fast);
    }
    return s;
}

// Scotch's graph format: a version line, counts (arcs, each edge twice), base 0 and flags
// "011" (edge and vertex weights), then per vertex: weight, degree, (edge weight, neighbour)*.
void write_scotch_graph(const dp::graph& g, const fs::path& file) {
    std::ofstream out(file);
    out << "0\n" << g.vertex_count() << ' ' << 2 * g.edge_count() << "\n0 011\n";
    for (dp::vertex_id v = 0; v < g.vertex_count(); ++v) {
        out << g.vertex_weight(v) << ' ' << g.degree(v);
        const dp::weight_t* w = g.edge_weights_begin(v);
        for (const dp::vertex_id* u = g.neighbors_begin(v); u != g.neighbors_end(v); ++u, ++w) out << ' ' << *w << ' ' << *u;
        out << '\n';
    }
    if (!out.flush()) throw std::runtime_error("cannot write " + file.string());
}

// The cluster as a graph for amk_grf: node capacities as vertex weights, fast ÷ bandwidth as
// link weights (whole numbers, as Scotch wants).
dp::graph architecture_graph(const dp::physical_cluster& c) {
    dp::graph_builder b(c.size());
    for (std::uint32_t v = 0; v < c.size(); ++v) b.set_vertex_weight(v, std::lround(c.capacity[v]));
    for (std::size_t l = 0; l < c.links.size(); ++l) {
        b.add_edge(c.links[l].first, c.links[l].second, std::lround(fast / c.link_capacity[l]));
    }
    return std::move(b).build();
}

void run(const std::string& command) {
    if (std::system(command.c_str()) != 0) throw std::runtime_error("failed: " + command);
}

std::optional<std::string> on_path(const std::vector<std::string>& names) {
    for (const auto& name : names) {
        if (std::system(("command -v " + name + " > /dev/null 2>&1").c_str()) == 0) return name;
    }
    return std::nullopt;
}

// gmap's mapping: a count, then "vertex target" lines; targets are the architecture's vertices.
std::vector<std::uint32_t> read_mapping(const fs::path& file, std::size_t vertices) {
    std::ifstream in(file);
    std::size_t count = 0;
    in >> count;
    if (count != vertices) throw std::runtime_error(file.string() + ": a mapping of " + std::to_string(count) + " vertices");
    std::vector<std::uint32_t> node_of(vertices);
    for (std::size_t i = 0; i < count; ++i) {
        std::size_t v = 0;
        std::uint32_t target = 0;
        if (!(in >> v >> target) || v >= vertices) throw std::runtime_error(file.string() + ": bad line");
        node_of[v] = target;
    }
    return node_of;
}

template <typename F>
void row(const std::string& graph, const std::string& cluster, const std::string& method,
         const dp::graph& g, const dp::physical_cluster& c, F node_of_vertex) {
    const auto start = std::chrono::steady_clock::now();
    const std::vector<std::uint32_t> node_of = node_of_vertex();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const dp::quality q = dp::evaluate(g, node_of, c);
    std::printf("| %s | %s | %s | %.0f | %lld | %zu | %.3f | %.1f |\n", graph.c_str(), cluster.c_str(), method.c_str(),
                q.max_link_load, static_cast<long long>(q.edge_cut), q.violation_count, q.max_imbalance, ms);
}

}  // namespace

int main(int argc, char** argv) {
    const auto data = dnnc::bench::data_path(argc, argv, "bench_link_capacity");
    if (!data) return 2;
    try {
        const std::vector<named_graph> graphs = dnnc::bench::benchmark_graphs(*data);
        const std::vector<named_cluster> clusters{ring(4), star(4), ring(8), star(8)};
        const auto gmap = on_path({"gmap", "scotch_gmap"});
        const auto amk_grf = on_path({"amk_grf"});
        if (!gmap || !amk_grf) std::cerr << "Scotch's gmap and amk_grf are not on the PATH (Debian: apt-get install scotch); no Scotch rows\n";
        const fs::path scratch = fs::temp_directory_path() / ("bench_link_capacity." + std::to_string(::getpid()));
        fs::create_directories(scratch);

        std::printf("| graph | cluster | mapping | max link load (cut per Gbit/s) | cut | condition-1 violations | imbalance | ms |\n"
                    "|---|---|---|---|---|---|---|---|\n");
        for (const auto& [graph_name, g] : graphs) {
            const fs::path graph_file = scratch / (graph_name + ".grf");
            if (gmap) write_scotch_graph(g, graph_file);
            for (const auto& [cluster_name, cluster] : clusters) {
                dp::physical_cluster blind = cluster;
                blind.link_capacity.clear();
                row(graph_name, cluster_name, "dnnc blind", g, cluster, [&] { return dp::assign(g, blind).place.node_of_vertex; });
                row(graph_name, cluster_name, "dnnc aware", g, cluster, [&] { return dp::assign(g, cluster).place.node_of_vertex; });
                if (!gmap || !amk_grf) continue;
                const fs::path arch_graph = scratch / "arch.grf", arch = scratch / "arch.tgt", map = scratch / "map.txt";
                write_scotch_graph(architecture_graph(cluster), arch_graph);
                run(*amk_grf + " " + arch_graph.string() + " " + arch.string());
                row(graph_name, cluster_name, "Scotch gmap", g, cluster, [&] {
                    run(*gmap + " -b0.03 " + graph_file.string() + " " + arch.string() + " " + map.string());
                    return read_mapping(map, g.vertex_count());
                });
            }
        }
        fs::remove_all(scratch);
    } catch (const std::exception& e) {
        std::cerr << "bench_link_capacity: " << e.what() << '\n';
        return 1;
    }
    return 0;
}
