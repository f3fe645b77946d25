#pragma once
// What the control plane says of a run and of a cluster (docs/simulation.md, "Commands";
// docs/node_server.md, "Status"): the lead's progress of a run, its reply to a control
// request for progress, start, resume or step; and a node's status, of itself and, from the
// lead, of its cluster (`dnnc status`, the live page, the Python module's status()). One
// struct each and one codec that both ends use; on the wire each is a JSON object, with the
// keys the live page reads. Decoding refuses anything malformed with protocol_error, so a
// client survives whatever bytes a node sends.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dnnc::protocol {

// One node's part of a run, from its tick reports: its last computed tick, the values it sent
// (by peer id), and packets that came late or not at all from its peers (window mode), and the
// bytes of its packets to each peer as encoded and as sent.
struct node_progress {
    std::string id;
    std::int64_t completed = -1;
    std::int64_t sent = 0, dropped = 0, missing = 0;
    std::map<std::string, std::int64_t> sent_to, late_from, missing_from, packet_bytes_to, payload_bytes_to;
    // Its time per tick over the lead's last interval, computing and waiting for a CPU
    // (node_server's load_watch); none until the lead has weighed one.
    std::optional<double> ms_per_tick, cpu_wait_ms_per_tick;
};

// Where a run is. `state`: idle, running, stepping, frozen or failed (then `error` says why).
struct run_progress {
    std::string state = "idle";
    std::int64_t completed = -1;  // the last tick every node has computed
    std::int64_t target = -1;     // the tick a step runs to
    std::optional<std::int64_t> granted;  // the last tick granted, when the clock is not free
    std::vector<node_progress> nodes;
    std::int64_t signals_sent = 0, signals_dropped = 0, packets_missing = 0;
    std::string sync;  // lockstep or window
    // The output rows the lead holds start at this tick; `dropped` were let go unread.
    std::int64_t output_rows_first = 0, output_rows_dropped = 0;
    std::optional<double> ticks_per_second;   // while running freely
    std::optional<double> last_step_seconds;  // the lead's time for the last step
    std::optional<std::string> error;
    // Periodic checkpoints, when on.
    std::optional<std::int64_t> checkpoint_every;
    std::optional<std::string> checkpoint_dir, last_checkpoint;
};
nlohmann::json encode(const run_progress& p);
run_progress decode_run_progress(const nlohmann::json& j);

// A node's neurons before and after a change that moved neurons, and where its engine came
// from: kept (its neurons and synapses stayed: it only took new routes), prepared (built
// while the run went on, before the pause), or neither (built in the pause).
struct node_count_change {
    std::string id;
    std::uint64_t before = 0, after = 0;
    bool kept = false;
    bool prepared = false;
};

// A change that moved neurons (growth, re-balance, join, drain), as the lead lists it.
struct move_record {
    std::string what;
    std::int64_t tick = 0;
    std::uint64_t moved = 0;
    double paused_ms = 0;
    std::vector<node_count_change> nodes;
};
nlohmann::json encode(const move_record& m);

// A node of the lead's cluster. `completed` and the measures come with a run.
struct cluster_node_status {
    std::string id, address;
    std::vector<std::string> roles;  // lead, clock, worker, sub-lead (it carries others' connections)
    std::string via;                 // the sub-lead the lead reaches it through; empty: none
    double capacity = 1;
    std::uint64_t neurons = 0;
    bool alive = true;
    double silent_ms = 0;  // since the lead last heard it
    std::optional<std::int64_t> completed, signals_sent;
    std::optional<double> ms_per_tick, cpu_wait_ms_per_tick;
    std::string page;                  // its live page's address; empty: none
    std::optional<std::string> error;  // a dead node's last error
};

// A physical link as measured at submit, with its traffic once a run has begun.
struct link_status {
    std::string from, to;
    double latency_ms = 0, round_trip_ms = 0;
    bool clamped = false, noisy = false, compressed = false;
    std::optional<double> throughput_bps;  // measured; none: too fast to measure, or not probed
    std::optional<double> bandwidth_bps;   // as the document declares it
    // With a run: values sent both ways, packet bytes as encoded and as sent, and packets that
    // came late or not at all, by sender.
    std::optional<std::int64_t> signals_sent, packet_bytes, payload_bytes;
    std::optional<std::map<std::string, std::int64_t>> packets_late, packets_missing;
};

// The wait windows of the neurons with remote inputs (min, median, max when any).
struct wait_window_spread {
    std::uint64_t neurons_with_remote_inputs = 0;
    std::optional<double> min_ms, median_ms, max_ms;
};

// A population's neurons on each node (by the cluster's order); the neurons outside
// populations are counted together under "(neurons)", which has no `first`.
struct population_spread {
    std::string id;
    std::optional<std::uint64_t> first;
    std::uint64_t size = 0;
    std::vector<std::uint64_t> nodes;
};

// What only the lead of a network says: its run and its cluster.
struct lead_status {
    std::optional<std::string> standby_node;
    std::vector<cluster_node_status> nodes;
    std::vector<link_status> links;
    wait_window_spread wait_windows;
    std::vector<std::string> dead;
    std::vector<population_spread> populations;
    double dt_ms = 0, edge_cut = 0, imbalance = 0;
    // The newest structural plasticity records (node_server's structure_log) and the weights'
    // histograms of the last freeze (node_server's weight_bins): each in its own format; null:
    // none.
    nlohmann::json structure, weight_histograms;
};

// A standby lead's replica of its lead's run.
struct replica_status {
    std::string lead;
    std::int64_t checkpoint_tick = -1;
    std::int64_t rows = 0;  // output rows held
    double lead_silent_ms = 0;
};

// A node's status. Every node says `state`, `role`, `tick`, its process, memory and work; a
// configured node says its network; the lead adds its run's figures and `cluster`.
struct node_status {
    std::string state = "unconfigured";  // unconfigured, idle, computing, paused; a lead: its run's
    std::string role = "none";           // none, worker, lead
    std::int64_t tick = 0;
    std::int64_t pid = 0;
    struct memory_use {
        std::uint64_t available = 0;  // what the machine can still give
        std::uint64_t limit = 0;      // --memory-limit; 0: none
        std::uint64_t network = 0;    // what its current network holds
    } memory;
    struct task {
        std::string what;  // "task" on the wire
        double seconds = 0;
    };
    std::vector<task> work;  // what it is busy with
    // A configured node.
    std::optional<std::string> node, network, lead, lead_address, config_hash, epoch;
    std::optional<std::uint64_t> neurons;
    std::optional<replica_status> replica;
    struct page_status {
        std::string address;
        bool token = false;  // the page asks for the cluster's token
    };
    std::optional<page_status> http;
    std::optional<std::string> lead_page;  // a worker's: the lead's live page
    // The lead, with a run: the run's figures (its `state` and `tick` are the run's).
    std::optional<std::int64_t> granted;
    std::optional<std::int64_t> output_rows_first, output_rows_dropped;
    std::optional<std::string> error;
    std::optional<double> ticks_per_second;
    std::optional<std::int64_t> signals_sent, signals_dropped, packets_missing;
    std::optional<std::string> sync, last_checkpoint;
    std::vector<move_record> moves;  // the newest changes that moved neurons
    std::optional<lead_status> cluster;  // the lead of a network
};
nlohmann::json encode(const node_status& s);
node_status decode_node_status(const nlohmann::json& j);

}  // namespace dnnc::protocol
