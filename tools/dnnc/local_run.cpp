#include "local_run.hpp"

#include "dnnc/model/model.hpp"
#include "dnnc/protocol/frame.hpp"

#include <filesystem>
#include <iostream>

namespace dnnc::cli {

model::cluster local_cluster_of(int k) {
    model::cluster c;
    c.lead = "n0";
    for (int i = 0; i < k; ++i) c.nodes.push_back({"n" + std::to_string(i), "127.0.0.1", 0, 1.0, {}});
    for (int i = 0; i < k; ++i)
        for (int j = i + 1; j < k; ++j) c.links.push_back({c.nodes[i].id, c.nodes[j].id, 0.0, std::nullopt, {}});
    return c;
}

cluster_session::cluster_session(const model::cluster& clu, const std::string& config,
                                 const node_server::launch_options& launch)
    : cluster_(node_server::start_local_cluster(clu, config, launch)) {}

cluster_session::~cluster_session() {
    const bool failed = std::uncaught_exceptions() > unwinding_;
    node_server::stop_local_cluster(cluster_, failed ? node_server::node_logs::keep : node_server::node_logs::remove);
    if (failed && !cluster_.nodes.empty())
        std::cerr << "dnnc: the nodes' logs are in "
                  << std::filesystem::path(cluster_.nodes.front().log_file).parent_path().string() << '\n';
}

model::cluster cluster_session::listening(model::cluster clu) const {
    for (auto& node : clu.nodes)
        for (const auto& started : cluster_.nodes)
            if (started.id == node.id) node.port = started.at.port;
    return clu;
}

std::vector<int> cluster_session::pids() const {
    std::vector<int> list;
    for (const auto& n : cluster_.nodes) list.push_back(n.pid);
    return list;
}

step_watch takeover_watch(const model::document& doc) {
    step_watch watch;
    if (doc.clu)
        for (const auto& n : doc.clu->nodes) watch.nodes.push_back(n.host + ":" + std::to_string(n.port));
    if (doc.net) watch.network = doc.net->name;
    const double timeout_ms = doc.run ? doc.run->heartbeat_timeout_ms : model::run_settings{}.heartbeat_timeout_ms;
    watch.takeover_patience = std::chrono::milliseconds(static_cast<long>(timeout_ms) + 60000);
    return watch;
}

step_outcome step_and_read(const client_options& o, std::string& lead, std::int64_t ticks, const step_watch& watch) {
    if (ticks < 1 || ticks > model::max_tick_count)
        throw usage_error("ticks must lie in 1.." + std::to_string(model::max_tick_count) + ", not " + std::to_string(ticks));
    protocol::control_request step(protocol::control_request::kind::step);
    step.ticks = ticks;
    const auto reply = progress_after(o, lead, step);
    if (reply.error) throw error(*reply.error);
    const auto target = reply.target;
    step_outcome outcome;
    // Spikes and outputs are read while the run goes, every half second: often enough that
    // the lead holds few, seldom enough that reading them takes little from the nodes.
    auto last_read = std::chrono::steady_clock::now();
    auto read_some = [&] {
        if (watch.each_poll) watch.each_poll();
        if (std::chrono::steady_clock::now() - last_read < std::chrono::milliseconds(500)) return;
        if (watch.spikes) watch.spikes->read();
        if (watch.outputs) watch.outputs->read();
        last_read = std::chrono::steady_clock::now();
    };
    auto read_through = [&](std::int64_t last) {
        if (watch.spikes) watch.spikes->read_through(last);
        if (watch.outputs) watch.outputs->read_through(last);
    };
    while (true) {
        try {
            outcome.progress = wait_for_tick(o, lead, target, watch.interrupted, read_some, watch.bar);
            break;
        } catch (const io_error& e) {
            if ((watch.interrupted && *watch.interrupted) || watch.nodes.empty()) throw;
            // The lead is gone: its standby takes the run over from the last checkpoint and
            // goes on stepping to the target; the readers go on where they were.
            std::cerr << "dnnc: the lead at " << lead << " stopped answering (" << e.what() << "); waiting for its standby\n";
            lead = find_new_lead(o, watch.nodes, lead, watch.network, watch.takeover_patience);
            std::cerr << "dnnc: " << lead << " took over the run\n";
            outcome.took_over = true;
            if (watch.spikes) watch.spikes->follow(lead);
            if (watch.outputs) watch.outputs->follow(lead);
            const auto now = progress_of(o, lead);
            const auto done = now.completed;
            if (now.state == "frozen" && done < target) {
                step.ticks = target - done;
                try {
                    control(o, lead, step);
                } catch (const node_server::remote_refusal&) {
                    // The new lead carried on as its intent says between our two calls: it steps.
                    if (progress_of(o, lead).state == "frozen") throw;
                }
            }
        } catch (const error&) {
            if (!watch.interrupted || !*watch.interrupted) throw;
            // Interrupted: the readers get every row complete now (a network frozen before
            // the interruption, as dnnc-node --mpi does, loses none).
            read_through(progress_of(o, lead).completed);
            throw;
        }
    }
    read_through(outcome.progress.completed);
    return outcome;
}

}  // namespace dnnc::cli
