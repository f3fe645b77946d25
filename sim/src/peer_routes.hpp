#pragma once
// What a node's engine exchanges with each peer (private to dnnc_sim): the slots whose
// outputs make up each peer's packet, the slots each peer's packet fills, and for each local
// slot the peers it is sent to, so that a tick's few non-zero outputs are looked up rather
// than every slot a peer is sent. A packet holds B lanes a neuron (engine.hpp).
#include "dnnc/sim/engine_spec.hpp"
#include "slots.hpp"

#include <cstdint>
#include <utility>
#include <vector>

namespace dnnc::sim {

class peer_routes {
public:
    // The routes of `peers`: every neuron a peer sends has a slot already, every one sent to
    // it is local.
    void route(const std::vector<peer_spec>& peers, const slot_layout& slots);

    std::size_t peer_count() const { return receive_slots_.size(); }
    // The slots of peer p's packet to this node, and of this node's packet to peer p.
    const std::vector<std::uint32_t>& receives(std::size_t peer) const { return receive_slots_.at(peer); }
    const std::vector<std::uint32_t>& sends(std::size_t peer) const { return send_slots_.at(peer); }

    // The packet to `peer` from the history row `row` (`batch` lanes a slot): every value.
    void outgoing(std::size_t peer, const float* row, std::size_t batch, std::vector<float>& values) const;
    // Its non-zero values as (position, value), in position order. `nonzero`: the row's
    // non-zero local slots when they are known (one lane), else null.
    void outgoing_nonzero(std::size_t peer, const float* row, std::size_t batch, const std::vector<std::uint32_t>* nonzero,
                          std::vector<std::pair<std::uint32_t, float>>& values) const;

private:
    std::vector<std::vector<std::uint32_t>> send_slots_, receive_slots_;  // per peer
    // Per local slot, [send_of_begin_[slot], send_of_begin_[slot + 1]) in send_of_: the peers
    // it is sent to and its position in each one's packet (send_slots_ inverted).
    struct sent_to {
        std::uint32_t peer, position;
    };
    std::vector<std::uint64_t> send_of_begin_;
    std::vector<sent_to> send_of_;
};

}  // namespace dnnc::sim
