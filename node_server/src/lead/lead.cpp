#include "lead/lead.hpp"
#include "lead/lead_state.hpp"

#include "dnnc/node_server/log.hpp"
#include "dnnc/protocol/xml.hpp"
#include "lead/cluster_status.hpp"
#include "lead/network_update.hpp"
#include "node_messages.hpp"
#include "state_stream.hpp"
#include "lead/uploads.hpp"
#include "weight_bins.hpp"

#include <cstring>
#include <optional>
#include <set>

namespace dnnc::node_server {

using json = nlohmann::json;
using protocol::frame;
using protocol::message_type;

lead::lead(const node_options& options, const server& srv, peer_client& calls, task_pool& tasks, worker& own)
    : options_(options), calls_(calls), tasks_(tasks), own_(own), probes_(options, srv, calls, own),
      changes_(options, calls, probes_, *this) {}

lead::~lead() { shutdown(); }

std::vector<message_type> lead::handles() const {
    return {message_type::submit, message_type::tick_report, message_type::control, message_type::output,
            message_type::spikes, message_type::snapshot, message_type::weights, message_type::weight_histograms,
            message_type::update, message_type::upload};
}

void lead::handle(const frame& request, responder respond) {
    // Answered off the server's threads: the lead's requests wait for the nodes, and while a
    // change replaces the run, clients wait for the new one (current_run).
    const auto answer = [&](message_type reply_type, std::function<std::string(const std::string& payload)> work) {
        tasks_.run([payload = request.payload, respond, reply_type, work = std::move(work)] {
            respond_with(respond, [&] { return reply_of(reply_type, work(payload)); });
        });
    };
    switch (request.type) {
    case message_type::submit: {
        const bool replace = request.flags & protocol::replace_flag;
        answer(message_type::submit_reply, [this, replace](const std::string& p) { return submit(p, replace).dump(); });
        return;
    }
    case message_type::tick_report: report(protocol::decode_tick_report(parse_payload(request.payload))); return;
    case message_type::control:
        answer(message_type::control_reply,
               [this](const std::string& p) { return control(protocol::decode_control_request(parse_payload(p))).dump(); });
        return;
    case message_type::output:
        answer(message_type::output_reply, [this](const std::string& p) { return current_run()->output(parse_payload(p)).dump(); });
        return;
    case message_type::spikes:
        answer(message_type::spikes_reply, [this](const std::string& p) { return current_run()->spikes(parse_payload(p)).dump(); });
        return;
    case message_type::snapshot:
        // Empty: the whole snapshot in one frame; {"from", "bytes"}: a piece (lead_run::snapshot_piece_at).
        answer(message_type::snapshot_reply, [this](const std::string& p) {
            if (p.empty()) return snapshot();
            const json asked = parse_payload(p);
            const auto piece = snapshot_piece_at(asked.at("from").get<std::uint64_t>(), asked.at("bytes").get<std::size_t>());
            std::string reply(16, '\0');
            std::memcpy(reply.data(), &piece.total, 8);
            std::memcpy(reply.data() + 8, &piece.tick, 8);
            return reply + piece.bytes;
        });
        return;
    case message_type::weights:
        answer(message_type::weights_reply, [this](const std::string& p) { return weights(parse_payload(p)).dump(); });
        return;
    case message_type::upload:
        answer(message_type::upload_reply, [this](const std::string& p) {
            receive_upload(options_.state_dir, p);
            return std::string();
        });
        return;
    case message_type::update: answer(message_type::update_reply, [this](const std::string& p) { return update(p).dump(); }); return;
    case message_type::weight_histograms:
        answer(message_type::weight_histograms_reply, [this](const std::string&) { return weight_histograms().dump(); });
        return;
    default: throw protocol_error("unexpected frame");
    }
}

void lead::stop() {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    ++generation_;
    for (auto& beats : heartbeats_) beats->stop();
}

void lead::shutdown() {
    stop();
    std::shared_ptr<lead_run> run;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        run = std::move(run_);
    }
    run.reset();
    std::list<std::unique_ptr<heartbeat_sender>> beats;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        beats = std::move(heartbeats_);
    }
    beats.clear();  // joined without the lock: a beat's answer takes it
}

