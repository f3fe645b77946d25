#pragma once
// Nodes reached through a sub-lead (private to dnnc_node_server). A node the lead has no
// route to is served through a node that reaches it (its sub-lead, a parent in the broadcast
// tree): this process then routes every connection to that node through the sub-lead, and
// the node routes its connections to the lead the same way.
//
// A route is a forwarder on this machine's loopback: each connection made to it (by a
// peer_client or an outbox, which connect there instead of to the node) is opened through
// the sub-lead with a `relay` frame, the first of a session of its own with the sub-lead;
// once the sub-lead has connected on and replied, the bytes go both ways unchanged. So the
// caller's session (frame_auth) and its TLS are with the node itself, end to end, inside the
// hop to the sub-lead; the sub-lead only carries bytes.
#include "dnnc/node_server/peer_client.hpp"
#include "dnnc/node_server/tls.hpp"
#include "dnnc/protocol/frame.hpp"

#include <memory>
#include <optional>
#include <string>

namespace dnnc::node_server::relays {

// The most connections a node carries for others at once; more are refused.
inline constexpr std::size_t max_carried = 256;

// From now on, connections from this process to `to` go through `via` (replacing an earlier
// route to it), opened with `secret` and `tls` as this process's own connections are.
void route(const endpoint& to, const endpoint& via, const std::string& secret, std::shared_ptr<const tls_config> tls);
// Connections to `to` go straight to it again (new ones; those open stay as they are).
void unroute(const endpoint& to);
// Where a connection to `to` goes: its forwarder, or `to`.
endpoint connect_to(const endpoint& to);
// The sub-lead `to` is reached through, if it has a route.
std::optional<endpoint> via(const endpoint& to);

// A sub-lead's side: the connection `socket` asked with `opening` (a relay frame, answered
// in the session `auth`) to be carried to the node it names. Connects there, replies, and
// carries the bytes both ways on a thread of its own until either end closes; refuses
// (an error reply, then closes) a target it cannot reach or one over max_carried.
void carry(const protocol::frame& opening, int socket, protocol::frame_auth auth);

}  // namespace dnnc::node_server::relays
