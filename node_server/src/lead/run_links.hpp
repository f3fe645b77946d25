#pragma once
// What the lead's side of a run (lead_run) is given (private to dnnc_node_server): the
// links through which it reaches the nodes, the standby and the lead, as plain functions so
// that it runs without sockets in its tests; and where it keeps what the run produces.
#include "dnnc/protocol/control_plane.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace dnnc::node_server {

struct run_links {
    // A clock request to node v; returns its reply.
    std::function<protocol::clock_reply(std::size_t node, protocol::clock_request)> clock;
    // External inputs [[index, tick, value]...] for node v.
    std::function<void(std::size_t node, const nlohmann::json&)> inputs;
    // Whether node v still answers heartbeats.
    std::function<bool(std::size_t node)> alive;
    // What node v's tick in progress waits for (node_simulation::waiting), as of its
    // last heartbeat; null when nothing.
    std::function<nlohmann::json(std::size_t node)> waiting;
    // Writes a binary snapshot of the network at `tick` (the next to compute) into `file`,
    // taken while every node is paused there. It must not take a reference to the run: a
    // run may not end on its own ticker thread.
    std::function<void(std::int64_t tick, const std::string& file)> capture;
    // The nodes have stopped before a scheduled <grow>'s tick (population_growth.hpp), the
    // next they compute: the lead grows the network there and carries on. Called on the
    // ticker thread, which ends after it: it must not take a reference to the run.
    std::function<void(std::int64_t tick)> grow_due;
    // Sends a replica message (standby.hpp) to the standby; may be empty (no standby).
    // Called without the run's lock; a standby that cannot be reached is not an error.
    std::function<void(const nlohmann::json& header, const std::string& body)> replicate;
};

// Where the lead keeps what a run produces.
struct run_storage {
    // The output rows held for clients (output_rows): the newest within this budget.
    std::size_t output_memory;
    // Checkpoint folders live under this folder, and nowhere else.
    std::string checkpoint_root;
};

}  // namespace dnnc::node_server
