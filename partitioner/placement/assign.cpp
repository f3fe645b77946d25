#include "dnnc/partitioner/assign.hpp"

#include "dnnc/partitioner/mincut.hpp"
#include "dnnc/partitioner/multilevel.hpp"
#include "dnnc/partitioner/physical.hpp"

namespace dnnc::partitioner {

assignment assign(const graph& g, const physical_cluster& cluster,
                  const partition_options& options, const metrics_options& metrics) {
    check_physical_cluster(cluster);
    assignment result;
    result.parts = options.method == strategy::mincut
                       ? mincut_partition(g, cluster.size())
                       : multilevel_partition(g, cluster.capacity, options);
    result.place = place(g, result.parts, cluster, options.method);
    result.metrics = evaluate(g, result.place.node_of_vertex, cluster, metrics);
    return result;
}

}  // namespace dnnc::partitioner