void lead::report(const protocol::tick_report& report) {
    std::shared_ptr<lead_run> r;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        r = run_;
    }
    // Runs on the runner's thread, which must never see an exception.
    try {
        if (!r) return;
        r->on_report(report);
        if (auto due = r->take_rebalance_due()) tasks_.run([this, r, times = std::move(*due)] { changes_.rebalance_by_load(r, times); });
    } catch (const std::exception& e) {
        DNNC_LOG(warn, "tick report dropped: " << e.what());
    }
}

void lead::resign() { resign(std::nullopt); }

void lead::resign(std::optional<std::uint64_t> generation) {
    std::shared_ptr<lead_run> old_run;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (generation && *generation != generation_) return;  // superseded by a newer run of its own
        state_.reset();
        old_run = std::move(run_);
        ++generation_;
        for (auto& beats : heartbeats_) beats->stop();
    }
    // Released without the lock: a run's clock thread takes it on its way out.
    old_run.reset();
}

json lead::control(const protocol::control_request& command) {
    // Recovery, growth, re-balancing and membership replace the run itself, so the lead
    // handles them.
    using kind = protocol::control_request::kind;
    switch (command.what) {
    case kind::recover: return changes_.recover();
    case kind::grow: return changes_.grow(command);
    case kind::rebalance: return changes_.rebalance(command);
    case kind::join: return changes_.join(command);
    case kind::drain: return changes_.drain(command);
    case kind::start:
    case kind::resume:
    case kind::step:
    case kind::freeze: {
        // A change under way resumes, in the run it installs, what the clock was doing when
        // it began: the clock's commands wait for it and act on that run, or a freeze sent
        // during a move would be undone by it.
        std::lock_guard<std::mutex> after_change(changes_.one_at_a_time());
        return current_run()->control(command);
    }
    default: return current_run()->control(command);
    }
}

json lead::peek_spikes(const json& request) {
    std::shared_ptr<lead_run> r;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        r = run_;
    }
    if (!r) return json{{"recording", false}, {"spikes", json::array()}, {"completed", -1}, {"groups", json::array()}};
    return r->peek_spikes(request);
}

std::shared_ptr<lead_run> lead::current_run() {
    std::unique_lock<std::mutex> lock(mutex_);
    run_ready_.wait_for(lock, std::chrono::seconds(60), [&] { return !replacing_ || stopping_; });
    if (!run_) throw error("this node is not the lead of a network");
    return run_;
}

std::shared_ptr<lead_run> lead::run_now() {
    std::lock_guard<std::mutex> lock(mutex_);
    return run_;
}

bool lead::has_network() {
    std::lock_guard<std::mutex> lock(mutex_);
    return run_ || replacing_;
}

void lead::read_network(const std::function<void(const lead_state&)>& read) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!state_) throw error("this node is not the lead of a network");
    read(*state_);
}

std::set<std::string> lead::silent_nodes() {
    std::shared_ptr<lead_state> state;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        state = state_;
    }
    if (!state) throw error("this node is not the lead of a network");
    const auto alive = run_links(state).alive;
    const auto subleads = probes_.subleads();
    std::set<std::string> silent;
    for (std::size_t v = 0; v < state->topo.node_count(); ++v)
        if (!alive(v) && subleads.count(state->topo.id(v)) == 0) silent.insert(state->topo.id(v));
    return silent;
}

