// The METIS reader: any text parses into a graph that keeps the CSR invariants, or throws
// a dnnc::error. A graph it accepts is written back and read again to the same graph.
#include "dnnc/core/error.hpp"
#include "dnnc/partitioner/metis_io.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    dnnc::partitioner::graph g;
    try {
        g = dnnc::partitioner::parse_metis(text, "fuzz.graph");
    } catch (const dnnc::error&) {
        return 0;
    }
    const auto again = dnnc::partitioner::parse_metis(dnnc::partitioner::to_metis(g), "written.graph");
    if (again.offsets() != g.offsets() || again.adjacency() != g.adjacency() ||
        again.edge_weights() != g.edge_weights() || again.vertex_weights() != g.vertex_weights())
        std::abort();
    return 0;
}
