#include "reads.hpp"

#include "dnnc/model/expand.hpp"

namespace dnnc::plan {

std::vector<connection_piece> pieces_of(const model::network& net) {
    const model::symbol_table symbols(net);
    std::vector<connection_piece> pieces;
    for (const auto& ref : net.connection_order) {
        if (ref.kind == model::connection_ref::type::synapse) {
            const auto& s = net.synapses[ref.index];
            pieces.push_back({symbols.range(s.from, s.where), symbols.range(s.to, s.where), true});
            continue;
        }
        const auto& p = net.projections[ref.index];
        const bool paired = p.kind == model::projection_kind::one_to_one;
        const auto from = symbols.extents(p.from, p.where), to = symbols.extents(p.to, p.where);
        if (paired && !p.autapses && from.front().first == to.front().first) continue;  // no synapse at all
        // A grown group's extents pair with every extent of the other end (a superset of the
        // rows' sources), but the first extents of one-to-one ends, which align.
        for (const auto& f : from)
            for (const auto& t : to) {
                const bool aligned = paired && f.born == 0 && t.born == 0;
                pieces.push_back({{f.first, f.size}, {t.first, t.size}, aligned});
            }
    }
    // Structural plasticity may join any two neurons with synaptic elements, and every node
    // with such neurons keeps track of all of them (sim's structural_plasticity.hpp).
    std::vector<model::neuron_range> growing;
    for (const auto& p : net.populations)
        if (!p.synaptic_elements.empty())
            for (const auto& x : symbols.extents(p.id, p.where)) growing.push_back({x.first, x.size});
    for (const auto& from : growing)
        for (const auto& to : growing) pieces.push_back({from, to, false});
    return pieces;
}

std::vector<bool> nodes_holding(model::neuron_range r, const std::vector<std::uint32_t>& node_of_neuron, std::size_t nodes) {
    std::vector<bool> holds(nodes, false);
    for (auto i = r.first; i < r.first + r.size; ++i) holds[node_of_neuron[i]] = true;
    return holds;
}

std::vector<std::vector<bool>> remote_reads(const std::vector<connection_piece>& pieces,
                                            const std::vector<std::uint32_t>& node_of_neuron, std::size_t nodes) {
    std::vector<std::vector<bool>> reads(nodes, std::vector<bool>(node_of_neuron.size(), false));
    for (const auto& piece : pieces) {
        if (piece.paired) {
            for (std::uint64_t k = 0; k < piece.to.size; ++k) {
                const auto source = piece.from.first + k, target = piece.to.first + k;
                if (node_of_neuron[source] != node_of_neuron[target]) reads[node_of_neuron[target]][source] = true;
            }
            continue;
        }
        const auto readers = nodes_holding(piece.to, node_of_neuron, nodes);
        for (std::size_t b = 0; b < nodes; ++b)
            if (readers[b])
                for (auto i = piece.from.first; i < piece.from.first + piece.from.size; ++i)
                    if (node_of_neuron[i] != b) reads[b][i] = true;
    }
    return reads;
}

}  // namespace dnnc::plan
