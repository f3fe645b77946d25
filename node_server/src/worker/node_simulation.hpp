#pragma once
// A node's running share of the network (private to dnnc_node_server): its engine and
// runner on their own thread, signals to peers through the outbox (over signal links) and
// from them through the signal inbox, which the runner reads itself; tick reports to the
// lead, and the clock's grants and holds.
//
// Tick reports go out in batches: {"node", "hash", "ticks": [[tick, [values...](, [spikes...])], ...],
// "sent", "dropped", "missing", "compute_ns" and "cpu_wait_ns" (the runner's time computing
// ticks, and waiting for a CPU, since the run began: load_watch.hpp), and by peer "sent_to",
// "late_from", "missing_from" and the bytes sent, "packet_bytes_to" and "payload_bytes_to" (as
// encoded, and as sent: compressed on compressed links)}, values being the reported neurons' outputs in ascending index order,
// lanes within each neuron, and spikes the recorded neurons that spiked in the tick (lane 0),
// ascending, when any did (a <record> names them), then (after an empty spike list when none
// spiked) the values of the neurons a <record variables> samples after the tick (sample t + 1,
// state_samples.hpp), when any is due, and at tick 0 (after an empty list when none is due)
// those of the initial state (sample 0). A batch is sent when the runner computes the last tick
// granted, when it holds `report_batch` ticks or `report_values` values and spikes or its
// oldest tick is `report_delay` old, and when the clock holds (so that a freeze sees every tick
// computed).
#include "dnnc/model/model.hpp"
#include "dnnc/node_server/node.hpp"
#include "dnnc/node_server/outbox.hpp"
#include "dnnc/node_server/signal_inbox.hpp"
#include "dnnc/protocol/control_plane.hpp"
#include "dnnc/protocol/signal_codec.hpp"
#include "dnnc/protocol/snapshot.hpp"
#include "state_stream.hpp"
#include "dnnc/sim/runner.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

namespace dnnc::node_server {

class peer_transport;  // signal_transports.hpp

// Whether `after` asks a node for what `before` did but for its peers, its neurons'
// windows and the installation (lead, epoch): the same neurons with the same parameters, the
// same share, dense rows, history and run settings. Such a node, after a re-balance that
// moved only other nodes' neurons, keeps its engine.
bool same_neurons_and_synapses(const model::node_config& before, const model::node_config& after);

class node_simulation {
public:
    using reporter = std::function<void(protocol::tick_report report)>;

    // Signals go out over signal links of its own, opened with this node's identity
    // (signal_inbox.hpp): a new installation never writes into a connection of the last,
    // which may lead to a peer process that is gone. Peers' packets come in through `in`.
    // With `mpi` ranks, signals travel over MPI instead
    // (signal_transports.hpp). With `kept` (the engine of the last installation, whose
    // config ran the same neurons and synapses: same_neurons_and_synapses) it runs that
    // engine with the config's peers (engine::reroute) instead of building one from the
    // share, when the engine takes them; a restore of every state is to follow.
    node_simulation(const model::node_config& config, std::string secret, std::shared_ptr<const tls_config> tls,
                    signal_inbox& in, reporter report,
                    const std::map<std::string, double>& extra_delay_ms, const std::string& device,
                    const node_options::mpi_signals& mpi, std::optional<sim::engine> kept = std::nullopt);
    ~node_simulation();
    node_simulation(const node_simulation&) = delete;
    node_simulation& operator=(const node_simulation&) = delete;

