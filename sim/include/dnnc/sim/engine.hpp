#pragma once
// The node-local simulation engine: a node's neurons, their incoming synapses in canonical
// order, and the output history that delayed synapses read. It knows nothing of sockets:
// remote outputs are delivered to it and its outputs for peers are collected from it
// (see runner.hpp for the transport and the sync rules).
//
// Tick semantics (normative, docs/simulation.md): at tick t neuron i gets
//   u_i(t) = bias_i + ext_i(t) + sum_j w_ji * y_j(t - d_ji)
// summed in canonical order, in float32; its model turns u into y_i(t). y_j(t') = 0 for
// t' < 0 and for remote values that never arrived.
//
// Lanes (batch B > 1): B independent copies of the network's state run side by side, one
// input pattern each; every value a neuron has (output, state, external input, signal) has
// B lanes, each computed exactly as a run of its own would compute it. Values of one
// neuron's lanes lie next to each other: signals and outputs for a list of neurons come
// neuron by neuron, lane by lane (position k * B + lane).
#include "dnnc/sim/engine_spec.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace dnnc::sim {

// What an engine's sparse path has done (engine::sparse_path_counts): ticks split between
// threads, of which by kind of sum, ticks whose Poisson draws ran beside the scan on a
// thread of their own, of which beside finding the reads too (after a busy tick), ticks
// that read compact entries without their targets' words (every sum in order;
// sim/src/sparse_path.hpp), and ticks whose model step ran on the threads such a busy scan
// had woken.
struct sparse_counts {
    std::uint64_t split_ticks = 0, unordered_terms = 0, joined_reads = 0, kind_split_ticks = 0, draws_beside_ticks = 0,
                  early_draws_ticks = 0, target_free_ticks = 0, threaded_step_ticks = 0;
};

// What one structural update did to one group's neurons (a population with synaptic
// elements), the same on every node: its members' mean calcium at the update, the grown
// synapses onto them after it, and those it created and deleted onto them.
struct structure_record {
    tick_t tick = 0;
    std::uint32_t group = 0;  // into resolved_structure::groups
    double mean_ca = 0;
    std::uint64_t connections = 0;
    std::uint64_t created = 0, deleted = 0;
};

class engine;
// The engine of the node a config describes, on `device`: its rows built from the share.
// Throws protocol_error for a share that disagrees with the peers' lists (a source that is
// neither local nor received), allocation_error when the synapses do not fit in memory.
engine make_node_engine(const model::node_config& config, const std::string& device = "cpu");

// A node could not allocate the synapses of its share.
struct allocation_error : error {
    allocation_error(std::string node, std::uint64_t synapses);
    std::string node;
    std::uint64_t synapses;  // how many it tried to build (0: not counted yet)
};

// The weight of a plastic synapse as a user reads it: its connection element (the index
// into the network's connection_order), source, target.
struct synapse_weight {
    std::size_t element = 0;
    global_index source = 0, target = 0;
    float weight = 0;
};

// Per-neuron state for snapshots: the model's variables, its last output and the outputs
// of past ticks that delayed synapses still read (newest first). With plastic synapses also
// the neuron's traces (every one any node's rules read, taken on its own node, complete
// through the tick before its last output) and its incoming plastic synapses' state in row
// order: per synapse its stored weight, then its rule's values. With structural plasticity a
// neuron with synaptic elements also has its growth (empty for every other neuron):
//   [ca, ca_tick, next_seq, z_0..z_{E-1}, connected_0..connected_{E-1}, n,
//    n x (source global index, pairing, seq, born, dies)]
// its calcium and the tick it was last brought up to, the count of grown synapses made so
// far, its E element kinds' counts z and connected (its group's kinds in order), and the
// grown synapses into it that its node's rows hold (live and dying, in row order; dies -1
// for a live one). Every value but ca and z is a whole number.
struct neuron_state {
    global_index index = 0;
    float output = 0;
    std::vector<float> variables;
    std::vector<float> history;
    std::vector<model::spike_trace> traces;
    std::vector<float> synapses;
    std::vector<double> growth;
};

