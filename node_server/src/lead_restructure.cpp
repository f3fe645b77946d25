// The lead's changes to a running network (lead.hpp): populations that grow, each done by
// freezing the run at a tick, snapshotting it, changing the snapshot and restoring it onto
// the cluster (restart_on_survivors), so the run goes on bit for bit.
#include "lead.hpp"
#include "lead_state.hpp"

#include "dnnc/node_server/log.hpp"
#include "dnnc/protocol/resolve.hpp"
#include "dnnc/protocol/snapshot_file.hpp"
#include "population_growth.hpp"

#include <filesystem>

namespace dnnc::node_server {

using json = nlohmann::json;

// ---- growing populations ----

// An output row's columns are those of the network with every grow of its document (the
// members a scheduled grow adds read 0 until then): a grow the document did not schedule
// would widen rows already read.
void lead::refuse_output_growth(const std::string& population) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!state_) return;
    const auto& net = *state_->plan.doc.net;
    for (const auto& o : net.outputs)
        for (const auto& reference : o.neurons)
            if (reference.substr(0, reference.find('[')) == population)
                throw usage_error("grow of '" + population + "': it is in output '" + o.id +
                                  "', whose columns are fixed when the run starts; schedule the grow in the document "
                                  "(<grow population=\"" + population + "\" add=\"N\" at-ms=\"T\"/>)");
}

bool lead::still_running(const std::shared_ptr<lead_run>& run) {
    std::lock_guard<std::mutex> lock(mutex_);
    return run_ == run;
}

json lead::grow(const json& command) {
    const auto population = command.at("population").get<std::string>();
    const auto add = whole_number(command.at("add"), "grow: add", 1, static_cast<std::int64_t>(protocol::expand_limits{}.max_neurons));
    std::lock_guard<std::mutex> one_at_a_time(growing_);
    const auto run = current_run();
    refuse_output_growth(population);
    const auto intent = run->intent();
    auto summary = regrow(run, intent, [&](protocol::network& net, std::int64_t tick) { add_applied_grow(net, population, add, tick); });
    std::uint64_t size = 0;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto& net = *state_->plan.doc.net;
        size = protocol::members_in(protocol::symbol_table(net).extents(population, net.where));
    }
    return {{"population", population},
            {"added", add},
            {"size", size},
            {"first_new", population + "[" + std::to_string(size - static_cast<std::uint64_t>(add)) + "]"},
            {"tick", summary["tick"]},
            {"paused_ms", summary["paused_ms"]},
            {"nodes", summary["nodes"]}};
}

void lead::grow_scheduled(std::int64_t tick) {
    try {
        std::lock_guard<std::mutex> one_at_a_time(growing_);
        const auto run = current_run();
        if (run->next_tick() != tick) return;  // frozen and moved on meanwhile: its clock meets the grow again
        const auto summary = regrow(run, run->intent(), [](protocol::network& net, std::int64_t at) { apply_due_grows(net, at); });
        DNNC_LOG(info, "scheduled growth at tick " << tick << ": " << summary.dump());
    } catch (const std::exception& e) {
        // The run cannot go past a growth of its document's.
        std::shared_ptr<lead_run> run;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            run = run_;
        }
        if (run && run->next_tick() == tick) run->fail("the growth at tick " + std::to_string(tick) + " failed: " + e.what());
    }
}

// The frozen run, snapshotted at its next tick T, grown by `change` (of its network, at T)
// and restored onto the same nodes with the rows and spikes before T; then it carries on as
// `intent` says. A grow that does not check (or does not fit the nodes' memory) changes
// nothing: the run carries on and the error goes to the caller.
json lead::regrow(const std::shared_ptr<lead_run>& run, const json& intent,
                  const std::function<void(protocol::network&, std::int64_t)>& change) {
    namespace fs = std::filesystem;
    const auto started = clock_type::now();
    if (!run->paused()) run->control({{"command", "freeze"}});
    const auto tick = run->next_tick();
    const fs::path dir = fs::path(options_.state_dir) / "growth";
    fs::create_directories(dir);
    struct removed_after {
        std::string path;
        ~removed_after() {
            std::error_code ignored;
            fs::remove(path, ignored);
        }
    } before{(dir / ("before-" + std::to_string(tick) + ".dnncs")).string()},
        after{(dir / ("grown-" + std::to_string(tick) + ".dnncs")).string()};
    std::size_t neurons_before = 0;
    json summary;
    try {
        capture_snapshot(tick, before.path);
        protocol::document grown = protocol::snapshot_reader(before.path, file_access()).doc();
        neurons_before = protocol::symbol_table(*grown.net).neuron_count();
        change(*grown.net, tick);
        write_grown_snapshot(before.path, grown, after.path);
        std::vector<plan::link_time> measured;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            measured = state_->times;  // the same nodes and links: no probes
        }
        summary = restart_on_survivors(protocol::check_snapshot_file(after.path, file_access()), {},
                                       {run->rows_before(tick), run->spikes_before(tick), run->checkpoint_settings_json(),
                                        run->structure_before(tick)},
                                       after.path,
                                       &measured);
    } catch (const std::exception& e) {
        // Nothing changed while the old run is the lead's: it carries on.
        DNNC_LOG(warn, "growth at tick " << tick << " failed: " << e.what());
        if (still_running(run)) try {
                resume(*run, intent);
            } catch (const std::exception& also) {
                DNNC_LOG(warn, "the run could not carry on after the failed growth: " << also.what());
            }
        throw;
    }
    resume(*current_run(), intent);
    summary["neurons_before"] = neurons_before;
    summary["paused_ms"] = elapsed_ms(started);
    return summary;
}

}  // namespace dnnc::node_server
