// Our Stoer–Wagner against Boost's stoer_wagner_min_cut on the same random graph, in the
// same run. Usage: bench_stoer_wagner [vertices [edges [seed [random|halves]]]] (default
// 4000 24000 1 random). `halves` keeps the random edges inside two halves and joins the halves
// by three unit edges, so that the minimum cut is not around a single vertex.
// Prints both cut values, the value of the cut Boost's own side induces, and the time ratio.
#include "dnnc/partitioner/stoer_wagner.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/one_bit_color_map.hpp>
#include <boost/graph/stoer_wagner_min_cut.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

std::uint64_t splitmix(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
    namespace dp = dnnc::partitioner;
    const std::size_t n = argc > 1 ? std::stoul(argv[1]) : 4000;
    const std::size_t m = argc > 2 ? std::stoul(argv[2]) : 24000;
    std::uint64_t state = argc > 3 ? std::stoull(argv[3]) : 1;
    const bool halves = argc > 4 && std::string(argv[4]) == "halves";

    struct edge { dp::vertex_id u, v; dp::weight_t w; };
    std::vector<edge> edges;
    while (edges.size() < m) {
        const auto u = static_cast<dp::vertex_id>(splitmix(state) % n);
        const auto v = static_cast<dp::vertex_id>(splitmix(state) % n);
        const bool allowed = !halves || (u < n / 2) == (v < n / 2);
        if (u != v && allowed) edges.push_back({u, v, static_cast<dp::weight_t>(1 + splitmix(state) % 10)});
    }
    if (halves) {
        for (dp::vertex_id j = 0; j < 3; ++j) {
            edges.push_back({j, static_cast<dp::vertex_id>(n / 2 + j), 1});
        }
    }

    dp::graph_builder builder(n);
    for (const auto& e : edges) builder.add_edge(e.u, e.v, e.w);
    const dp::graph g = std::move(builder).build();

    using boost_graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS,
                                              boost::no_property,
                                              boost::property<boost::edge_weight_t, long>>;
    boost_graph bg(n);
    for (const auto& e : edges) boost::add_edge(e.u, e.v, static_cast<long>(e.w), bg);

    auto start = std::chrono::steady_clock::now();
    const dp::min_cut ours = dp::stoer_wagner(g);
    const double our_time = seconds_since(start);

    auto parity = boost::make_one_bit_color_map(n, boost::get(boost::vertex_index, bg));
    start = std::chrono::steady_clock::now();
    const long boost_value = boost::stoer_wagner_min_cut(bg, boost::get(boost::edge_weight, bg),
                                                         boost::parity_map(parity));
    const double boost_time = seconds_since(start);

    long boost_side_value = 0;
    for (const auto& e : edges) {
        if (boost::get(parity, e.u) != boost::get(parity, e.v)) boost_side_value += e.w;
    }

    std::printf("graph: %s, %zu vertices, %zu edges (%zu after merging parallel ones), seed %s\n",
                halves ? "two random halves joined by 3 edges" : "random", n, edges.size(),
                g.edge_count(), argc > 3 ? argv[3] : "1");
    std::printf("dnnc stoer_wagner : cut %lld (side of %zu vertices), %.3f s\n",
                static_cast<long long>(ours.value), ours.side.size(), our_time);
    std::printf("boost 1.%d        : cut %ld (its side induces %ld), %.3f s\n",
                BOOST_VERSION / 100 % 1000, boost_value, boost_side_value, boost_time);
    std::printf("speed-up: %.1fx, cuts %s\n", boost_time / our_time,
                ours.value == boost_side_value ? "agree" : "DIFFER");
    return ours.value <= boost_side_value ? 0 : 1;
}