    // {"grant": T} or {"hold": true} -> {"horizon": H, "completed": C}
    protocol::clock_reply clock(const protocol::clock_request& request);
    // [[neuron index, tick, value(, lane)], ...]; without a lane, every lane
    void add_inputs(const nlohmann::json& inputs);
    sim::runner_stats stats() const { return runner_->stats(); }
    // The last tick computed here, and whether the clock has granted more.
    sim::tick_t completed() const { return runner_->completed(); }
    bool granted_more() const { return runner_->granted() > runner_->completed(); }
    // What the tick in progress waits for, if one waits: {"tick": the peers' tick whose
    // packets it needs, "ms": how long it has waited, "peers": [ids of those not there]}.
    nlohmann::json waiting() const;
    // What the engine holds per synapse, in all (docs/simulation.md, memory layout).
    std::size_t synapse_bytes() const { return engine_.synapse_bytes(); }
    // This node's neuron states from global index `from` on, ascending, about `bytes` of them
    // (state_stream.hpp); the runner must be paused (frozen).
    state_piece capture(std::int64_t from, std::size_t bytes) const;
    // A page of its plastic synapses' weights (sim::engine::plastic_weights), frozen:
    // {"total": N, "rows": [[element, source, target, weight], ...]}.
    nlohmann::json weights(std::uint64_t from, std::uint64_t limit) const;
    // A page of the grown synapses (sim::engine::grown_synapses), frozen:
    // {"total": N, "rows": [[source, target, pairing], ...]}.
    nlohmann::json grown(std::uint64_t from, std::uint64_t limit) const;
    // Its plastic synapses' weights binned as a weight-bins request asks (weight_bins.hpp), frozen.
    nlohmann::json weight_bins(const nlohmann::json& request) const;
    // New parameters for the local neurons (in the config's order) and new generators, and
    // with `synapses` (the node's updated share; null: none change) new delays and new
    // weights of the synapses of the `reweighted` connection elements, frozen between two
    // ticks (engine::set_synapses, engine::set_parameters); usage_error while running.
    void set_parameters(const std::vector<model::neuron_params>& params, const model::generators& generators,
                        const model::network* synapses = nullptr, const std::vector<std::size_t>& reweighted = {});
    // Installs states (local neurons and the remote ones it reads) so that the next tick is
    // `next`; the runner restarts paused there.
    void restore(const std::vector<protocol::indexed_state>& states, sim::tick_t next);

    // SHA-256 of the config it runs (plan::config_hash).
    const std::string& config_hash() const { return hash_; }
    // Whether it runs the engine it was given (kept) rather than one built from its share.
    bool kept_engine() const { return kept_engine_; }
    // Stops this simulation for good and hands its engine over to the next installation
    // (the constructor's `kept`); every call that would read the engine then throws.
    sim::engine release_engine();

private:
    void start_runner();
    // The runner, while the simulation still holds its engine (release_engine).
    sim::runner& runner() const;
    void flush_reports();
    // The recorded neurons among those that spiked in the tick `e` just computed.
    std::vector<std::uint32_t> recorded_spikes(const sim::engine& e) const;
    static constexpr std::size_t report_batch = 256;
    static constexpr std::size_t report_values = 1000000;  // one tick may have this many (lead_run)
    static constexpr std::chrono::milliseconds report_delay{2};
    std::string id_;
    std::string hash_;  // of the config it runs: the lead ignores reports of any other
    sim::engine engine_;
    bool kept_engine_ = false;
    std::atomic<bool> released_{false};
    outbox signals_out_;
    std::unique_ptr<peer_transport> transport_;
    std::unique_ptr<sim::runner> runner_;
    std::vector<std::string> peer_ids_;  // by the runner's peer index
    std::vector<std::size_t> by_index_;  // the engine's local neurons by ascending global index
    std::vector<sim::global_index> reported_;
    std::vector<sim::global_index> recorded_;  // ascending; spiking neurons only
    bool records_every_spike_ = false;         // recorded_ holds every local spiking neuron
    // The local neurons a <record variables> samples, ascending: its interval in ticks and
    // its variables' positions in the neuron's state (engine::variables).
    struct sampled_neuron {
        sim::global_index neuron;
        std::int64_t every;
        std::vector<std::size_t> which;
    };
    std::vector<sampled_neuron> sampled_;
    // The values of sample m (the state at time m·dt, state_samples.hpp) as `e` holds them
    // now: its due neurons ascending, their variables in order.
    nlohmann::json samples(std::int64_t m, const sim::engine& e) const;
    sim::runner_options options_;
    reporter report_;
    std::mutex report_mutex_;
    std::vector<protocol::reported_tick> pending_ticks_;  // not yet reported
    // Structural updates' records (structure_log.hpp), from the node that runs the first
    // neuron with synaptic elements only: every node holds the same.
    bool reports_structure_ = false;
    nlohmann::json pending_structure_ = nlohmann::json::array();
    std::size_t pending_values_ = 0;
    std::chrono::steady_clock::time_point oldest_pending_;
    std::atomic<std::int64_t> runner_cpu_wait_ns_{0};  // cpu_wait.hpp, as of the last batch
    std::thread thread_;
};

}  // namespace dnnc::node_server