class engine {
public:
    explicit engine(const engine_spec& spec);
    // A node's engine: spec without synapses (in empty); the incoming synapses of
    // spec.neurons are drawn from `share` (the compact network: every projection, and the
    // explicit synapses into these neurons), row by row in parallel, straight into the
    // engine's arrays. Each source must be local or in a peer's receives list (which may
    // list more); else protocol_error. std::bad_alloc becomes allocation_error.
    engine(const engine_spec& spec, const model::network& share);
    ~engine();
    engine(engine&&) noexcept;
    engine& operator=(engine&&) noexcept;

    std::size_t neuron_count() const;
    // The node, neurons, peers, history, batch and device it was built from (not the
    // synapses or dense weights: those live on in the engine's own layout).
    const engine_spec& spec() const;
    // The incoming synapses of all local neurons, and those of one in canonical order
    // (incoming takes own weights the fan-out alone held back into the rows, which keep
    // them until the next synapse update or restore: docs/simulation.md, "Memory layout").
    std::uint64_t synapse_count() const;
    std::vector<synapse_spec> incoming(global_index neuron) const;
    // The bytes the synapses take in the engine now (rows, runs, classes, fan-out).
    std::size_t synapse_bytes() const;
    // Every plastic synapse's weight now (synapse models, docs/document.md): local targets in
    // the engine's order, each one's synapses in canonical order.
    std::vector<synapse_weight> plastic_weights() const;
    // The count of those, and `limit` of them from the `from`-th on (a page, in that order).
    std::uint64_t plastic_synapse_count() const;
    std::vector<synapse_weight> plastic_weights(std::uint64_t from, std::uint64_t limit) const;
    // The tick compute() computes next; starts at 0.
    tick_t next_tick() const;
    // The shortest delay with which this engine reads a remote neuron (its longest delay
    // when it reads none): tick t needs remote outputs of ticks up to t - remote_delay().
    // It never grows; new delays may shrink it (set_synapses).
    tick_t remote_delay() const;

    std::uint32_t batch() const;

    // External input: ext_i(t) for a local neuron in one lane, or every lane with
    // all_lanes (values for the same tick add up). Throws usage_error for a neuron that is
    // not local, a lane out of range or a tick already computed.
    static constexpr std::int64_t all_lanes = -1;
    void add_input(global_index neuron, tick_t t, float value, std::int64_t lane = all_lanes);

    // The outputs of peer p's neurons (p.receives order, B lanes each) at tick t, dense or
    // as (position, value) pairs for non-zero values only.
    void deliver(std::size_t peer, tick_t t, const std::vector<float>& values);
    void deliver_nonzero(std::size_t peer, tick_t t, const std::vector<std::pair<std::uint32_t, float>>& values);
    // The values a packet from peer p carries: its outputs this node reads, B lanes each.
    std::size_t receive_count(std::size_t peer) const;

    // Computes next_tick() from what has been delivered; then next_tick() advances.
    void compute();

    // The values a packet to peer p carries (dense): its inputs from this node, B lanes each.
    std::size_t send_count(std::size_t peer) const;
    // After compute(): this node's outputs for peer p (p.sends order) at the tick just computed.
    void outgoing(std::size_t peer, std::vector<float>& values) const;
    void outgoing_nonzero(std::size_t peer, std::vector<std::pair<std::uint32_t, float>>& values) const;

    // After compute(): the local neurons of spiking models (model::is_spiking) whose
    // output is non-zero at the tick just computed, in lane 0, by ascending global index
    // (empty before the first tick, after restore(), and always without spec.list_spikes).
    const std::vector<global_index>& spiked() const;

    // Output of a local neuron in one lane at the tick just computed (0 before the first tick).
    float output(global_index neuron, std::uint32_t lane = 0) const;
    bool is_local(global_index neuron) const;
    // A local neuron's model variables now, in lane 0, in their snapshot order
    // (model::state_variable_names): what state recording samples.
    std::vector<float> variables(global_index neuron) const;

