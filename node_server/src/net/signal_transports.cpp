#include "net/signal_transports.hpp"

#include "dnnc/node_server/log.hpp"
#include "dnnc/protocol/frame.hpp"
#include "dnnc/protocol/signal_compression.hpp"

#include <mpi.h>

#include <algorithm>
#include <thread>

namespace dnnc::node_server {

peer_transport::peer_transport(const model::node_config& config)
    : from_(config.node), epoch_(config.epoch), sent_(config.peers.size()) {
    for (const auto& p : config.peers) peer_index_.emplace(p.id, peer_index_.size());
}

std::vector<peer_transport::sent_bytes> peer_transport::bytes_sent() const {
    std::vector<sent_bytes> out;
    for (const auto& c : sent_) out.push_back({c.packets.load(), c.payloads.load()});
    return out;
}

void peer_transport::count_sent(std::size_t peer, std::size_t packet, std::size_t payload) {
    sent_[peer].packets.fetch_add(static_cast<std::int64_t>(packet), std::memory_order_relaxed);
    sent_[peer].payloads.fetch_add(static_cast<std::int64_t>(payload), std::memory_order_relaxed);
}

void peer_transport::swap_into(protocol::binary_signals& s, sim::packet& p) {
    p.tick = s.tick;
    p.dense = s.dense;
    std::swap(p.values, s.values);
    std::swap(p.nonzero, s.nonzero);
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

tcp_transport::tcp_transport(const model::node_config& config, outbox& out, signal_inbox& in,
                             const std::map<std::string, double>& extra_delay_ms)
    : peer_transport(config), out_(out), in_(in) {
    for (const auto& p : config.peers) {
        const auto extra = extra_delay_ms.find(p.id);
        peers_.push_back({{p.host, static_cast<std::uint16_t>(p.port)},
                          p.emulate_delay_ms + (extra == extra_delay_ms.end() ? 0.0 : extra->second), p.compress});
    }
}

void tcp_transport::send(std::size_t peer, const sim::packet& p) {
    const auto& to = peers_.at(peer);
    std::string bytes;
    protocol::encode_signals(from_, epoch_, p.tick, p.dense, p.values, p.nonzero, bytes);
    const std::size_t packet = bytes.size();
    std::uint16_t flags = 0;
    if (to.compress && protocol::compress_signals(bytes, compressed_)) {
        bytes.swap(compressed_);
        flags = protocol::compressed_flag;
    }
    count_sent(peer, packet, bytes.size());
    out_.send(to.at, {protocol::message_type::signals, flags, 0, std::move(bytes)}, to.delay_ms);
}

bool tcp_transport::collect(const receiver& deliver, std::chrono::microseconds wait) {
    in_.collect(
        [&](protocol::binary_signals s) {
            if (const auto peer = sender_of(s)) {
                sim::packet p;
                swap_into(s, p);
                deliver(*peer, p);
            }
        },
        wait);
    return true;
}

// ---- MPI ----

namespace {
constexpr int signals_tag = 7301;
constexpr std::size_t smallest_class = 256;  // bytes
}  // namespace

struct mpi_transport::channels {
    MPI_Comm comm;
    // A send buffer with its persistent sends, one per size class.
    struct send_slot {
        std::vector<char> out;
        std::vector<MPI_Request> sends;
        int sending = -1;  // the class whose send may still be under way
    };
    struct peer_channel {
        int rank;
        std::size_t out_bytes;  // the largest packet to the peer, sparse
        std::vector<std::size_t> class_bytes;  // ascending; the last is out_bytes
        std::vector<send_slot> slots;  // as many as sends under way at once
        std::vector<char> in;  // the largest packet from the peer, sparse
    };
    send_slot new_slot(const peer_channel& ch) const;
    std::vector<peer_channel> peers;
    std::vector<MPI_Request> receives;  // one per peer, contiguous for MPI_Testsome
    std::vector<int> arrived;
    std::vector<MPI_Status> statuses;
};

mpi_transport::channels::send_slot mpi_transport::channels::new_slot(const peer_channel& ch) const {
    send_slot slot;
    slot.out.assign(ch.out_bytes, 0);
    slot.sends.resize(ch.class_bytes.size());
    for (std::size_t k = 0; k < slot.sends.size(); ++k)
        MPI_Send_init(slot.out.data(), static_cast<int>(ch.class_bytes[k]), MPI_BYTE, ch.rank, signals_tag, comm, &slot.sends[k]);
    return slot;
}

mpi_transport::mpi_transport(const model::node_config& config, const node_options::mpi_signals& mpi, const sim::engine& e)
    : peer_transport(config), channels_(std::make_unique<channels>()) {
    auto& c = *channels_;
    c.comm = MPI_Comm_f2c(mpi.communicator);
    for (std::size_t i = 0; i < config.peers.size(); ++i) {
        const auto& p = config.peers[i];
        const auto it = mpi.ranks.find(p.id);
        if (it == mpi.ranks.end()) throw error("node '" + p.id + "' is not a rank of this MPI job");
        auto& ch = c.peers.emplace_back();
        ch.rank = it->second;
        ch.out_bytes = protocol::signals_size(from_.size(), false, e.send_count(i));
        for (std::size_t bytes = smallest_class; bytes < ch.out_bytes; bytes *= 2) ch.class_bytes.push_back(bytes);
        ch.class_bytes.push_back(ch.out_bytes);
        ch.slots.push_back(c.new_slot(ch));
        ch.in.assign(protocol::signals_size(p.id.size(), false, e.receive_count(i)), 0);
        auto& receive = c.receives.emplace_back();
        MPI_Recv_init(ch.in.data(), static_cast<int>(ch.in.size()), MPI_BYTE, ch.rank, signals_tag, c.comm, &receive);
    }
    c.arrived.resize(c.receives.size());
    c.statuses.resize(c.receives.size());
    if (!c.receives.empty()) MPI_Startall(static_cast<int>(c.receives.size()), c.receives.data());
}

mpi_transport::~mpi_transport() {
    auto& c = *channels_;
    for (auto& r : c.receives) {
        MPI_Cancel(&r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Request_free(&r);
    }
    // A send still under way goes to a peer that may have stopped; give it a moment, then
    // let it go with its buffer (kept: MPI may still read it).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
    bool pending = false;
    for (auto& ch : c.peers)
        for (auto& slot : ch.slots) {
            if (slot.sending >= 0) {
                int done = 0;
                while (!done && std::chrono::steady_clock::now() < deadline)
                    MPI_Test(&slot.sends[slot.sending], &done, MPI_STATUS_IGNORE);
                pending = pending || !done;
            }
            for (auto& r : slot.sends) MPI_Request_free(&r);
        }
    if (pending) channels_.release();
}

void mpi_transport::send(std::size_t peer, const sim::packet& p) {
    auto& ch = channels_->peers.at(peer);
    // A slot whose send is done, else a new one: a send never waits for an earlier one.
    // (A large packet's send ends only once the peer has restarted its receive, which it
    // does between ticks; two nodes each waiting in a send would wait for ever.)
    auto idle = std::find_if(ch.slots.begin(), ch.slots.end(), [](channels::send_slot& slot) {
        int done = 1;
        if (slot.sending >= 0) MPI_Test(&slot.sends[slot.sending], &done, MPI_STATUS_IGNORE);
        if (done) slot.sending = -1;
        return done != 0;
    });
    if (idle == ch.slots.end()) idle = ch.slots.insert(idle, channels_->new_slot(ch));
    auto& slot = *idle;
    const auto bytes = protocol::encode_signals(from_, epoch_, p.tick, p.dense, p.values, p.nonzero, slot.out.data());
    const auto fits = std::lower_bound(ch.class_bytes.begin(), ch.class_bytes.end(), bytes);
    slot.sending = static_cast<int>(fits - ch.class_bytes.begin());
    count_sent(peer, bytes, *fits);
    MPI_Start(&slot.sends[static_cast<std::size_t>(slot.sending)]);
}

bool mpi_transport::deliver_arrived(const receiver& deliver) {
    auto& c = *channels_;
    int count = 0;
    const int outcome =
        MPI_Testsome(static_cast<int>(c.receives.size()), c.receives.data(), &count, c.arrived.data(), c.statuses.data());
    if (count == MPI_UNDEFINED || count == 0) return false;
    for (int k = 0; k < count; ++k) {
        const auto i = static_cast<std::size_t>(c.arrived[static_cast<std::size_t>(k)]);
        const auto& status = c.statuses[static_cast<std::size_t>(k)];
        auto& ch = c.peers[i];
        int received = 0;
        MPI_Get_count(&status, MPI_BYTE, &received);
        try {
            // A status's error is set only when the call says so.
            if (outcome == MPI_ERR_IN_STATUS && status.MPI_ERROR != MPI_SUCCESS)
                throw protocol_error("MPI error " + std::to_string(status.MPI_ERROR) + " (larger than this network's packets?)");
            const std::string_view bytes(ch.in.data(), static_cast<std::size_t>(received));
            protocol::decode_signals(bytes.substr(0, protocol::signals_length(bytes)), decoded_);
            if (const auto from = sender_of(decoded_)) {
                swap_into(decoded_, arrived_);
                deliver(*from, arrived_);
            }
        } catch (const protocol_error& e) {
            DNNC_LOG(warn, "signals from rank " << ch.rank << " dropped: " << e.what());
        }
        MPI_Start(&c.receives[i]);
    }
    return true;
}

bool mpi_transport::collect(const receiver& deliver, std::chrono::microseconds wait) {
    // MPI has no wait with a deadline: test, yielding between tests for the first
    // millisecond (a lockstep tick's packets come within tens of µs; a sleep would cost the
    // timer's slack, about 50 µs, every tick), then sleeping between them so that ranks
    // sharing cores leave each other time.
    const auto start = std::chrono::steady_clock::now(), deadline = start + wait;
    while (true) {
        const bool got = deliver_arrived(deliver);
        const auto now = std::chrono::steady_clock::now();
        if (got || now >= deadline) return true;
        if (now - start < std::chrono::milliseconds(1))
            std::this_thread::yield();
        else
            std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
}

}  // namespace dnnc::node_server
