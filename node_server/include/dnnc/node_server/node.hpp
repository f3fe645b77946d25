#pragma once
// A dnnc node: the server with three modules. The worker (configure, probe, clock, inputs,
// capture, restore) runs this node's share of a network; the lead (submit, tick reports,
// control, output, snapshot) is active on the node a document was submitted to: it plans,
// measures link latencies with source-routed probes, fans the node configs out along the
// broadcast tree, runs the clock and watches the other nodes with heartbeats; the admin
// module answers status, heartbeat and shutdown.
#include "dnnc/node_server/server.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace dnnc::node_server {

// $XDG_STATE_HOME/dnnc, else $HOME/.local/state/dnnc, else /tmp/dnnc-state-UID.
std::string default_state_dir();

struct node_options {
    server_options server;
    // Extra delay (ms) this node holds back everything it sends to the given peer node id,
    // on top of the emulate-delay of the link in the cluster config.
    std::map<std::string, double> emulate_delay_ms;
    // Where dense projections run: "cpu", "cuda" or "auto" (see sim::resolve_device).
    std::string device = "cpu";
    // How long another node may stay silent while this one waits for its answer to a call
    // whose work grows with what it asks (a subtree's configure, a capture, states to
    // restore, a replica): such a call waits as long as the other node answers heartbeats,
    // and fails only after this much silence (peer_client::call_while_alive). Calls of
    // fixed work (a probe, a status before a submit) take at most this long.
    std::chrono::milliseconds silence_limit{10000};
    // The most memory (bytes) this node's share of a network may need; 0: what its machine
    // can give. The lead refuses a network whose share does not fit, before anything changes.
    std::uint64_t memory_limit = 0;
    // This node's own folder: checkpoints go under STATE_DIR/checkpoints and nowhere else.
    std::string state_dir = default_state_dir();
    // Without a secret every local user may submit to this node, so a document submitted or
    // replicated to it may name (spike source file=, dense weights=) only files inside these
    // folders; none, when there are none. With a secret only the cluster's clients submit,
    // and their documents may name any file this node can read.
    std::vector<std::string> data_dirs;
    // The most memory (bytes) the output rows a lead holds for clients may take; older rows
    // are dropped beyond it (a client reading them in time loses none).
    std::size_t output_memory = std::size_t{64} << 20;
    // With ranks, this node is a rank of an MPI job whose signals travel over MPI
    // (dnnc-node --mpi --transport mpi, docs/mpi.md); MPI must be initialised with
    // MPI_THREAD_MULTIPLE.
    struct mpi_signals {
        std::map<std::string, int> ranks;  // each node id's rank
        // The communicator they travel on, a duplicate of MPI_COMM_WORLD whose errors are
        // returned rather than fatal, as its Fortran handle (MPI_Comm_c2f: this header
        // needs no mpi.h).
        int communicator = 0;
    } mpi;
    // The live page (docs/live.md): port -1 serves none, 0 a free port. Without a secret it
    // serves this machine only, whatever the address; with one, only requests that carry the
    // token (http_token in secret.hpp) or the secret.
    int http_port = -1;
    std::string http_bind = "127.0.0.1";
};

// "123", "512K", "64M", "8G" or "1T" (powers of 1024) as bytes; usage_error otherwise.
std::uint64_t parse_byte_size(const std::string& text);

class node {
public:
    explicit node(node_options options);
    ~node();
    void start();
    std::uint16_t port() const;
    // The live page's port; 0 when the node serves none.
    std::uint16_t http_port() const;
    void wait();
    void stop();

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace dnnc::node_server
