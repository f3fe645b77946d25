#pragma once
// The lead's clock, the nodes' tick reports and the clients' commands (docs/simulation.md,
// "The clock and the lead" and "Commands"): one struct per message and one codec that both
// ends use; on the wire each is a JSON object in a frame. Decoding refuses anything malformed
// (protocol_error between nodes; usage_error, a refusal, for a client's command), so a node
// and the lead survive whatever bytes a peer sends.
#include "dnnc/protocol/csv.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dnnc::protocol {

// The lead to a node: grant the ticks up to `grant`, hold the clock (a freeze: the node
// stops where it can and says where), or ask where it is. Stamped with the installation it
// is for (node_config::epoch), which a node installed since by another lead refuses.
struct clock_request {
    enum class kind { ask, grant, hold };
    kind what = kind::ask;
    std::int64_t grant = 0;  // kind::grant
    std::optional<std::string> epoch;
};
nlohmann::json encode(const clock_request& r);
clock_request decode_clock_request(const nlohmann::json& j);

// A node's answer: the last tick it may compute, and the last it has computed.
struct clock_reply {
    std::int64_t horizon = -1;
    std::int64_t completed = -1;
};
nlohmann::json encode(const clock_reply& r);
clock_reply decode_clock_reply(const nlohmann::json& j);

// One tick of a node's report: the outputs of its output neurons (ascending index, lanes
// within each), its recorded neurons that spiked, the sampled variables of the state after
// the tick and, with tick 0, of the state before it (JSON arrays of numbers or nulls; null:
// none).
struct reported_tick {
    std::int64_t tick = 0;
    std::vector<float> values;
    std::vector<std::uint32_t> spikes;
    nlohmann::json samples;
    nlohmann::json initial;
};

// A node's report of the ticks it computed since its last one, with its signal counts, its
// time spent computing and the bytes of its signal packets as encoded and as sent
// (compressed or not; by peer id), and the structural plasticity records of those ticks, if
// it reports them.
struct tick_report {
    std::string node;
    std::string hash;  // of its config: a late report of a replaced network is ignored
    std::vector<reported_tick> ticks;
    std::int64_t sent = 0, dropped = 0, missing = 0;
    // The node's time computing ticks (not waiting for peers) since its run began, in ns: what
    // the lead weighs the nodes' loads by (<run rebalance="auto">).
    std::int64_t compute_ns = 0;
    // The time its runner waited for a CPU it was ready to run on since its run began, in ns
    // (the kernel's run_delay): late ticks that the compute time does not show, as under
    // another process's load or a CPU quota. The lead weighs it in with compute_ns.
    std::int64_t cpu_wait_ns = 0;
    std::map<std::string, std::int64_t> sent_to, late_from, missing_from, packet_bytes_to, payload_bytes_to;
    nlohmann::json structure;  // null, or the records (node_server's structure_log::add)
};
nlohmann::json encode(const tick_report& r);
tick_report decode_tick_report(const nlohmann::json& j);

// A client's command to the lead (`dnnc` and the Python module through the client library,
// the live page, a Slurm job's signal handler). Each kind reads only its own fields.
struct control_request {
    enum class kind {
        progress,   // where the run is
        start,      // run freely from the current tick
        resume,     // the same, after a freeze
        step,       // `ticks` more, then frozen
        freeze,     // hold the clock where the nodes can stop
        checkpoint, // `now`: one of the frozen network at once; else new settings
        input,      // `rows` of input values for ticks still to run
        structure,  // the structural plasticity records: the `recent` last, or those from `from`
        recover,    // restore the last checkpoint on the nodes still alive
        grow,       // `population` grows by `add` members
        rebalance,  // re-place the neurons (`capacities` changed first); `dry_run`: only show
        join,       // node `node` at `address` joins, with `capacity` and `links`
        drain       // node `node`'s neurons move to the others and it leaves
    };
    explicit control_request(kind k = kind::progress) : what(k) {}
    kind what;
    std::int64_t ticks = 0;  // step: 1..max_tick_count
    // checkpoint
    bool now = false;
    std::optional<std::int64_t> every;  // 0..max_tick_count (0: none)
    std::optional<int> keep;            // >= 1
    std::optional<std::string> dir;
    std::vector<input_row> rows;  // input (their `where` does not travel)
    // structure
    std::optional<std::int64_t> recent;  // 0..100000
    std::int64_t from = 0;
    // grow
    std::string population;
    std::int64_t add = 0;  // 1..expand_limits::max_neurons
    std::string node;      // join, drain
    // join
    std::string address;  // HOST:PORT, checked by the lead
    double capacity = 1;  // finite, > 0
    std::vector<std::string> links;
    // rebalance
    bool dry_run = false;
    std::map<std::string, double> capacities;  // node id -> new capacity, finite, > 0
    std::optional<double> migration_weight;    // rebalance, join, drain: finite, >= 0
    bool by_load = false;                      // rebalance, drain: the lead's own load policy asked
};
const char* to_string(control_request::kind k);
// The kind named `name`; usage_error for any other name.
control_request::kind control_kind(const std::string& name);
nlohmann::json encode(const control_request& r);
control_request decode_control_request(const nlohmann::json& j);

}  // namespace dnnc::protocol
