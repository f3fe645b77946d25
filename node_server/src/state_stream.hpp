#pragma once
// Neuron states between the lead and its nodes in pieces (private to dnnc_node_server;
// docs/snapshots.md, "How snapshots stream"). A snapshot's states are pulled from the nodes a
// piece at a time and handed on in global index order as they arrive; a restore's states go
// out to the nodes a piece at a time, each node assembling its own. The lead holds at most a
// piece per node, however many synapses the network has.
//
// Messages (node_messages.hpp): capture, JSON {"from", "bytes"} -> a state piece (below);
// restore_state, i64 tick + u8 last + neuron states (protocol::encode_states): a node keeps
// the pieces until the last, then installs them all.
#include "dnnc/model/model.hpp"
#include "dnnc/protocol/snapshot.hpp"

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace dnnc::node_server {

// A piece holds about this many bytes of encoded states (a neuron's state, whatever its size,
// goes whole into one piece), far below what a frame carries (protocol::default_max_payload).
inline constexpr std::size_t state_piece_bytes = std::size_t{1} << 20;
// The most a capture request may ask for.
inline constexpr std::size_t max_state_piece_bytes = std::size_t{32} << 20;

// A node's states from a global index on, ascending, and the least index whose state it may
// still hold after them (`done` when it holds no more).
struct state_piece {
    static constexpr std::int64_t done = std::numeric_limits<std::int64_t>::max();
    std::vector<protocol::indexed_state> states;
    std::int64_t next = done;
};
std::string encode_state_piece(const state_piece& piece);
// Throws protocol_error for malformed bytes.
state_piece decode_state_piece(std::string_view bytes);

// A piece of a restore's states for one node (the restore_state message): installed at
// `tick` with the last piece.
struct restore_piece {
    std::int64_t tick = 0;
    bool last = false;
    std::vector<protocol::indexed_state> states;
};
// `states`: already encoded (protocol::encode_states).
std::string encode_restore_piece(std::int64_t tick, bool last, std::string_view states);
// Throws protocol_error for malformed bytes.
restore_piece decode_restore_piece(std::string_view bytes);

// The size of `s` encoded (protocol::encode_states), for piece budgets.
std::size_t encoded_size(const protocol::indexed_state& s);

// Pulls every neuron's state from `nodes` nodes, fetch(v, from) giving node v's piece from
// global index `from` on, and hands them to `out` in ascending index order, each of
// 0 .. count-1 exactly once (else error). At most one piece per node is held at a time.
// Returns the most bytes of states it held at once.
std::size_t merge_states(std::size_t nodes, std::uint64_t count,
                         const std::function<state_piece(std::size_t node, std::int64_t from)>& fetch,
                         const std::function<void(const protocol::indexed_state&)>& out);

// A binary snapshot of `doc`'s network at `tick` (the next to compute) into `file`, written
// atomically: every one of its `neurons` states pulled from the cluster's nodes (merge_states
// with `fetch`). It carries its spike sources' spikes and its connection lists itself,
// needing no file to restore.
void write_snapshot(const std::string& file, model::document doc, std::int64_t tick, std::uint64_t neurons,
                    const std::function<state_piece(std::size_t node, std::int64_t from)>& fetch);

// Where a restore's states come from, checked already: calls `each` with every state.
using state_source = std::function<void(const std::function<void(const protocol::indexed_state&)>& each)>;
state_source states_in(const std::vector<protocol::indexed_state>& states);
// A second pass over a binary snapshot file that check_snapshot_file has read through.
state_source states_in_file(const std::string& path, const protocol::file_access& access);

// Hands each node of a config tree the states it restores, a piece at a time: those of its
// own neurons, and the output, history, traces and growth of the remote ones it reads (their
// synapses are their own node's; every node with a neuron with synaptic elements reads every
// such neuron and rebuilds the grown synapses from their growth). send(node, encoded states, last) delivers one piece; every
// node gets a last one, possibly empty, from finish().
class state_sender {
public:
    using send_fn = std::function<void(const model::node_config& node, const std::string& states, bool last)>;
    state_sender(const model::node_config& root, std::size_t neuron_count, send_fn send);
    // Throws error for an index out of range.
    void add(const protocol::indexed_state& s);
    void finish();
    // The most bytes of states it held at once.
    std::size_t peak_bytes() const { return peak_; }

private:
    struct outgoing {
        const model::node_config* node;
        std::vector<protocol::indexed_state> states;
        std::size_t bytes = 0;
    };
    void queue(std::size_t k, const protocol::indexed_state& s);
    void flush(outgoing& o, bool last);
    static constexpr std::uint32_t nobody = ~std::uint32_t{0};
    std::vector<outgoing> nodes_;
    std::vector<std::uint32_t> owner_;  // by global index
    // By global index, the nodes that read it remotely: readers_[first_reader_[i] ..
    // first_reader_[i + 1]).
    std::vector<std::uint64_t> first_reader_;
    std::vector<std::uint32_t> readers_;
    send_fn send_;
    std::size_t held_ = 0, peak_ = 0;
};

}  // namespace dnnc::node_server
