#include "population_growth.hpp"

#include "dnnc/protocol/check.hpp"
#include "dnnc/protocol/expand.hpp"
#include "dnnc/protocol/snapshot_file.hpp"
#include "dnnc/sim/engine.hpp"

#include <algorithm>

namespace dnnc::node_server {

std::int64_t grow_tick(const protocol::population_growth& g, double dt) { return protocol::ticks_of_ms(g.at_ms, dt); }

std::size_t apply_due_grows(protocol::network& net, std::int64_t tick) {
    std::size_t marked = 0;
    for (auto& g : net.grows)
        if (!g.applied && grow_tick(g, net.dt) <= tick) {
            g.applied = true;
            ++marked;
        }
    return marked;
}

protocol::network fully_grown(protocol::network net) {
    for (auto& g : net.grows) g.applied = true;
    return net;
}

std::int64_t next_grow_tick(const protocol::network& net) {
    for (const auto& g : net.grows)
        if (!g.applied) return grow_tick(g, net.dt);
    return -1;
}

void add_applied_grow(protocol::network& net, const std::string& population, std::int64_t add, std::int64_t tick) {
    const auto scheduled = std::find_if(net.grows.begin(), net.grows.end(), [](const auto& g) { return !g.applied; });
    protocol::population_growth g;
    g.population = population;
    g.add = add;
    g.at_ms = static_cast<double>(tick) * net.dt;
    g.applied = true;
    g.where = {"dnnc grow " + population + " " + std::to_string(add), 0, 0};  // what a refusal names
    net.grows.insert(scheduled, g);
}

namespace {
// The growth vector (sim's neuron_state::growth) of a member added at `tick`: calcium 0 as of
// then, the network's synapse numbering, its elements' initial counts, none connected.
std::vector<double> newborn_growth(const protocol::structure_group& group, std::int64_t tick, double next_seq) {
    std::vector<double> growth{0.0, static_cast<double>(tick), next_seq};
    for (const auto& c : group.curves) growth.push_back(c.z);
    growth.insert(growth.end(), group.curves.size() + 1, 0.0);  // connected counts, then no synapse
    return growth;
}
}  // namespace

void write_grown_snapshot(const std::string& from, const protocol::document& grown, const std::string& to) {
    protocol::check_document(grown);
    protocol::snapshot_reader in(from);
    const auto tick = in.doc().state->tick;
    const auto net = protocol::expand_neurons(*grown.net);
    const auto before = in.count();
    if (net.neuron_count() < before) throw error("a grown network cannot have fewer neurons than before");
    protocol::snapshot_writer out(to, grown, tick, net.neuron_count());
    // The network's synapse numbering is one for all its members (structural_plasticity.hpp).
    double next_seq = 0;
    protocol::indexed_state s;
    while (in.next(s)) {
        if (s.growth.size() > 2) next_seq = s.growth[2];
        out.add(s);
    }
    // The new members as an engine of their own starts them.
    sim::engine_spec spec;
    spec.dt = net.dt;
    spec.history = protocol::longest_delay(*grown.net);
    for (auto i = before; i < net.neuron_count(); ++i) {
        const auto& g = net.groups[net.group_of[i]];
        spec.neurons.push_back({static_cast<sim::global_index>(i), g.params, g.seed, 0.0});
    }
    const sim::engine fresh(spec);
    auto states = fresh.capture();
    std::sort(states.begin(), states.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
    for (auto& n : states) {
        protocol::indexed_state born{n.index, n.output, std::move(n.variables), std::move(n.history), std::move(n.traces), {}, {}};
        if (net.structure)
            for (const auto& group : net.structure->groups)
                if (group.has(static_cast<double>(n.index))) born.growth = newborn_growth(group, tick, next_seq);
        out.add(born);
    }
    out.commit();
}

}  // namespace dnnc::node_server
