#include "signal_transports.hpp"

#include "dnnc/node_server/log.hpp"

#include <mpi.h>

#include <thread>

namespace dnnc::node_server {

peer_transport::peer_transport(const protocol::node_config& config) : from_(config.node), epoch_(config.epoch) {
    for (const auto& p : config.peers) peer_index_.emplace(p.id, peer_index_.size());
}

std::optional<std::size_t> peer_transport::sender_of(const protocol::binary_signals& s) const {
    if (s.epoch != epoch_) {
        DNNC_LOG(debug, "signals of tick " << s.tick << " from '" << s.from << "' dropped: epoch " << s.epoch
                                           << ", this network's is " << epoch_);
        return std::nullopt;
    }
    const auto it = peer_index_.find(s.from);
    if (it == peer_index_.end()) throw protocol_error("signals from '" + s.from + "', which is not a peer of this node");
    return it->second;
}

// ---- TCP ----

tcp_transport::tcp_transport(const protocol::node_config& config, outbox& out, signal_inbox& in,
                             const std::map<std::string, double>& extra_delay_ms)
    : peer_transport(config), out_(out), in_(in) {
    for (const auto& p : config.peers) {
        const auto extra = extra_delay_ms.find(p.id);
        peers_.push_back({{p.host, static_cast<std::uint16_t>(p.port)},
                          p.emulate_delay_ms + (extra == extra_delay_ms.end() ? 0.0 : extra->second)});
    }
}

void tcp_transport::send(std::size_t peer, const sim::packet& p) {
    std::string bytes;
    protocol::encode_signals(from_, epoch_, p.tick, p.dense, p.values, p.nonzero, bytes);
    out_.send(peers_.at(peer).at, {protocol::message_type::signals, 0, 0, std::move(bytes)}, peers_[peer].delay_ms);
}

bool tcp_transport::collect(const receiver& deliver, std::chrono::microseconds wait) {
    in_.collect(
        [&](protocol::binary_signals s) {
            if (const auto peer = sender_of(s)) deliver(*peer, packet_of(std::move(s)));
        },
        wait);
    return true;
}

// ---- MPI ----

namespace {
constexpr int signals_tag = 7301;
}

struct mpi_transport::destination {
    int rank;
    std::string buffer;
    MPI_Request request = MPI_REQUEST_NULL;
};

mpi_transport::mpi_transport(const protocol::node_config& config, const std::map<std::string, int>& ranks)
    : peer_transport(config) {
    for (const auto& p : config.peers) {
        const auto it = ranks.find(p.id);
        if (it == ranks.end()) throw error("node '" + p.id + "' is not a rank of this MPI job");
        peers_.push_back({it->second, {}, MPI_REQUEST_NULL});
    }
}

mpi_transport::~mpi_transport() {
    // Sends still in flight go to peers that may have stopped: let them go.
    for (auto& d : peers_)
        if (d.request != MPI_REQUEST_NULL) MPI_Request_free(&d.request);
}

void mpi_transport::send(std::size_t peer, const sim::packet& p) {
    auto& d = peers_.at(peer);
    MPI_Wait(&d.request, MPI_STATUS_IGNORE);  // the last tick's send to this peer: done long ago
    protocol::encode_signals(from_, epoch_, p.tick, p.dense, p.values, p.nonzero, d.buffer);
    MPI_Isend(d.buffer.data(), static_cast<int>(d.buffer.size()), MPI_BYTE, d.rank, signals_tag, MPI_COMM_WORLD, &d.request);
}

bool mpi_transport::collect(const receiver& deliver, std::chrono::microseconds wait) {
    // MPI has no wait with a deadline: probe, yielding between probes for the first
    // millisecond (a lockstep tick's packets come within tens of µs; a sleep would cost the
    // timer's slack, about 50 µs, every tick), then sleeping between them so that ranks
    // sharing cores leave each other time.
    const auto start = std::chrono::steady_clock::now(), deadline = start + wait;
    while (true) {
        bool got = false;
        while (true) {
            int flag = 0;
            MPI_Status status;
            MPI_Iprobe(MPI_ANY_SOURCE, signals_tag, MPI_COMM_WORLD, &flag, &status);
            if (!flag) break;
            int count = 0;
            MPI_Get_count(&status, MPI_BYTE, &count);
            incoming_.resize(static_cast<std::size_t>(count));
            MPI_Recv(incoming_.data(), count, MPI_BYTE, status.MPI_SOURCE, signals_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            try {
                auto s = protocol::decode_signals(incoming_);
                if (const auto peer = sender_of(s)) deliver(*peer, packet_of(std::move(s)));
            } catch (const protocol_error& e) {
                DNNC_LOG(warn, "signals from rank " << status.MPI_SOURCE << " dropped: " << e.what());
            }
            got = true;
        }
        const auto now = std::chrono::steady_clock::now();
        if (got || now >= deadline) return true;
        if (now - start < std::chrono::milliseconds(1))
            std::this_thread::yield();
        else
            std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
}

}  // namespace dnnc::node_server
