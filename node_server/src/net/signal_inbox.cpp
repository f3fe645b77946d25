#include "dnnc/node_server/signal_inbox.hpp"

#include "dnnc/node_server/log.hpp"
#include "dnnc/protocol/frame.hpp"
#include "dnnc/protocol/signal_compression.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace dnnc::node_server {

std::string signal_link_identity::encode() const {
    return nlohmann::json{{"node", node}, {"epoch", epoch}, {"pid", pid}}.dump();
}

signal_link_identity signal_link_identity::decode(std::string_view payload) {
    try {
        const auto j = nlohmann::json::parse(payload);
        signal_link_identity id{j.at("node").get<std::string>(), j.at("epoch").get<std::uint64_t>(), j.at("pid").get<std::int64_t>()};
        if (id.node.empty()) throw protocol_error("an empty node id");
        return id;
    } catch (const nlohmann::json::exception&) {
        throw protocol_error("the link's opening frame does not say which node, network and process it comes from");
    }
}

namespace {

std::string peer_of(int fd) {
    sockaddr_storage address{};
    socklen_t size = sizeof address;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) return "?";
    char host[INET6_ADDRSTRLEN] = "?";
    std::uint16_t port = 0;
    if (address.ss_family == AF_INET) {
        const auto* a = reinterpret_cast<const sockaddr_in*>(&address);
        ::inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
        port = ntohs(a->sin_port);
    } else if (address.ss_family == AF_INET6) {
        const auto* a = reinterpret_cast<const sockaddr_in6*>(&address);
        ::inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
        port = ntohs(a->sin6_port);
    }
    return std::string(host) + ":" + std::to_string(port);
}

struct link {
    int fd;
    std::string peer;
    signal_link_identity identity;
    protocol::frame_decoder decoder;
};

// A socket whose peer has closed its side (or that failed) with nothing left to read: a
// link that can bring nothing more.
bool hung_up(int fd) {
    pollfd p{fd, POLLIN | POLLRDHUP, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    if (p.revents & (POLLHUP | POLLERR | POLLNVAL)) return true;
    int unread = 0;
    return (p.revents & POLLRDHUP) && ::ioctl(fd, FIONREAD, &unread) == 0 && unread == 0;
}

}  // namespace

struct signal_inbox::impl {
    std::uint32_t max_payload;
    std::atomic<std::size_t> count{0};  // of links, adopted or read
    std::mutex arrivals_mutex;
    std::vector<link> arrivals;  // adopted, not yet seen by a reader
    std::mutex reader_mutex;
    std::vector<link> links;  // only under reader_mutex
    std::vector<char> buffer = std::vector<char>(64 * 1024);
    std::string unpacked;  // a compressed packet's bytes, decompressed (bounded by max_payload)
    std::vector<pollfd> ready;  // one per link

    void close_link(link& l, const std::string& why) {
        DNNC_LOG(debug, "signal link from " << l.peer << " closed: " << why);
        ::close(l.fd);
        l.fd = -1;
        --count;
    }

