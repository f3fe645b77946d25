#pragma once
// Strategy `mincut`, the original design's: start with one class holding every vertex;
// k - 1 times, take the global minimum cut of every class (Stoer–Wagner, cached for classes
// that did not change) and split the class whose cut is smallest. Then place_classes()
// (placement.hpp) puts the classes on nodes. A global minimum cut tends to peel off a single
// low-degree vertex, so the classes are often very unequal: the metrics show it.
#include "dnnc/partitioner/graph.hpp"
#include "dnnc/partitioner/partition.hpp"

namespace dnnc::partitioner {

// `parts` classes numbered in order of creation: class 0 is what remains of the first class,
// class i (i >= 1) is the smaller side of the i-th cut. Ties between classes go to the lower
// number. Throws usage_error for an empty graph, parts < 1 or parts > vertices.
partition mincut_partition(const graph& g, std::size_t parts);

}  // namespace dnnc::partitioner
