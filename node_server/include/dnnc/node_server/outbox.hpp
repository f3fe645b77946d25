#pragma once
// One-way frames to other nodes (signal packets, tick reports), in order per destination
// on persistent connections. A frame due now with nothing queued before it is written
// from the sender's thread as far as the socket takes it without blocking; the rest, and
// frames held back by an emulated delay, are written by one background thread. A
// destination that cannot be reached loses its frames (counted); the sender never blocks
// on it.
#include "dnnc/node_server/peer_client.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace dnnc::node_server {

class outbox {
public:
    // Every connection it opens carries `opening` (encoded frame bytes) first, if given.
    explicit outbox(std::string opening = {});
    ~outbox();
    outbox(const outbox&) = delete;
    outbox& operator=(const outbox&) = delete;

    // Queues an encoded frame for `to`, to leave after `delay_ms`.
    void send(const endpoint& to, std::string frame_bytes, double delay_ms = 0);
    std::uint64_t frames_lost() const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace dnnc::node_server