    // Reads one link dry; false when it is gone.
    bool read(link& l, const std::function<void(protocol::binary_signals)>& deliver, std::size_t& delivered) {
        for (;;) {
            const ssize_t n = ::recv(l.fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
            if (n < 0) return close_link(l, std::strerror(errno)), false;
            if (n == 0) return close_link(l, "end of stream"), false;
            const int zero = 0;
            ::setsockopt(l.fd, IPPROTO_TCP, TCP_QUICKACK, &zero, sizeof zero);
            try {
                l.decoder.feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
                while (auto f = l.decoder.next()) {
                    if (f->type != protocol::message_type::signals)
                        throw protocol_error(std::string("a ") + protocol::to_string(f->type) + " frame on a signal link");
                    std::string_view payload = f->payload;
                    if (f->flags & protocol::compressed_flag) {
                        protocol::decompress_signals(payload, max_payload, unpacked);
                        payload = unpacked;
                    }
                    auto packet = protocol::decode_signals(payload);
                    try {
                        deliver(std::move(packet));
                        ++delivered;
                    } catch (const error& e) {
                        DNNC_LOG(warn, "signals from " << l.peer << " dropped: " << e.what());
                    }
                }
            } catch (const protocol_error& e) {
                DNNC_LOG(warn, "dropping signal link from " << l.peer << ": " << e.what());
                return close_link(l, e.what()), false;
            }
            // A short read took all there was: skip the recv that would say so.
            if (static_cast<std::size_t>(n) < buffer.size()) return true;
        }
    }

    // Waits up to `wait` for a link to become readable (poll takes no socket lock, so a
    // reader polling here does not hold up the sender's kernel path into the socket) and
    // reads those that are.
    std::size_t read_ready(const std::function<void(protocol::binary_signals)>& deliver, std::chrono::microseconds wait) {
        ready.clear();
        for (const auto& l : links) ready.push_back({l.fd, POLLIN, 0});
        const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(wait);
        const timespec timeout{static_cast<time_t>(seconds.count()),
                               static_cast<long>(std::chrono::duration_cast<std::chrono::nanoseconds>(wait - seconds).count())};
        if (::ppoll(ready.data(), ready.size(), &timeout, nullptr) <= 0) return 0;
        std::size_t delivered = 0;
        for (std::size_t i = 0; i < links.size(); ++i)
            if (ready[i].revents) read(links[i], deliver, delivered);
        drop_closed(links);
        return delivered;
    }

    // Under reader_mutex. A link from a node that has since opened one with another
    // identity is stale: its process or its network is gone.
    void take_arrivals() {
        std::lock_guard<std::mutex> lock(arrivals_mutex);
        for (auto& fresh : arrivals) {
            for (auto& l : links)
                if (l.fd >= 0 && l.identity.node == fresh.identity.node &&
                    (l.identity.pid != fresh.identity.pid || l.identity.epoch != fresh.identity.epoch))
                    close_link(l, "node '" + l.identity.node + "' opened a new link");
            links.push_back(std::move(fresh));
        }
        arrivals.clear();
        drop_closed(links);
    }

    static void drop_closed(std::vector<link>& list) {
        list.erase(std::remove_if(list.begin(), list.end(), [](const link& l) { return l.fd < 0; }), list.end());
    }

    // Closes the links in `list` whose peer has hung up.
    void sweep(std::vector<link>& list) {
        for (auto& l : list)
            if (l.fd >= 0 && hung_up(l.fd)) close_link(l, "the peer hung up");
        drop_closed(list);
    }
};

signal_inbox::signal_inbox(std::uint32_t max_payload) : impl_(std::make_unique<impl>()) {
    impl_->max_payload = max_payload;
}

signal_inbox::~signal_inbox() {
    for (auto& l : impl_->arrivals) ::close(l.fd);
    for (auto& l : impl_->links) ::close(l.fd);
}

void signal_inbox::adopt(int socket, std::string_view opening, protocol::frame_auth auth) {
    std::string peer = peer_of(socket);
    signal_link_identity identity;
    try {
        identity = signal_link_identity::decode(opening);
    } catch (const protocol_error& e) {
        DNNC_LOG(warn, "signal link from " << peer << " refused: " << e.what());
        ::close(socket);
        return;
    }
    // Links nobody reads (no network runs here) are swept as new ones come, so links that
    // were dropped do not hold places.
    {
        std::lock_guard<std::mutex> lock(impl_->arrivals_mutex);
        impl_->sweep(impl_->arrivals);
    }
    if (std::unique_lock<std::mutex> reader(impl_->reader_mutex, std::try_to_lock); reader) impl_->sweep(impl_->links);
    if (impl_->count.fetch_add(1) >= max_links) {
        --impl_->count;
        DNNC_LOG(warn, "signal link from " << peer << " refused: this node has " << max_links << " already");
        ::close(socket);
        return;
    }
    DNNC_LOG(debug, "signal link from " << peer << " (node '" << identity.node << "', pid " << identity.pid << ", epoch "
                                        << identity.epoch << ")");
    std::lock_guard<std::mutex> lock(impl_->arrivals_mutex);
    impl_->arrivals.push_back({socket, std::move(peer), std::move(identity), protocol::frame_decoder(std::move(auth), impl_->max_payload)});
}

std::size_t signal_inbox::collect(const std::function<void(protocol::binary_signals)>& deliver,
                                  std::chrono::microseconds wait) {
    std::lock_guard<std::mutex> reader(impl_->reader_mutex);
    impl_->take_arrivals();
    return impl_->read_ready(deliver, wait);
}

std::size_t signal_inbox::links() const { return impl_->count; }

}  // namespace dnnc::node_server
