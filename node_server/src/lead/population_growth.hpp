#pragma once
// Growing a running network (docs/simulation.md, "Growing populations"; private to
// dnnc_node_server). The lead grows a population between two ticks as a restore of a
// snapshot of itself: it snapshots the frozen network at tick T, marks the grow applied in
// the snapshot's document (the new members are numbered after every neuron, so no existing
// neuron's index, state or synapse changes), appends the new members' states as an install
// starts them, and restores that onto the same nodes, keeping the rows and spikes before T.
#include "dnnc/model/model.hpp"

#include <cstdint>
#include <string>

namespace dnnc::node_server {

// The tick a <grow> applies at.
std::int64_t grow_tick(const model::population_growth& g, double dt);
// Marks applied the scheduled grows due by `tick` (their tick <= it); how many it marked.
std::size_t apply_due_grows(model::network& net, std::int64_t tick);
// `net` with its scheduled grows applied too: the network at the end of its schedule.
model::network fully_grown(model::network net);
// The tick of the first scheduled grow, or -1 when there is none.
std::int64_t next_grow_tick(const model::network& net);
// Adds an applied grow of `population` by `add` at `tick` after the applied ones (the
// document's order is the numbering order).
void add_applied_grow(model::network& net, const std::string& population, std::int64_t add, std::int64_t tick);

// Writes to `to` the snapshot in `from` (binary, of the network before the grows) with the
// document `grown` (the same network with grows applied) and, after the states in `from`,
// the states of the members the grows added: as an engine starts them (outputs and history
// zero, variables from their initial-state rules), and with synaptic elements their calcium
// 0 as of the snapshot's tick, their elements' initial counts and no synapse. Plastic
// synapses that the grows add (into new members, or from them into existing neurons) start
// as an install builds them, in their places in the rows; every other synapse keeps its
// state (population_growth.cpp). Throws config_error for a `grown` that does not check.
void write_grown_snapshot(const std::string& from, const model::document& grown, const std::string& to);

}  // namespace dnnc::node_server
