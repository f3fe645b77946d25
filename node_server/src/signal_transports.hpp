#pragma once
// How a node's runner sends and receives its signal packets (private to dnnc_node_server):
// over TCP signal links (signal_inbox.hpp, outbox.hpp), or over MPI between the ranks of
// an MPI job (dnnc-node --mpi --transport mpi). Both carry the same encoded packets
// (protocol/signal_codec.hpp), so a run gives the same bits either way.
#include "dnnc/node_server/outbox.hpp"
#include "dnnc/node_server/signal_inbox.hpp"
#include "dnnc/protocol/model.hpp"
#include "dnnc/protocol/signal_codec.hpp"
#include "dnnc/sim/runner.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dnnc::node_server {

// What both transports share: the peers of one installation, by index.
class peer_transport : public sim::transport {
protected:
    explicit peer_transport(const protocol::node_config& config);
    // The peer a packet comes from; nothing for one of another installation (epoch).
    std::optional<std::size_t> sender_of(const protocol::binary_signals& s) const;
    static sim::packet packet_of(protocol::binary_signals s) { return {s.tick, s.dense, std::move(s.values), std::move(s.nonzero)}; }

    std::string from_;
    std::uint64_t epoch_;
    std::map<std::string, std::size_t> peer_index_;
};

class tcp_transport final : public peer_transport {
public:
    tcp_transport(const protocol::node_config& config, outbox& out, signal_inbox& in,
                  const std::map<std::string, double>& extra_delay_ms);
    void send(std::size_t peer, const sim::packet& p) override;
    bool collect(const receiver& deliver, std::chrono::microseconds wait) override;

private:
    struct destination {
        endpoint at;
        double delay_ms;
    };
    outbox& out_;
    signal_inbox& in_;
    std::vector<destination> peers_;
};

// Point-to-point messages on MPI_COMM_WORLD (which needs MPI_THREAD_MULTIPLE: the runner's
// thread calls MPI). Each peer has one send buffer, encoded into in place every tick (no
// allocation once it has grown), and one request (MPI_Isend); a send first completes the
// peer's previous one. Not MPI's persistent requests: those fix a message's size, and
// sparse packets vary. `ranks`: each node id's rank.
class mpi_transport final : public peer_transport {
public:
    mpi_transport(const protocol::node_config& config, const std::map<std::string, int>& ranks);
    ~mpi_transport() override;
    void send(std::size_t peer, const sim::packet& p) override;
    bool collect(const receiver& deliver, std::chrono::microseconds wait) override;

private:
    struct destination;
    std::vector<destination> peers_;
    std::string incoming_;
};

}  // namespace dnnc::node_server
