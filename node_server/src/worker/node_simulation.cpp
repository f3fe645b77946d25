#include "worker/node_simulation.hpp"

#include "worker/cpu_wait.hpp"
#include "net/signal_transports.hpp"
#include "weight_bins.hpp"

#include "dnnc/node_server/log.hpp"
#include "dnnc/plan/plan.hpp"
#include "dnnc/protocol/frame.hpp"

#include <algorithm>
#include <utility>
#include <optional>

#include <unistd.h>

namespace dnnc::node_server {

using json = nlohmann::json;

bool same_neurons_and_synapses(const model::node_config& before, const model::node_config& after) {
    if (before.node != after.node || before.network != after.network || before.history != after.history ||
        before.run != after.run || before.neurons.size() != after.neurons.size() || before.dense != after.dense)
        return false;
    for (std::size_t k = 0; k < before.neurons.size(); ++k) {
        auto same_window = before.neurons[k];
        same_window.window_ms = after.neurons[k].window_ms;
        if (same_window != after.neurons[k]) return false;
    }
    return before.share == after.share;
}

namespace {
// `kept` re-routed for `config` when it takes the config's peers (kept stays), else an engine
// built from the share (kept is emptied).
sim::engine engine_for(const model::node_config& config, std::optional<sim::engine>& kept, const std::string& device) {
    if (kept && kept->reroute(sim::from_node_config(config))) return std::move(*kept);
    kept.reset();
    return sim::make_node_engine(config, device);
}
}  // namespace

node_simulation::node_simulation(const model::node_config& config, std::string secret,
                                 std::shared_ptr<const tls_config> tls, signal_inbox& in, reporter report,
                                 const std::map<std::string, double>& extra_delay_ms, const std::string& device,
                                 const node_options::mpi_signals& mpi, std::optional<sim::engine> kept)
    : id_(config.node),
      hash_(plan::config_hash(config)),
      engine_(engine_for(config, kept, device)),
      kept_engine_(kept.has_value()),
      signals_out_(std::move(secret), protocol::frame{protocol::message_type::signal_link, 0, 0,
                                                      signal_link_identity{config.node, config.epoch, getpid()}.encode()},
                   std::move(tls)),
      transport_(mpi.ranks.empty() ? std::unique_ptr<peer_transport>(
                                         std::make_unique<tcp_transport>(config, signals_out_, in, extra_delay_ms))
                                   : std::make_unique<mpi_transport>(config, mpi, engine_)) {
    for (const auto& p : config.peers) peer_ids_.push_back(p.id);
    // Every neuron whose spikes the engine lists (spike sources too), against those recorded:
    // when they are the same, the engine's list is passed on unfiltered.
    std::size_t spiking = 0;
    for (const auto& n : config.neurons) {
        if (n.report) reported_.push_back(n.index);
        if (!model::emits_spikes(n.params.model)) continue;
        ++spiking;
        if (n.record) recorded_.push_back(n.index);
    }
    std::sort(reported_.begin(), reported_.end());
    std::sort(recorded_.begin(), recorded_.end());
    if (const auto& structure = engine_.spec().structure; structure && !structure->groups.empty())
        reports_structure_ = engine_.is_local(structure->groups.front().first_member());
    const auto& local = engine_.spec().neurons;
    by_index_.resize(local.size());
    for (std::size_t k = 0; k < local.size(); ++k) by_index_[k] = k;
    std::sort(by_index_.begin(), by_index_.end(), [&](std::size_t a, std::size_t b) { return local[a].index < local[b].index; });
    records_every_spike_ = !recorded_.empty() && recorded_.size() == spiking;
    if (config.share)
        for (const auto& s : model::samplings_of(*config.share))
            for (const auto i : s.neurons) {
                // config.neurons: this node's neurons, ascending
                const auto mine = std::lower_bound(config.neurons.begin(), config.neurons.end(), static_cast<std::int64_t>(i),
                                                   [](const model::local_neuron& n, std::int64_t k) { return n.index < k; });
                if (mine == config.neurons.end() || mine->index != static_cast<std::int64_t>(i)) continue;
                const auto& names = model::recordable_variables(mine->params.model);
                sampled_neuron n{static_cast<sim::global_index>(i), s.every, {}};
                for (const auto& v : s.variables)
                    n.which.push_back(static_cast<std::size_t>(std::find(names.begin(), names.end(), v) - names.begin()));
                sampled_.push_back(std::move(n));
            }
    std::sort(sampled_.begin(), sampled_.end(), [](const sampled_neuron& a, const sampled_neuron& b) { return a.neuron < b.neuron; });
    options_ = {config.run.sync, config.run.send};
    report_ = std::move(report);
    start_runner();
}

void node_simulation::start_runner() {
    // A network that starts at tick 0 also samples its initial state (m = 0), reported with tick 0.
    json initial = engine_.next_tick() == 0 ? samples(0, engine_) : json::array();
    runner_ = std::make_unique<sim::runner>(engine_, *transport_, options_, [this, initial = std::move(initial)](sim::tick_t t, const sim::engine& e) {
        protocol::reported_tick entry;
        entry.tick = t;
        entry.values.reserve(reported_.size() * e.batch());
        for (auto i : reported_)
            for (std::uint32_t lane = 0; lane < e.batch(); ++lane) entry.values.push_back(e.output(i, lane));
        std::size_t count = entry.values.size();
        if (!recorded_.empty() && !e.spiked().empty()) {
            entry.spikes = recorded_spikes(e);
            count += entry.spikes.size();
        }
        auto sampled = samples(t + 1, e);  // the state at time (t + 1)·dt
        if (!sampled.empty() || (t == 0 && !initial.empty())) {
            count += sampled.size();
            entry.samples = std::move(sampled);
            if (t == 0 && !initial.empty()) {
                count += initial.size();
                entry.initial = initial;
            }
        }
        const auto now = std::chrono::steady_clock::now();
        bool due;
        {
            std::lock_guard<std::mutex> lock(report_mutex_);
            if (reports_structure_)
                for (const auto& r : engine_.take_structure_records())
                    pending_structure_.push_back({r.tick, r.group, r.mean_ca, r.connections, r.created, r.deleted});
            if (pending_ticks_.empty()) oldest_pending_ = now;
            pending_values_ += count;
            pending_ticks_.push_back(std::move(entry));
            // Read after the push: a hold that lowers the horizon past t either comes
            // before this read or flushes t itself.
            due = t >= runner_->granted() || pending_ticks_.size() >= report_batch || pending_values_ >= report_values ||
                  now - oldest_pending_ >= report_delay;
        }
        if (due) {
            runner_cpu_wait_ns_ = this_thread_cpu_wait_ns();  // the runner's own: read on its thread
            flush_reports();
        }
    });
    thread_ = std::thread([this] { runner_->run(); });
}

std::vector<std::uint32_t> node_simulation::recorded_spikes(const sim::engine& e) const {
    std::vector<std::uint32_t> spikes;
    for (const auto i : e.spiked())
        if (records_every_spike_ || std::binary_search(recorded_.begin(), recorded_.end(), i)) spikes.push_back(static_cast<std::uint32_t>(i));
    return spikes;
}

json node_simulation::samples(std::int64_t m, const sim::engine& e) const {
    json values = json::array();
    for (const auto& n : sampled_) {
        if (m % n.every != 0) continue;
        const auto state = e.variables(n.neuron);
        for (const auto k : n.which) values.push_back(state[k]);
    }
    return values;
}

void node_simulation::flush_reports() {
    protocol::tick_report report;
    {
        std::lock_guard<std::mutex> lock(report_mutex_);
        if (pending_ticks_.empty()) return;
        const auto s = runner_->stats();
        // Counts by peer id; those that are still 0 are left out, but for the values sent.
        auto by_peer = [&](const std::vector<std::int64_t>& counts, bool all) {
            std::map<std::string, std::int64_t> of;
            for (std::size_t peer = 0; peer < counts.size() && peer < peer_ids_.size(); ++peer)
                if (all || counts[peer] > 0) of[peer_ids_[peer]] = counts[peer];
            return of;
        };
        report.node = id_;
        report.hash = hash_;
        report.ticks = std::exchange(pending_ticks_, {});
        report.sent = s.values_sent;
        report.dropped = s.values_dropped;
        report.missing = s.packets_missing;
        report.compute_ns = s.compute_ns;
        report.cpu_wait_ns = runner_cpu_wait_ns_;
        report.sent_to = by_peer(s.sent_to, true);
        report.late_from = by_peer(s.late_from, false);
        report.missing_from = by_peer(s.missing_from, false);
        std::vector<std::int64_t> packet_bytes, payload_bytes;
        for (const auto& b : transport_->bytes_sent()) {
            packet_bytes.push_back(b.packets);
            payload_bytes.push_back(b.payloads);
        }
        report.packet_bytes_to = by_peer(packet_bytes, false);
        report.payload_bytes_to = by_peer(payload_bytes, false);
        if (!pending_structure_.empty()) report.structure = std::exchange(pending_structure_, json::array());
        pending_values_ = 0;
    }
    report_(std::move(report));
}

node_simulation::~node_simulation() {
    if (!thread_.joinable()) return;  // released
    runner_->stop();
    thread_.join();
}

sim::engine node_simulation::release_engine() {
    runner_->stop();
    thread_.join();
    released_ = true;
    return std::move(engine_);
}

sim::runner& node_simulation::runner() const {
    if (released_) throw error("node '" + id_ + "' runs another installation of its network now");
    return *runner_;
}

state_piece node_simulation::capture(std::int64_t from, std::size_t bytes) const {
    state_piece piece;
    runner().inspect_paused([&](const sim::engine& e) {
        const auto& neurons = e.spec().neurons;
        auto k = std::partition_point(by_index_.begin(), by_index_.end(), [&](std::size_t slot) { return neurons[slot].index < from; });
        for (std::size_t held = 0; k != by_index_.end() && (piece.states.empty() || held < bytes); ++k) {
            auto s = e.capture(*k);
            piece.states.push_back({s.index, s.output, std::move(s.variables), std::move(s.history), std::move(s.traces), std::move(s.synapses),
                                    std::move(s.growth)});
            held += encoded_size(piece.states.back());
        }
        piece.next = k == by_index_.end() ? state_piece::done : neurons[*k].index;
    });
    return piece;
}

nlohmann::json node_simulation::weights(std::uint64_t from, std::uint64_t limit) const {
    nlohmann::json out{{"total", 0}, {"rows", nlohmann::json::array()}};
    runner().inspect_paused([&](const sim::engine& e) {
        out["total"] = e.plastic_synapse_count();
        for (const auto& w : e.plastic_weights(from, limit)) out["rows"].push_back({w.element, w.source, w.target, w.weight});
    });
    return out;
}

nlohmann::json node_simulation::grown(std::uint64_t from, std::uint64_t limit) const {
    nlohmann::json out{{"total", 0}, {"rows", nlohmann::json::array()}};
    runner().inspect_paused([&](const sim::engine& e) {
        out["total"] = e.grown_synapse_count();
        for (const auto& g : e.grown_synapses(from, limit)) out["rows"].push_back({g.source, g.target, g.pairing});
    });
    return out;
}

nlohmann::json node_simulation::weight_bins(const nlohmann::json& request) const {
    auto wanted = parse_weight_bins_request(request);
    runner().inspect_paused([&](const sim::engine& e) { sim::bin_plastic_weights(e, wanted.elements, wanted.histograms); });
    return weight_bins_reply(wanted.histograms);
}

void node_simulation::set_parameters(const std::vector<model::neuron_params>& params, const model::generators& generators,
                                     const model::network* synapses, const std::vector<std::size_t>& reweighted) {
    runner().modify_paused([&](sim::engine& e) {
        if (synapses) e.set_synapses(*synapses, reweighted);
        e.set_parameters(params, generators);
    });
}

void node_simulation::restore(const std::vector<protocol::indexed_state>& states, sim::tick_t next) {
    runner().inspect_paused([](const sim::engine&) {});
    runner().stop();
    thread_.join();
    std::vector<sim::neuron_state> converted;
    converted.reserve(states.size());
    for (const auto& s : states) converted.push_back({s.index, s.output, s.variables, s.history, s.traces, s.synapses, s.growth});
    try {
        engine_.restore(converted, next);
    } catch (...) {
        start_runner();
        throw;
    }
    start_runner();
}

protocol::clock_reply node_simulation::clock(const protocol::clock_request& request) {
    sim::tick_t horizon = 0;
    switch (request.what) {
    case protocol::clock_request::kind::grant:
        runner().grant(request.grant);
        horizon = runner().granted();
        break;
    case protocol::clock_request::kind::hold:
        horizon = runner().hold();
        flush_reports();
        break;
    case protocol::clock_request::kind::ask: horizon = runner().granted(); break;
    }
    return {horizon, runner().completed()};
}

json node_simulation::waiting() const {
    const auto w = runner().waiting();
    if (!w) return nullptr;
    json peers = json::array();
    for (auto p : w->peers) peers.push_back(peer_ids_.at(p));
    return {{"tick", w->packets_of}, {"ms", w->waited_ms}, {"peers", peers}};
}

void node_simulation::add_inputs(const json& inputs) {
    for (const auto& row : inputs)
        runner().add_input(row.at(0).get<sim::global_index>(), row.at(1).get<sim::tick_t>(), row.at(2).get<float>(),
                           row.size() > 3 ? row.at(3).get<std::int64_t>() : sim::engine::all_lanes);
}

}  // namespace dnnc::node_server
