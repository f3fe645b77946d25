#pragma once
// One-way frames to other nodes (signal packets, tick reports), in order per destination
// on persistent connections. A frame due now with nothing queued before it is written
// from the sender's thread as far as the socket takes it without blocking (plain TCP only);
// the rest, frames held back by an emulated delay, and everything over TLS are written by
// one background thread. A
// destination that cannot be reached loses its frames (counted); the sender never blocks
// on it.
#include "dnnc/node_server/peer_client.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace dnnc::node_server {

class outbox {
public:
    // With a `secret` every connection starts a session (frame_auth) and every frame is
    // tagged as it is written. Every connection carries `opening` first, if given. With
    // `tls`, connections are TLS (tls.hpp).
    explicit outbox(std::string secret = {}, std::optional<protocol::frame> opening = {},
                    std::shared_ptr<const tls_config> tls = nullptr);
    ~outbox();
    outbox(const outbox&) = delete;
    outbox& operator=(const outbox&) = delete;

    // Queues a frame for `to`, to leave after `delay_ms`.
    void send(const endpoint& to, protocol::frame f, double delay_ms = 0);
    // Closes the connection to `to`, if any, dropping what waits for it: the next frame
    // connects anew (after its route changed: relays.hpp).
    void forget(const endpoint& to);
    std::uint64_t frames_lost() const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace dnnc::node_server
