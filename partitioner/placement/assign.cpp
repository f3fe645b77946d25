#include "dnnc/partitioner/assign.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/partitioner/mincut.hpp"
#include "dnnc/partitioner/multilevel.hpp"
#include "dnnc/partitioner/physical.hpp"

namespace dnnc::partitioner {

assignment assign(const graph& g, const physical_cluster& cluster, const partition_options& options,
                  const metrics_options& metrics, const current_assignment* current) {
    check_physical_cluster(cluster);
    assignment result;
    if (current) {
        if (options.method == strategy::mincut)
            throw usage_error("a re-plan from a current assignment needs the multilevel strategy");
        // Part i is node i; a node past the cluster's is no part (multilevel_repartition).
        const partition now{current->node_of_vertex, cluster.size()};
        result.parts = multilevel_repartition(g, cluster.capacity, now, current->migration, options);
        // Part i stays on node i: a permutation for condition 1 would move whole parts.
        for (std::uint32_t v = 0; v < cluster.size(); ++v) result.place.node_of_part.push_back(v);
        result.place.node_of_vertex = result.parts.part_of;
    } else {
        result.parts = options.method == strategy::mincut ? mincut_partition(g, cluster.size())
                                                          : multilevel_partition(g, cluster.capacity, options);
        result.place = place(g, result.parts, cluster, options.method);
        if (options.method == strategy::multilevel && has_link_capacities(cluster)) {
            unload_links(g, cluster, options.imbalance, result.place.node_of_vertex);
            // The parts follow their vertices: part p is the one on node node_of_part[p].
            std::vector<part_id> part_on(cluster.size());
            for (part_id p = 0; p < cluster.size(); ++p) part_on[result.place.node_of_part[p]] = p;
            for (vertex_id v = 0; v < g.vertex_count(); ++v) result.parts.part_of[v] = part_on[result.place.node_of_vertex[v]];
        }
    }
    result.metrics = evaluate(g, result.place.node_of_vertex, cluster, metrics);
    return result;
}

}  // namespace dnnc::partitioner