// The lead's way to reach node v for clock and inputs: itself directly, others by call.
lead_run::links lead::run_links(const std::shared_ptr<lead_state>& state) {
    auto call = [this, state](std::size_t v, message_type type, const json& body) {
        const auto& n = state->plan.doc.clu->nodes[v];
        const auto reply =
            calls_.call({n.host, static_cast<std::uint16_t>(n.port)}, frame{type, 0, 0, body.dump()}, std::chrono::seconds(10));
        return reply.payload.empty() ? json() : json::parse(reply.payload);
    };
    lead_run::links l;
    l.clock = [this, state, call](std::size_t v, protocol::clock_request request) {
        if (v == state->topo.lead()) return own_.simulation()->clock(request);
        // Stamped with the installation: a node installed since by another lead refuses it.
        request.epoch = std::to_string(state->epoch);
        return protocol::decode_clock_reply(call(v, message_type::clock, protocol::encode(request)));
    };
    l.inputs = [this, state, call](std::size_t v, const json& inputs) {
        if (v == state->topo.lead())
            own_.simulation()->add_inputs(inputs);
        else
            call(v, message_type::inputs, inputs);
    };
    l.capture = [this](std::int64_t tick, const std::string& file) { capture_snapshot(tick, file); };
    l.grow_due = [this](std::int64_t tick) { tasks_.run([this, tick] { changes_.grow_scheduled(tick); }); };
    l.waiting = [this, state](std::size_t v) {
        if (v == state->topo.lead()) return own_.simulation()->waiting();
        std::lock_guard<std::mutex> lock(mutex_);
        return state->waiting[v];
    };
    l.replicate = [this, state](const json& header, const std::string& body) {
        if (!state->standby) return;
        try {
            state->replicas->call_while_alive(*state->standby, frame{message_type::replica, 0, 0, encode_replica(header, body)},
                                              options_.silence_limit);
        } catch (const std::exception& e) {
            DNNC_LOG(warn, "replica '" << header.value("kind", "") << "' to standby '" << state->standby_id
                                       << "' failed: " << e.what());
        }
    };
    l.alive = [this, state](std::size_t v) {
        if (v == state->topo.lead()) return true;
        const double timeout_ms =
            state->plan.doc.run ? state->plan.doc.run->heartbeat_timeout_ms : model::run_settings{}.heartbeat_timeout_ms;
        std::lock_guard<std::mutex> lock(mutex_);
        return elapsed_ms(state->last_seen[v]) <= timeout_ms;
    };
    return l;
}

// ---- snapshots ----

std::string lead::snapshot() {
    return current_run()->snapshot();
}

lead_run::snapshot_piece lead::snapshot_piece_at(std::uint64_t from, std::size_t count, std::string buffer) {
    return current_run()->snapshot_piece_at(from, count, std::move(buffer));
}

// A binary snapshot at `tick` into `file`; every node's runner must be paused there. Called
// from a run's ticker thread for checkpoints, so it holds no reference to a run: were the run
// replaced meanwhile, that reference could be the last, ending the run on its own thread.
void lead::capture_snapshot(std::int64_t tick, const std::string& file) {
    std::shared_ptr<lead_state> state;
    model::document doc;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        state = state_;
        if (state) doc = state->plan.doc;  // an update changes it under the lock
    }
    if (!state) throw error("this node is not the lead of a network");
    if (const auto& settings = state->plan.doc.run; settings && settings->batch > 1)
        throw usage_error("this run has batch " + std::to_string(settings->batch) +
                          ": snapshots hold one lane, so batched runs cannot be snapshotted");
    const auto nodes = doc.clu->nodes;  // a copy: the document goes to the writer
    write_snapshot(file, std::move(doc), tick, state->plan.net.neuron_count(), [&](std::size_t v, std::int64_t from) {
        if (v == state->topo.lead()) return own_.simulation()->capture(from, state_piece_bytes);
        const json piece{{"from", from}, {"bytes", state_piece_bytes}};
        const endpoint at{nodes[v].host, static_cast<std::uint16_t>(nodes[v].port)};
        return decode_state_piece(calls_.call_while_alive(at, frame{message_type::capture, 0, 0, piece.dump()}, options_.silence_limit).payload);
    });
}