    // Every local neuron's state; history holds the outputs of ticks next-2 ... next-history.
    // Throws usage_error for a batched engine (snapshots hold one lane) and while new delays
    // are in transition (set_synapses).
    std::vector<neuron_state> capture() const;
    // The state of local neuron `k` (spec().neurons[k]), as capture() gives it.
    neuron_state capture(std::size_t k) const;
    // Restores captured states so that the next tick computed is `next`: every local neuron
    // must be present; entries for remote neurons this engine reads fill in their past
    // outputs; others are ignored. With structural plasticity every neuron with synaptic
    // elements that this engine runs or reads must come with its growth, consistent with the
    // others' (usage_error before anything changes): its grown synapses, calcium and elements
    // are restored from them (the records start empty).
    void restore(const std::vector<neuron_state>& states, tick_t next);
    // New peers for an engine whose neurons and synapses stay as they are (a re-balance moved
    // only other nodes' neurons), between two ticks, before a restore(): `spec` is the
    // engine's spec for the new placement (its peers' lists and its neurons' windows are
    // taken; the rest must be this engine's). Its peers must send exactly the remote neurons
    // this engine reads now and be sent only local ones; else false, and nothing changes.
    // Pending external inputs go and the generators start afresh, as in an engine built from
    // `spec`, so that the restore that follows gives the same bits as a fresh engine's.
    bool reroute(const engine_spec& spec);
    // New parameters for the local neurons (params[k] for spec().neurons[k]) and new
    // generators, between two ticks: states, synapses, history and the clock carry over, so
    // the next tick runs as a network that had these parameters from here on. A neuron keeps
    // its model and tau_minus (its plastic synapses' traces were computed with it); else
    // usage_error, and nothing changes.
    void set_parameters(const std::vector<model::neuron_params>& params, const model::generators& generators);
    // New weights and delays from `share` (as the node's constructor takes it), between two
    // ticks: the synapses must be the same ones, with the same sources and synapse models in
    // canonical order, and a plastic synapse its delay (else usage_error, and nothing
    // changes). A plastic synapse keeps its learned weight unless its connection element
    // (position in the share's connection_order) is in `reweighted`, where it takes the new
    // one as NEST's SetStatus would; its rule's state, neuron states, history and the clock
    // carry over.
    // New delays follow NEST: a spike sent before next_tick() arrives with the delay it was
    // sent with, one sent from then on with the new delay, so that no spike is lost or
    // delivered twice. Until the longer of the old and new longest delays has passed (the
    // transition, spec().history ticks) a synapse may deliver spikes with both delays in one
    // tick (old first); a snapshot (capture) and a change of delays at a later tick are
    // refused then (usage_error), while more changes before the next tick act as their last.
    // A delay may not exceed spec().history (usage_error); remote_delay() may shrink.
    void set_synapses(const model::network& share, const std::vector<std::size_t>& reweighted);

    // Structural plasticity (engine_spec::structure): the records of the updates since the
    // last call; the grown synapses; a member's calcium as of its last spike or update.
    // Empty or usage_error without it.
    std::vector<structure_record> take_structure_records();
    // The live grown synapses in the order they were made (every node that keeps the picture
    // lists the same): `limit` of them from the `from`-th on, and how many there are.
    struct grown_synapse {
        global_index source = 0, target = 0;
        std::uint32_t pairing = 0;  // into resolved_structure::pairings
        bool operator==(const grown_synapse& o) const { return source == o.source && target == o.target && pairing == o.pairing; }
    };
    std::vector<grown_synapse> grown_synapses(std::uint64_t from, std::uint64_t limit) const;
    std::uint64_t grown_synapse_count() const;
    double calcium(global_index neuron) const;
    // Wall seconds this engine has spent in structural updates (0 without them).
    double structure_update_seconds() const;
    // What the sparse path has done: ticks whose synapse terms it added on several threads
    // (by target range); terms of sums not in order, put in canonical order by sorting;
    // reads of a source at a second or later delay in one tick, whose terms it put in row
    // order with the first's (docs/simulation.md, the engine).
    sparse_counts sparse_path_counts() const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace dnnc::sim
