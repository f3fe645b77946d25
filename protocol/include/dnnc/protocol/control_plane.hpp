#pragma once
// The lead's clock and the nodes' tick reports (docs/node_server.md, "The clock" and "Tick
// reports"): one struct per message and one codec that both ends use; on the wire each is a
// JSON object in a frame. Decoding refuses anything malformed with protocol_error, so a node
// and the lead survive whatever bytes a peer sends.
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

}  // namespace dnnc::protocol