// The nodes take the parameters first, each checking them against its share; only then does
// the lead's document change. The run is frozen throughout (lead_run::update_parameters).
json lead::update(const std::string& payload) {
    std::shared_ptr<lead_state> state;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        state = state_;
    }
    if (!state) throw error("this node is not the lead of a network");
    model::document doc = protocol::parse_document(payload, "update", file_access());
    if (!doc.net) throw usage_error("an update needs a <network>");
    const auto sent = update_bodies_of(state->plan, state->topo, state->times, state->windows, state->epoch, state->history, *doc.net);
    auto r = current_run();
    r->update_parameters([&] {
        const auto& nodes = state->plan.doc.clu->nodes;
        for (std::size_t v = 0; v < nodes.size(); ++v) {
            const auto& own_body = sent.for_node(nodes[v].id);
            if (v == state->topo.lead()) {
                own_.set_parameters(own_body);
                continue;
            }
            try {
                calls_.call_while_alive({nodes[v].host, static_cast<std::uint16_t>(nodes[v].port)},
                                        frame{message_type::parameters, 0, 0, own_body}, options_.silence_limit);
            } catch (const std::exception& e) {
                throw error("node '" + nodes[v].id + "' did not take the update: " + e.what());
            }
        }
        std::lock_guard<std::mutex> lock(mutex_);
        take_update(state->plan, std::move(*doc.net), sent.resynapsed);
    }, sent.redelayed ? std::int64_t{state->history} : 0);
    DNNC_LOG(info, "network '" << state->plan.net.name << "' updated before tick " << r->next_tick());
    return {{"tick", r->next_tick()}, {"nodes", state->plan.doc.clu->nodes.size()}};
}

json lead::weights(const json& request) {
    std::shared_ptr<lead_state> state;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        state = state_;
    }
    if (!state) throw error("this node is not the lead of a network");
    const auto& nodes = state->plan.doc.clu->nodes;
    return named_weights_page(state->plan, state->plastic, request, [&](std::size_t node, const json& page) {
        const endpoint at{nodes[node].host, static_cast<std::uint16_t>(nodes[node].port)};
        return parse_payload(calls_.call_while_alive(at, frame{message_type::weights_page, 0, 0, page.dump()}, options_.silence_limit).payload);
    });
}

json lead::weight_histograms() {
    std::shared_ptr<lead_state> state;
    std::shared_ptr<lead_run> r;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        state = state_;
        r = run_;
    }
    if (!state || !r) throw error("this node is not the lead of a network");
    if (!r->paused()) throw usage_error("the network is running; freeze it first");
    const auto tick = r->next_tick() - 1;
    // Every node bins its own plastic synapses (a weight-bins frame); the lead adds the bins.
    json histograms = weight_histograms_of(state->plastic, tick, [&](weight_groups& groups) {
        const json request = weight_bins_request(groups);
        for (const auto& n : state->plan.doc.clu->nodes) {
            const endpoint at{n.host, static_cast<std::uint16_t>(n.port)};
            add_weight_bins_reply(parse_payload(calls_.call_while_alive(at, frame{message_type::weight_bins, 0, 0, request.dump()},
                                                                        options_.silence_limit).payload),
                                  groups.histograms);
        }
    });
    std::lock_guard<std::mutex> lock(mutex_);
    state->histograms = histograms;
    state->binned_tick = tick;
    return histograms;
}

// ---- heartbeats ----

