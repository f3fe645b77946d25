#pragma once
// How a node's runner sends and receives its signal packets (private to dnnc_node_server):
// over TCP signal links (signal_inbox.hpp, outbox.hpp), or over MPI between the ranks of
// an MPI job (dnnc-node --mpi --transport mpi). Both carry the same encoded packets
// (protocol/signal_codec.hpp), so a run gives the same bits either way. Over TCP, packets to
// a peer whose route the lead marked (peer_route::compress) go LZ4-compressed when that makes
// them smaller (protocol/signal_compression.hpp); MPI sends them as they are.
#include "dnnc/model/model.hpp"
#include "dnnc/node_server/node.hpp"
#include "dnnc/node_server/outbox.hpp"
#include "dnnc/node_server/signal_inbox.hpp"
#include "dnnc/protocol/signal_codec.hpp"
#include "dnnc/sim/runner.hpp"

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dnnc::node_server {

// What both transports share: the peers of one installation, by index.
class peer_transport : public sim::transport {
public:
    // Bytes sent to a peer since the installation: its packets as encoded, and the payloads
    // that carried them (compressed, or with MPI's padding).
    struct sent_bytes {
        std::int64_t packets = 0, payloads = 0;
    };
    // By peer; any thread may ask while the runner sends.
    std::vector<sent_bytes> bytes_sent() const;

protected:
    explicit peer_transport(const model::node_config& config);
    // The peer a packet comes from; nothing for one of another installation (epoch).
    std::optional<std::size_t> sender_of(const protocol::binary_signals& s) const;
    // Moves a decoded packet's values into `p`, leaving `s` the buffers `p` had.
    static void swap_into(protocol::binary_signals& s, sim::packet& p);
    // Counts a packet of `packet` bytes sent to `peer` in a payload of `payload` bytes.
    void count_sent(std::size_t peer, std::size_t packet, std::size_t payload);

    std::string from_;
    std::uint64_t epoch_;
    std::map<std::string, std::size_t> peer_index_;

private:
    struct byte_counters {
        std::atomic<std::int64_t> packets{0}, payloads{0};
    };
    std::vector<byte_counters> sent_;  // by peer
};

class tcp_transport final : public peer_transport {
public:
    tcp_transport(const model::node_config& config, outbox& out, signal_inbox& in,
                  const std::map<std::string, double>& extra_delay_ms);
    void send(std::size_t peer, const sim::packet& p) override;
    bool collect(const receiver& deliver, std::chrono::microseconds wait) override;

private:
    struct destination {
        endpoint at;
        double delay_ms;
        bool compress;
    };
    outbox& out_;
    signal_inbox& in_;
    std::vector<destination> peers_;
    std::string compressed_;  // the last compression's buffer, reused
};

// Point-to-point messages on the job's signal communicator (node_options::mpi_signals;
// MPI_THREAD_MULTIPLE: the runner's thread calls MPI), over MPI's persistent requests:
// nothing is allocated or set up per tick.
//   Receiving: one persistent receive per peer into a buffer that holds the largest packet
//   the peer can send (every value sparse), restarted as soon as its packet is delivered.
//   Sending: one buffer per peer of the same bound, encoded into in place. A persistent
//   request sends a fixed number of bytes, and sparse packets vary, so each peer has one
//   send request per size class (powers of two from 256 bytes up to the bound): a packet
//   goes out in the smallest class that holds it, at most twice its size, the rest of
//   the class being padding that the receiver skips (the packet's header gives its
//   length). A send first completes the peer's previous one.
class mpi_transport final : public peer_transport {
public:
    mpi_transport(const model::node_config& config, const node_options::mpi_signals& mpi, const sim::engine& e);
    ~mpi_transport() override;
    void send(std::size_t peer, const sim::packet& p) override;
    bool collect(const receiver& deliver, std::chrono::microseconds wait) override;

private:
    struct channels;  // the buffers and requests (MPI types stay in the .cpp)
    // Hands what arrived to `deliver` and restarts those receives; false when nothing had.
    bool deliver_arrived(const receiver& deliver);
    std::unique_ptr<channels> channels_;
    protocol::binary_signals decoded_;
    sim::packet arrived_;
};

}  // namespace dnnc::node_server
