#pragma once
// Node engines built as a node builds its own (a spec without synapses, and the network as
// its share), joined in lockstep by hand: what partition tests compare with one node.
#include "lockstep.hpp"

#include "dnnc/model/expand.hpp"
#include "dnnc/sim/engine.hpp"

#include <map>
#include <random>
#include <string>
#include <vector>

namespace dnnc::test {

using sim::engine;
using sim::global_index;
using sim::neuron_state;
using sim::synapse_weight;
using sim::tick_t;

// Engines for `net` with neuron i on node node_of[i], joined in lockstep by hand.
class cluster {
public:
    cluster(const model::network& net, const std::vector<std::uint32_t>& node_of, std::size_t nodes)
        : net_(net), expanded_(model::expand(net, "p.xml")) {
        for (auto& spec : sim::partition_specs(expanded_, node_of, nodes, {}, sim::with_synapses::no)) engines_.emplace_back(spec, net);
    }
    // The neurons placed anew, as a re-balance places them: node k keeps its engine,
    // re-routed (engine::reroute), when it runs the same neurons as before, and is built
    // afresh otherwise; restore() is to follow. Returns the nodes that kept their engines.
    std::vector<std::size_t> place_anew(const std::vector<std::uint32_t>& node_of, std::size_t nodes) {
        std::vector<engine> placed;
        std::vector<std::size_t> kept;
        const auto specs = sim::partition_specs(expanded_, node_of, nodes, {}, sim::with_synapses::no);
        for (std::size_t k = 0; k < specs.size(); ++k) {
            if (k < engines_.size() && engines_[k].reroute(specs[k])) {
                placed.push_back(std::move(engines_[k]));
                kept.push_back(k);
            } else {
                placed.emplace_back(specs[k], net_);
            }
        }
        engines_ = std::move(placed);
        return kept;
    }
    const model::expanded_network& network() const { return expanded_; }
    std::vector<engine>& engines() { return engines_; }
    std::size_t neuron(const std::string& reference) const { return static_cast<std::size_t>(*expanded_.find(reference)); }

    // One tick everywhere; every neuron's output.
    std::vector<float> tick() {
        std::vector<float> out(expanded_.neuron_count());
        for (auto& e : engines_) e.compute();
        for (auto& e : engines_)
            for (const auto& n : e.spec().neurons) out[static_cast<std::size_t>(n.index)] = e.output(n.index);
        test::exchange(engines_, engines_.front().next_tick() - 1);
        return out;
    }
    // Every neuron's state, by index, as a snapshot gathers it from the nodes.
    std::vector<neuron_state> capture() const {
        std::vector<neuron_state> states(expanded_.neuron_count());
        for (const auto& e : engines_)
            for (auto& s : e.capture()) states[static_cast<std::size_t>(s.index)] = std::move(s);
        return states;
    }
    // As the lead sends them: each node its own neurons' states and, without their synapses,
    // those of the neurons it reads.
    void restore(const std::vector<neuron_state>& states, tick_t next) {
        for (auto& e : engines_) {
            std::vector<neuron_state> part;
            for (const auto& s : states) {
                part.push_back(s);
                if (!e.is_local(s.index)) part.back().synapses.clear();
            }
            e.restore(part, next);
        }
    }
    // Every plastic synapse's weight, by target, each target's in canonical order.
    std::map<global_index, std::vector<synapse_weight>> weights() const {
        std::map<global_index, std::vector<synapse_weight>> by_target;
        for (const auto& e : engines_)
            for (const auto& w : e.plastic_weights()) by_target[w.target].push_back(w);
        return by_target;
    }

private:
    model::network net_;
    model::expanded_network expanded_;
    std::vector<engine> engines_;
};

// A random node for each neuron.
inline std::vector<std::uint32_t> scatter(std::size_t neurons, std::size_t nodes, unsigned seed) {
    std::mt19937 gen(seed);
    std::vector<std::uint32_t> node_of(neurons);
    for (auto& n : node_of) n = static_cast<std::uint32_t>(gen() % nodes);
    return node_of;
}

}  // namespace dnnc::test