void lead::start_heartbeats(const std::shared_ptr<lead_state>& state) {
    std::lock_guard<std::mutex> guard(mutex_);
    state_ = state;
    const auto generation = ++generation_;
    for (auto& beats : heartbeats_) beats->stop();
    const auto& nodes = state->plan.doc.clu->nodes;
    const std::string self = state->topo.id(state->topo.lead());
    // A beat names this lead and its installation (a standby counts it as the lead alive)
    // and the lead's page; a node's reply names the installation it serves.
    json ours{{"lead", self}, {"epoch", std::to_string(state->epoch)}};
    if (!page_.empty()) ours["page"] = reachable_page(page_, nodes[state->topo.lead()].host);
    heartbeat_sender::handlers on;
    on.answered = [this, state, generation, self](std::size_t v, const json& beat) {
        const auto& n = state->plan.doc.clu->nodes[v];
        const auto serves = beat.value("epoch", std::string());
        const auto follows = beat.value("lead", std::string());
        if (!serves.empty() && serves != std::to_string(state->epoch) && follows != self) {
            // Another lead installed its network since (a standby that took over while this
            // lead was cut off): this one steps down.
            DNNC_LOG(error, "node '" << n.id << "' now serves lead '" << follows << "': lead '" << self << "' stops its run of network '"
                                     << state->plan.net.name << "'");
            tasks_.run([this, generation] { resign(generation); });
            return false;
        }
        std::lock_guard<std::mutex> lock(mutex_);
        state->last_seen[v] = clock_type::now();
        state->last_error[v].clear();
        state->waiting[v] = beat.value("waiting", json());
        state->pages[v] = reachable_page(beat.value("page", std::string()), n.host);
        return true;
    };
    on.failed = [this, state](std::size_t v, const std::string& why) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (state->last_error[v].empty()) DNNC_LOG(warn, "heartbeat to node '" << state->plan.doc.clu->nodes[v].id << "' failed: " << why);
        state->last_error[v] = why;
    };
    const double timeout_ms =
        state->plan.doc.run ? state->plan.doc.run->heartbeat_timeout_ms : model::run_settings{}.heartbeat_timeout_ms;
    heartbeats_.push_back(std::make_unique<heartbeat_sender>(options_, *state->plan.doc.clu, state->topo.lead(), ours.dump(), timeout_ms, on));
    if (stopping_) heartbeats_.back()->stop();
}

// ---- status ----

void lead::describe(protocol::node_status& s) {
    std::shared_ptr<lead_run> r;
    bool growing = false;  // the network has structural plasticity
    {
        std::lock_guard<std::mutex> lock(mutex_);
        r = run_;
        growing = state_ && state_->plan.net.structure.has_value();
    }
    // Asked without the lock: the run takes it to see which nodes are alive.
    const auto progress = r ? std::optional<protocol::run_progress>(r->progress()) : std::nullopt;
    // The newest structural updates, for the live page's chart.
    protocol::control_request newest(protocol::control_request::kind::structure);
    newest.recent = 400;
    const json structure = r && growing ? r->control(newest) : json();
    std::lock_guard<std::mutex> lock(mutex_);
    if (progress) {
        s.state = progress->state;
        s.tick = progress->completed;
        s.granted = progress->granted;
        s.output_rows_first = progress->output_rows_first;
        s.output_rows_dropped = progress->output_rows_dropped;
        s.error = progress->error;
        s.ticks_per_second = progress->ticks_per_second.value_or(0.0);
        s.signals_sent = progress->signals_sent;
        s.sync = progress->sync;
        s.signals_dropped = progress->signals_dropped;
        s.packets_missing = progress->packets_missing;
        s.last_checkpoint = progress->last_checkpoint;
    }
    s.moves = changes_.moves();
    if (!state_) return;
    s.role = "lead";
    auto& c = s.cluster.emplace(cluster_status_of(*state_, probes_.subleads(), page_, progress));
    c.structure = structure;
    // The weights' histograms of the last freeze. Nodes read weights only while paused, so the
    // first status that finds the network frozen (or not started) at a tick not binned yet
    // has them made in the background, once per tick; the statuses after it show them.
    c.weight_histograms = state_->histograms;
    const bool paused = progress && (progress->state == "frozen" || progress->state == "idle");
    if (paused && !state_->plastic.empty() && !state_->binning && state_->binned_tick != progress->completed) {
        state_->binning = true;
        state_->binned_tick = progress->completed;
        tasks_.run([this, state = state_] {
            try {
                weight_histograms();
            } catch (const std::exception& e) {
                DNNC_LOG(info, "weight histograms not made: " << e.what());
            }
            std::lock_guard<std::mutex> held(mutex_);
            state->binning = false;
        });
    }
}

}  // namespace dnnc::node_server
