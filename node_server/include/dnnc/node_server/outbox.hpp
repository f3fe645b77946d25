#pragma once
// One-way frames to other nodes (signal packets, tick reports): queued per destination and
// written in order on persistent connections by one background thread, each frame held
// back by the destination's emulated delay. A destination that cannot be reached loses
// its frames (counted); the sender never blocks on it.
#include "dnnc/node_server/peer_client.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace dnnc::node_server {

class outbox {
public:
    outbox();
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
