#pragma once
// What running a network takes, shared by `dnnc run` and the Python module: a cluster of K
// local nodes, a session that takes a started cluster down however the run ends, and a
// step that reads the run's outputs and spikes as it goes and follows a lead takeover.
#include "spike_reader.hpp"

#include "dnnc/model/model.hpp"
#include "dnnc/node_server/local_cluster.hpp"
#include "dnnc/protocol/status.hpp"

#include <chrono>
#include <exception>
#include <functional>
#include <string>
#include <vector>

namespace dnnc::cli {

// K local nodes, every pair linked; port 0: each node picks a free one when it starts.
model::cluster local_cluster_of(int k);

// Starts the local nodes of a cluster, and stops them when it goes (the nodes' logs stay,
// and their folder is said on standard error, when it goes while an exception unwinds).
class cluster_session {
public:
    cluster_session(const model::cluster& clu, const std::string& config, const node_server::launch_options& launch);
    ~cluster_session();
    cluster_session(const cluster_session&) = delete;
    cluster_session& operator=(const cluster_session&) = delete;

    // `clu` with the ports its nodes listen on.
    model::cluster listening(model::cluster clu) const;
    // The secret the nodes were started with (the run's own when none was given).
    const std::string& secret_file() const { return cluster_.secret_file; }
    // The process ids of the nodes.
    std::vector<int> pids() const;

private:
    node_server::local_cluster cluster_;
    int unwinding_ = std::uncaught_exceptions();
};

// What a step watches besides the lead's progress.
struct step_watch {
    // Where a standby may take the run over: every node's HOST:PORT, the network's name, and
    // how long to wait for a node to say it leads (the heartbeat timeout and then some).
    std::vector<std::string> nodes;
    std::string network;
    std::chrono::milliseconds takeover_patience{60000};
    // Read every half second while the run goes, then through the last tick (when given).
    spike_reader* spikes = nullptr;
    output_reader* outputs = nullptr;
    const volatile bool* interrupted = nullptr;
    std::function<void()> each_poll;  // after every poll of the lead
    bool bar = true;  // a progress bar on a terminal
};
// Where a network's standby could take it over from its lead (the watch's first three).
step_watch takeover_watch(const model::document& doc);

struct step_outcome {
    protocol::run_progress progress;  // the lead's, at the target
    bool took_over = false;  // `lead` is the node that took the run over
};

// Runs `ticks` more ticks of the network the lead at `lead` runs, and returns once they
// are complete and read. When the lead stops answering, its standby takes the run over
// from the last checkpoint (node_server's standby.hpp): the step finds it, points `lead`
// and the readers at it, and goes on to the same target. Throws usage_error for ticks
// outside 1..max_tick_count, and error when the run fails or is interrupted.
step_outcome step_and_read(const client_options& o, std::string& lead, std::int64_t ticks, const step_watch& watch);

}  // namespace dnnc::cli
