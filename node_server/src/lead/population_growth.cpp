#include "lead/population_growth.hpp"

#include "dnnc/model/check.hpp"
#include "dnnc/model/expand.hpp"
#include "dnnc/model/rows.hpp"
#include "dnnc/protocol/snapshot_file.hpp"
#include "dnnc/sim/engine.hpp"
#include "dnnc/sim/fresh_plastic_state.hpp"

#include <algorithm>

namespace dnnc::node_server {

std::int64_t grow_tick(const model::population_growth& g, double dt) { return model::ticks_of_ms(g.at_ms, dt); }

std::size_t apply_due_grows(model::network& net, std::int64_t tick) {
    std::size_t marked = 0;
    for (auto& g : net.grows)
        if (!g.applied && grow_tick(g, net.dt) <= tick) {
            g.applied = true;
            ++marked;
        }
    return marked;
}

model::network fully_grown(model::network net) {
    for (auto& g : net.grows) g.applied = true;
    return net;
}

std::int64_t next_grow_tick(const model::network& net) {
    for (const auto& g : net.grows)
        if (!g.applied) return grow_tick(g, net.dt);
    return -1;
}

void add_applied_grow(model::network& net, const std::string& population, std::int64_t add, std::int64_t tick) {
    const auto scheduled = std::find_if(net.grows.begin(), net.grows.end(), [](const auto& g) { return !g.applied; });
    model::population_growth g;
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
std::vector<double> newborn_growth(const model::structure_group& group, std::int64_t tick, double next_seq) {
    std::vector<double> growth{0.0, static_cast<double>(tick), next_seq};
    for (const auto& c : group.curves) growth.push_back(c.z);
    growth.insert(growth.end(), group.curves.size() + 1, 0.0);  // connected counts, then no synapse
    return growth;
}

// The plastic state of neurons in the grown network. A grown row keeps every synapse it had
// (those between neurons that existed), in their order, and gains only synapses from or
// into new members, which are numbered after them (rows.hpp): so a row's values
// (neuron_state::synapses, in row order) are its old synapses' values in their order, with
// a fresh synapse's values (as an install builds it) at the place of each synapse that
// touches a new member. A neuron keeps its traces and gains, with no spike yet, those that
// its new synapses and new source roles make its node log.
class plastic_growth {
public:
    // `before`: the neuron count before the growth.
    plastic_growth(const model::network& grown, const model::expanded_network& neurons, std::uint64_t before)
        : net_(grown), neurons_(neurons), before_(before), plastic_(model::synapse_rows(grown, {}).synapse_models().size() > 1) {}

    // Gives each of `states` (a block of neurons of the grown network, any order) its plastic
    // state there. Throws error for old synapse values that do not fit their rows.
    void grow(std::vector<protocol::indexed_state>& states) const {
        if (!plastic_ || states.empty()) return;
        std::vector<model::neuron_index> targets;
        for (const auto& s : states) targets.push_back(static_cast<model::neuron_index>(s.index));
        const model::synapse_rows rows(net_, targets);
        sim::fresh_plastic_state fresh(rows.synapse_models());
        for (auto& s : states) grow_row(rows, fresh, s);
    }

private:
    void grow_row(const model::synapse_rows& rows, sim::fresh_plastic_state& fresh, protocol::indexed_state& s) const {
        const auto target = static_cast<model::neuron_index>(s.index);
        const double tau_minus = neurons_.params_of(target).tau_minus;
        std::vector<float> values;
        std::size_t kept = 0;
        rows.for_each(target, [&](model::neuron_index source, float weight, std::uint16_t, std::size_t e) {
            const auto model = rows.synapse_model(e);
            const auto& info = *rows.synapse_models()[model].info;
            if (!info.plastic) return;
            fresh.add_target_trace(model, tau_minus, s.traces);
            if (target >= before_ || source >= before_) {
                fresh.append_synapse(model, weight, values);
                return;
            }
            const std::size_t width = 1 + info.state_bytes / sizeof(float);
            if (kept + width > s.synapses.size()) throw error(misfit(s));
            values.insert(values.end(), s.synapses.begin() + static_cast<std::ptrdiff_t>(kept),
                          s.synapses.begin() + static_cast<std::ptrdiff_t>(kept + width));
            kept += width;
        });
        if (kept != s.synapses.size()) throw error(misfit(s));
        s.synapses = std::move(values);
        for (std::size_t e = 0; e < rows.element_count(); ++e)
            if (rows.synapse_models()[rows.synapse_model(e)].info->plastic && model::holds(rows.sources(e), static_cast<std::uint64_t>(s.index)))
                fresh.add_source_trace(rows.synapse_model(e), s.traces);
    }
    static std::string misfit(const protocol::indexed_state& s) {
        return "growth: the " + std::to_string(s.synapses.size()) + " synapse values of neuron " + std::to_string(s.index) +
               " do not fit its plastic synapses before the growth";
    }

    const model::network& net_;
    const model::expanded_network& neurons_;
    std::uint64_t before_;
    bool plastic_;
};
}  // namespace

void write_grown_snapshot(const std::string& from, const model::document& grown, const std::string& to) {
    model::check_document(grown);
    protocol::snapshot_reader in(from);
    const auto tick = in.doc().state->tick;
    const auto net = model::expand_neurons(*grown.net);
    const auto before = in.count();
    if (net.neuron_count() < before) throw error("a grown network cannot have fewer neurons than before");
    protocol::snapshot_writer out(to, grown, tick, net.neuron_count());
    const plastic_growth plastic(*grown.net, net, before);
    // States a block at a time, so that the plastic rows are drawn for a block at once.
    constexpr std::size_t block = 65536;
    std::vector<protocol::indexed_state> pending;
    const auto write_pending = [&] {
        plastic.grow(pending);
        for (const auto& p : pending) out.add(p);
        pending.clear();
    };
    // The network's synapse numbering is one for all its members (structural_plasticity.hpp).
    double next_seq = 0;
    protocol::indexed_state s;
    while (in.next(s)) {
        if (s.growth.size() > 2) next_seq = s.growth[2];
        pending.push_back(std::move(s));
        if (pending.size() == block) write_pending();
    }
    write_pending();
    // The new members as an engine of their own starts them (their plastic state as their
    // rows give it: plastic_growth).
    sim::engine_spec spec;
    spec.dt = net.dt;
    spec.history = model::longest_delay(*grown.net);
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
        pending.push_back(std::move(born));
        if (pending.size() == block) write_pending();
    }
    write_pending();
    out.commit();
}

}  // namespace dnnc::node_server
