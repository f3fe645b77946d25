#pragma once
// The connections over which peers send this node signal packets, read by the runner's own
// thread. A peer opens such a link with a signal_link frame; the server hands the socket
// over after it (server::hand_over) and only signals frames may follow. A lockstep tick
// waits for its peers' packets by reading these sockets itself: no io thread wakes up and
// passes them on, which is most of a tick's period on loopback.
#include "dnnc/protocol/frame.hpp"
#include "dnnc/protocol/signal_codec.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace dnnc::node_server {

// Who opened a signal link: the signal_link frame's payload, JSON {"node", "epoch", "pid"}.
// A node opens new links for every network it installs (epoch) and every process has its
// own pid, so a link is stale once the same node has opened one with another identity.
struct signal_link_identity {
    std::string node;
    std::uint64_t epoch = 0;
    std::int64_t pid = 0;
    std::string encode() const;
    // Throws protocol_error when `payload` is not an identity.
    static signal_link_identity decode(std::string_view payload);
};

class signal_inbox {
public:
    explicit signal_inbox(std::uint32_t max_payload);
    ~signal_inbox();  // closes every link
    signal_inbox(const signal_inbox&) = delete;
    signal_inbox& operator=(const signal_inbox&) = delete;

    // Any thread: takes ownership of a connected socket opened with `opening` (a
    // signal_link frame's payload), whose frames `auth` checks from here on. It is closed past `max_links` or when `opening` is not
    // an identity. Links from the same node with another identity are closed before the
    // next collect (their process or network is gone), and links whose peer has hung up
    // are closed now if no reader is at work.
    void adopt(int socket, std::string_view opening, protocol::frame_auth auth);

    // Reads what has arrived on every link without blocking and hands each packet to
    // `deliver`, in arrival order per link; when nothing had arrived, first waits up to
    // `wait` for a link to become readable. Callers are serialised (one reader at a time).
    // A link that closes, or sends anything but well-formed, authentic signals frames, is
    // closed and logged; a packet `deliver` refuses (throws dnnc::error) is logged and
    // dropped. Returns the number of packets delivered.
    std::size_t collect(const std::function<void(protocol::binary_signals)>& deliver, std::chrono::microseconds wait);

    std::size_t links() const;

    static constexpr std::size_t max_links = 1024;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace dnnc::node_server
