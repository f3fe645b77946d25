#pragma once
// A lead's standby (private to dnnc_node_server). The lead's first child in the broadcast
// tree holds what it takes to replace the lead: the document the run began from, the
// newest checkpoint, the output rows of the ticks before it, and what the clock was last
// asked to do. It watches the lead with heartbeats; when the lead has been silent for the
// run's heartbeat timeout, it hands the replica to its own node's lead module, which
// restores the checkpoint onto the nodes still alive and carries the run on as the lead.
// Silent means that nothing came from the lead: no answer to a ping (a refusal is an
// answer), no heartbeat of the lead's own, no replica. A ping that could not even be sent
// does not make a live lead silent.
//
// Messages: replica. Its payload is a u32 (little-endian) header length, a JSON header,
// and a body:
//   {"kind": "document", "network", "lead", "lead_at", "heartbeat_timeout_ms", "tick", "width"}
//       body: the submitted document or snapshot; starts a new replica, or none when the
//       run starts from a binary snapshot (the checkpoint that follows)
//   {"kind": "rows", "start", "from", "count", "width"}   body: `count` rows of ticks from...,
//                                                `width` floats each
//   {"kind": "spikes", "forget_before"}          body: recorded spikes (append_spikes) no client
//                                                has read; those of ticks before forget_before were
//   {"kind": "checkpoint", "tick", "offset", "last"}  body: the bytes of a binary snapshot at
//                                                `tick` from `offset` on, in pieces of at most
//                                                replica_piece_bytes (checkpoint_piece_bytes
//                                                as the lead sends them); `last` closes it
//   {"kind": "intent", "state", "target": the tick it steps to or is frozen at,
//    "checkpoints": {"every", "keep", "dir"}}
#include "dnnc/core/files.hpp"
#include "dnnc/node_server/node.hpp"
#include "dnnc/node_server/peer_client.hpp"
#include "dnnc/node_server/server.hpp"
#include "dnnc/protocol/status.hpp"
#include "lead/held_spikes.hpp"
#include "lead/output_rows.hpp"

#include <nlohmann/json.hpp>

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace dnnc::node_server {

struct replica {
    std::string network;
    std::string lead;  // the lead's node id
    endpoint lead_at;
    double heartbeat_timeout_ms = 0;
    std::string document;  // what was submitted: the run began at its tick
    std::int64_t first_tick = 0;
    // The newest checkpoint, in this node's state folder (replicas/NETWORK/); empty: none yet.
    std::string checkpoint_file;
    std::int64_t checkpoint_tick = -1;
    // The one arriving, until its last piece.
    std::shared_ptr<atomic_file> incoming;
    std::uint64_t incoming_bytes = 0;
    std::int64_t incoming_tick = -1;
    output_rows rows{0, 0, 0};
    std::deque<tick_spikes> spikes;  // recorded, not read by any client yet
    nlohmann::json intent = nlohmann::json::object();
};

std::string encode_replica(const nlohmann::json& header, std::string_view body);
// A "rows" piece holds about this many bytes of rows, and at most this many rows.
constexpr std::size_t replica_piece_bytes = std::size_t{8} << 20;
// Sends the binary snapshot `file` at `tick` as checkpoint replicas, a piece of this many
// bytes at a time.
constexpr std::size_t checkpoint_piece_bytes = std::size_t{1} << 20;
void replicate_checkpoint(const std::function<void(const nlohmann::json&, const std::string&)>& replicate, std::int64_t tick,
                          const std::string& file);
// A tick's spikes in a replica body: i64 tick, u32 count, count u32 neurons (little-endian).
void append_spikes(std::string& body, const tick_spikes& s);
std::vector<tick_spikes> decode_spikes(std::string_view body);
// The lead's side, piece by piece: the "rows" piece of `rows` from `replicated_end` (or
// the oldest held) up to before `before`, none when the standby has them all; the "spikes"
// piece of the `held` spikes of ticks [replicated_end, before), about replica_piece_bytes
// at most, with `more` set when another follows (`completed`: the run's last complete tick).
// Each moves `replicated_end` past what it holds.
struct replica_piece {
    nlohmann::json header;
    std::string body;
};
std::optional<replica_piece> rows_piece(const output_rows& rows, std::int64_t& replicated_end, std::int64_t before);
replica_piece spikes_piece(const std::deque<tick_spikes>& held, std::int64_t completed, std::int64_t& replicated_end,
                           std::int64_t before, bool& more);

class standby final : public module {
public:
    // `take_over` runs on the standby's own thread once the lead is found silent.
    standby(const node_options& options, std::function<void(const replica&)> take_over);
    ~standby() override;

    std::vector<protocol::message_type> handles() const override;
    void handle(const protocol::frame& request, responder respond) override;

    // This node installs a config led by `lead`: a replica of another lead no longer
    // applies. One of `lead`'s own is kept until the new run's replica can replace it: a
    // lead lost while it reinstalls its network (a re-balance, a growth, a recovery) is
    // then replaced from the run as it was before.
    void forget_unless_led_by(const std::string& lead);
    // This node left the cluster: it holds nothing for it.
    void forget();
    // A heartbeat from lead `lead` reached this node: it is alive, whatever the pings say.
    void lead_heard(const std::string& lead);
    // status fields: "replica" {"lead", "checkpoint_tick", "rows", "lead_silent_ms"} while
    // it holds a replica.
    void describe(protocol::node_status& status) const;
    void shutdown();

private:
    void receive(const nlohmann::json& header, std::string body);
    void watch();

    const node_options& options_;
    std::function<void(const replica&)> take_over_;

    mutable std::mutex mutex_;
    std::condition_variable changed_;
    bool stopping_ = false;
    std::optional<replica> replica_;
    // A new run's replica that cannot start a run yet (its document is the checkpoint still
    // arriving); it replaces replica_ once it can. The pieces after a document go to it.
    std::optional<replica> arriving_;
    std::chrono::steady_clock::time_point lead_seen_;
    std::thread watcher_;
};

}  // namespace dnnc::node_server
