#include "dnnc/partitioner/mincut.hpp"

#include "dnnc/partitioner/stoer_wagner.hpp"
#include "dnnc/core/error.hpp"

#include <algorithm>
#include <iterator>
#include <numeric>
#include <optional>
#include <string>

namespace dnnc::partitioner {

// Invariant: `classes` partition the vertices; cut[i], when set, is the minimum cut of
// classes[i] as it is now. Each split changes only the class it splits and the new one.
partition mincut_partition(const graph& g, std::size_t parts) {
    const std::size_t n = g.vertex_count();
    if (n == 0) throw usage_error("mincut partition: the graph is empty");
    if (parts < 1) throw usage_error("mincut partition: the number of parts must be at least 1");
    if (parts > n) {
        throw usage_error("mincut partition: " + std::to_string(parts) + " parts for a graph of " +
                          std::to_string(n) + " vertices");
    }
    std::vector<std::vector<vertex_id>> classes(1, std::vector<vertex_id>(n));
    std::iota(classes[0].begin(), classes[0].end(), vertex_id{0});
    std::vector<std::optional<min_cut>> cut(1);
    while (classes.size() < parts) {
        std::size_t chosen = classes.size();
        for (std::size_t i = 0; i < classes.size(); ++i) {
            if (classes[i].size() < 2) continue;
            if (!cut[i]) cut[i] = stoer_wagner(g, classes[i]);
            if (chosen == classes.size() || cut[i]->value < cut[chosen]->value) chosen = i;
        }
        std::vector<vertex_id> side = std::move(cut[chosen]->side);
        std::vector<vertex_id> rest;
        rest.reserve(classes[chosen].size() - side.size());
        std::set_difference(classes[chosen].begin(), classes[chosen].end(), side.begin(),
                            side.end(), std::back_inserter(rest));
        classes[chosen] = std::move(rest);
        cut[chosen].reset();
        classes.push_back(std::move(side));
        cut.emplace_back();
    }
    partition result;
    result.parts = parts;
    result.part_of.resize(n);
    for (std::size_t i = 0; i < classes.size(); ++i) {
        for (const vertex_id v : classes[i]) result.part_of[v] = static_cast<part_id>(i);
    }
    return result;
}

}  // namespace dnnc::partitioner
