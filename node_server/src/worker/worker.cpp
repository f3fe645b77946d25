#include "worker/worker.hpp"

#include "dnnc/node_server/log.hpp"
#include "dnnc/plan/plan.hpp"
#include "dnnc/protocol/update.hpp"
#include "dnnc/protocol/xml.hpp"
#include "node_messages.hpp"
#include "net/relays.hpp"
#include "state_stream.hpp"

#include <algorithm>
#include <fstream>
#include <limits>
#include <future>

namespace dnnc::node_server {

using json = nlohmann::json;
using protocol::frame;
using protocol::message_type;

class worker::doing {
public:
    doing(worker& w, std::string what) : worker_(w) {
        std::lock_guard<std::mutex> lock(worker_.mutex_);
        task_ = worker_.work_.insert(worker_.work_.end(), {std::move(what), std::chrono::steady_clock::now()});
    }
    ~doing() {
        std::lock_guard<std::mutex> lock(worker_.mutex_);
        worker_.work_.erase(task_);
    }
    doing(const doing&) = delete;
    doing& operator=(const doing&) = delete;

private:
    worker& worker_;
    std::list<task_under_way>::iterator task_;
};

json worker::work() const {
    json tasks = json::array();
    for (const auto& t : work_)
        tasks.push_back({{"task", t.what}, {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - t.since).count()}});
    return tasks;
}

worker::worker(const node_options& options, peer_client& calls, signal_inbox& signals_in, task_pool& tasks, hooks h)
    : options_(options), calls_(calls), tasks_(tasks), hooks_(std::move(h)), signals_in_(signals_in),
      reports_out_(options.server.secret, {}, options.server.tls) {}

worker::~worker() { shutdown(); }

std::vector<message_type> worker::handles() const {
    // Signals come only over signal links, which leave the server (signal_inbox.hpp).
    return {message_type::configure, message_type::probe,   message_type::clock,
            message_type::inputs,    message_type::capture, message_type::restore_state, message_type::weights_page,
            message_type::weight_bins, message_type::parameters, message_type::release};
}

void worker::handle(const frame& request, responder respond) {
    switch (request.type) {
    case message_type::configure: {
        const auto flags = static_cast<std::uint16_t>(request.flags &
                                                      (protocol::replace_flag | protocol::restoring_flag | protocol::prepare_flag));
        tasks_.run([this, payload = request.payload, flags, respond] {
            respond_with(respond, [&] {
                const auto config = protocol::parse_node_config(payload, "node config");
                return reply_of(message_type::configure_reply, configure_subtree(config, flags).dump());
            });
        });
        return;
    }
    case message_type::probe: {
        auto p = read_probe(request.payload);  // a malformed probe is refused here, on the server's thread
        // Forwarding waits for the rest of the route: off the server's thread.
        tasks_.run([this, p = std::move(p), respond] {
            respond_with(respond, [&] {
                forward_probe(p);
                return reply_of(message_type::probe_reply);
            });
        });
        return;
    }
    case message_type::clock: {
        const json command = parse_payload(request.payload);
        check_installation(command);
        respond(reply_of(message_type::clock_reply, protocol::encode(simulation()->clock(protocol::decode_clock_request(command))).dump()));
        return;
    }
    case message_type::inputs:
        simulation()->add_inputs(parse_payload(request.payload));
        respond(reply_of(message_type::inputs_reply));
        return;
    case message_type::capture:
        tasks_.run([this, payload = request.payload, respond] {
            respond_with(respond, [&] {
                const json piece = parse_payload(payload);
                const auto bytes = std::min(piece.at("bytes").get<std::size_t>(), max_state_piece_bytes);
                return reply_of(message_type::capture_reply, encode_state_piece(simulation()->capture(piece.at("from").get<std::int64_t>(), bytes)));
            });
        });
        return;
    case message_type::weights_page: {
        const json page = parse_payload(request.payload);
        const auto from = page.at("from").get<std::uint64_t>(), limit = page.at("limit").get<std::uint64_t>();
        const auto page_limit = std::min(limit, max_weights_page);
        respond(reply_of(message_type::weights_page_reply, (page.value("grown", false) ? simulation()->grown(from, page_limit)
                                                                                        : simulation()->weights(from, page_limit))
                                                               .dump()));
        return;
    }
    case message_type::weight_bins:
        // A pass over every plastic synapse of the node: off the server's thread.
        tasks_.run([this, payload = request.payload, respond] {
            respond_with(respond, [&] { return reply_of(message_type::weight_bins_reply, simulation()->weight_bins(parse_payload(payload)).dump()); });
        });
        return;
    case message_type::parameters:
        tasks_.run([this, payload = request.payload, respond] {
            respond_with(respond, [&] {
                set_parameters(payload);
                return reply_of(message_type::parameters_reply);
            });
        });
        return;
    case message_type::release: {
        const json command = parse_payload(request.payload);
        check_installation(command);
        if (!command.is_object() || !command.contains("epoch") || !command["epoch"].is_string())
            throw protocol_error("a release names the installation's epoch");
        // Stopping the run waits for its threads: off the server's thread.
        tasks_.run([this, epoch = command["epoch"].get<std::string>(), respond] {
            respond_with(respond, [&] {
                release(epoch);
                return reply_of(message_type::release_reply);
            });
        });
        return;
    }
    case message_type::restore_state:
        tasks_.run([this, payload = request.payload, respond] {
            respond_with(respond, [&] {
                restore_state(payload);
                return reply_of(message_type::restore_reply);
            });
        });
        return;
    default: throw protocol_error("unexpected frame");
    }
}

void worker::set_parameters(const std::string& payload) {
    const auto update = protocol::parse_document(payload, "parameters");
    if (!update.net) throw protocol_error("parameters without a network");
    model::network share;
    std::vector<model::local_neuron> neurons;
    std::uint16_t history = 1;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!config_ || !config_->share) throw error("this node serves no network");
        share = *config_->share;
        neurons = config_->neurons;
        history = static_cast<std::uint16_t>(std::clamp<std::int32_t>(config_->history, 1, 65535));
    }
    auto updated = protocol::with_parameters(share, *update.net, history);
    const auto net = model::expand(updated, "parameters");
    // Of the spike sources' spikes, those of this node's neurons (config neurons ascend).
    std::vector<std::int64_t> mine;
    for (const auto& n : neurons) mine.push_back(n.index);
    for (auto& p : updated.populations) {
        const std::int64_t first = net.groups[net.group_index.at(p.id)].first;
        p.spikes.erase(std::remove_if(p.spikes.begin(), p.spikes.end(),
                                      [&](const model::spike_time& s) { return !std::binary_search(mine.begin(), mine.end(), first + s.index); }),
                       p.spikes.end());
    }
    std::vector<model::neuron_params> params;
    for (auto& n : neurons) {
        if (n.index < 0 || static_cast<std::size_t>(n.index) >= net.neuron_count()) throw protocol_error("parameters for another network");
        n.params = net.params_of(static_cast<model::neuron_index>(n.index));
        params.push_back(n.params);
    }
    const auto reweighted = protocol::reweighted_elements(share, updated);
    const bool resynapsed = !reweighted.empty() || protocol::changes_delays(share, updated) ||
                            protocol::changes_synapse_models(share, updated);
    simulation()->set_parameters(params, model::resolve_generators(updated), resynapsed ? &updated : nullptr, reweighted);
    std::lock_guard<std::mutex> lock(mutex_);
    config_->share = std::move(updated);
    config_->neurons = std::move(neurons);
}

json worker::configure_subtree(const model::node_config& subtree, std::uint16_t flags) {
    const bool replace = flags & protocol::replace_flag;
    const bool preparing = flags & protocol::prepare_flag;
    model::node_config own = subtree;
    own.children.clear();
    if (!own.lead_via.empty()) {
        try {
            parse_endpoint(own.lead_via);  // refused before anything changes
        } catch (const usage_error& e) {
            throw usage_error("node '" + own.node + "': lead-via: " + e.what());
        }
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (config_ && !replace && !preparing)
            throw error("node '" + own.node + "' already serves network '" + config_->network +
                        "'; submit with --replace to replace it");
    }
    const doing installing(*this, std::string(preparing ? "preparing" : "installing") + " network '" + own.network +
                                      "' on node '" + own.node + "'" + (subtree.children.empty() ? "" : " and its subtree"));
    // Each subtree travels in one frame: refuse before anything changes when one is too big.
    std::vector<std::string> payloads;
    for (const auto& child : subtree.children) {
        payloads.push_back(protocol::serialize(child));
        if (payloads.back().size() > options_.server.max_payload)
            throw error("the configs of node '" + child.node + "' and its subtree take " +
                        std::to_string(payloads.back().size() >> 20) + " MiB, above the frame limit of " +
                        std::to_string(options_.server.max_payload >> 20) +
                        " MiB: this network has too many synapses per node to be distributed");
    }
    // The children's subtrees travel while this node installs its own share.
    std::vector<std::future<json>> children;
    for (std::size_t k = 0; k < subtree.children.size(); ++k)
        children.push_back(std::async(std::launch::async, [this, &child = subtree.children[k], &payload = payloads[k], flags] {
            const endpoint to{child.host, static_cast<std::uint16_t>(child.port)};
            frame request{message_type::configure, flags, 0, payload};
            try {
                return json::parse(calls_.call_while_alive(to, std::move(request), options_.silence_limit).payload);
            } catch (const remote_error& e) {
                throw remote_error(e.what());
            } catch (const std::exception& e) {
                throw remote_error("node '" + child.node + "' (" + to.text() + "): " + e.what());
            }
        }));
    std::exception_ptr own_failure;
    auto source = engine_source::built;
    try {
        if (preparing)
            prepare(own);
        else
            source = install(own, flags & protocol::restoring_flag);
    } catch (...) {
        own_failure = std::current_exception();
    }
    std::string hash;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        hash = preparing ? plan::config_hash(own) : config_hash_;
    }
    json acks = json::array({{{"node", own.node}, {"hash", hash}, {"kept", source == engine_source::kept},
                              {"prepared", source == engine_source::prepared}}});
    std::string failure;
    for (auto& f : children) {
        try {
            for (auto& a : f.get()) acks.push_back(a);
        } catch (const std::exception& e) {
            if (failure.empty()) failure = e.what();
        }
    }
    if (own_failure) std::rethrow_exception(own_failure);
    DNNC_LOG(info, "node '" << own.node << "' " << (preparing ? "prepared" : "installed") << " its share of network '"
                            << own.network << "': " << own.neurons.size() << " neurons"
                            << (source == engine_source::kept       ? ", its engine kept"
                                : source == engine_source::prepared ? ", its engine built ahead"
                                                                    : ""));
    if (!failure.empty()) throw remote_error(failure);
    return acks;
}

void worker::release(const std::string& epoch) {
    std::shared_ptr<node_simulation> old;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!config_ || std::to_string(config_->epoch) != epoch) return;
        DNNC_LOG(info, "node '" << config_->node << "' released from network '" << config_->network << "' by lead '"
                                << config_->lead << "'");
        old = std::move(simulation_);
        config_.reset();
        config_hash_.clear();
        restoring_.clear();
        prepared_.reset();
    }
    hooks_.forget_replica();
    // Released without the lock: a run's clock thread takes it on its way out.
    old.reset();
}

void worker::prepare(const model::node_config& own) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        prepared_.reset();  // another's, never taken
        if (config_ && same_neurons_and_synapses(*config_, own)) return;  // it will keep its own
    }
    auto engine = sim::make_node_engine(own, options_.device);
    std::lock_guard<std::mutex> lock(mutex_);
    prepared_.emplace(prepared_engine{own, std::move(engine)});
}

// Replaces what this node runs: the old simulation stops before the new one starts.
worker::engine_source worker::install(const model::node_config& own, bool restoring) {
    std::shared_ptr<node_simulation> old;
    std::optional<model::node_config> before;
    std::optional<prepared_engine> prepared;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        old = std::move(simulation_);
        before = config_;
        prepared = std::exchange(prepared_, std::nullopt);
    }
    // Released without the lock: a run's clock thread takes it on its way out.
    if (own.lead != own.node) hooks_.resign_lead();
    hooks_.drop_replica(own.lead);
    // The old engine when only its routes change, else one built ahead for this config (it
    // never ran: as a fresh one), else none (built from the share).
    std::optional<sim::engine> kept;
    auto source = engine_source::built;
    if (restoring && old && before && same_neurons_and_synapses(*before, own)) {
        kept = old->release_engine();
        source = engine_source::kept;
    } else if (prepared && same_neurons_and_synapses(prepared->config, own)) {
        kept = std::move(prepared->engine);
        source = engine_source::prepared;
    }
    prepared.reset();
    old.reset();
    const endpoint lead_at{own.lead_host, static_cast<std::uint16_t>(own.lead_port)};
    const bool is_lead = own.lead == own.node;
    // A node the lead reaches through a sub-lead reaches the lead back the same way; a
    // connection made before may have gone another way (a sub-lead since dead).
    if (!own.lead_via.empty())
        relays::route(lead_at, parse_endpoint(own.lead_via), options_.server.secret, options_.server.tls);
    else if (!is_lead)
        relays::unroute(lead_at);
    reports_out_.forget(lead_at);
    auto reporter = [this, lead_at, is_lead](protocol::tick_report report) {
        if (is_lead) return hooks_.report_to_own_lead(report);
        reports_out_.send(lead_at, frame{message_type::tick_report, 0, 0, protocol::encode(report).dump()});
    };
    auto fresh = std::make_shared<node_simulation>(own, options_.server.secret, options_.server.tls, signals_in_, reporter,
                                                   options_.emulate_delay_ms, options_.device, options_.mpi, std::move(kept));
    if (!fresh->kept_engine()) source = engine_source::built;  // it did not take the new routes
    std::lock_guard<std::mutex> lock(mutex_);
    config_ = own;
    config_hash_ = fresh->config_hash();  // hashed once: a share's lists make it long
    simulation_ = std::move(fresh);
    restoring_.clear();
    return source;
}

std::shared_ptr<node_simulation> worker::simulation() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!simulation_) throw error("this node serves no network");
    return simulation_;
}

void worker::restore_state(const std::string& payload) {
    auto piece = decode_restore_piece(payload);
    std::vector<protocol::indexed_state> states;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!simulation_) throw error("this node serves no network");
        for (auto& s : piece.states) restoring_.push_back(std::move(s));
        if (!piece.last) return;
        states.swap(restoring_);
    }
    const doing restoring(*this, "restoring states at tick " + std::to_string(piece.tick));
    simulation()->restore(states, piece.tick);
}

double worker::extra_delay_to(const std::string& peer) const {
    const auto it = options_.emulate_delay_ms.find(peer);
    return it == options_.emulate_delay_ms.end() ? 0.0 : it->second;
}

// Forwards a probe one hop further, or answers it at the far end; both directions hold back
// the link's emulated delay.
void worker::forward_probe(const probe& p) {
    if (p.hop + 1 < p.route.size()) {
        const auto& next = p.route[p.hop + 1];
        hold_back(next.link_delay_ms + extra_delay_to(next.id));
        calls_.call(next.at, frame{message_type::probe, 0, 0, probe_payload({p.route, p.hop + 1, p.load})}, options_.silence_limit);
    }
    hold_back(p.route[p.hop].link_delay_ms + extra_delay_to(p.route[p.hop - 1].id));
}

std::optional<std::string> worker::network() const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!config_) return std::nullopt;
    return config_->network;
}

namespace {
// What the machine could still give this node: MemAvailable of /proc/meminfo (0: unknown).
std::uint64_t memory_available() {
    std::ifstream in("/proc/meminfo");
    std::string key;
    std::uint64_t kb = 0;
    while (in >> key >> kb) {
        if (key == "MemAvailable:") return kb * 1024;
        in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
    }
    return 0;
}
}  // namespace

void worker::check_installation(const json& command) const {
    if (!command.is_object() || !command.contains("epoch")) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (config_ && command["epoch"] != std::to_string(config_->epoch))
        throw error("node '" + config_->node + "' serves another installation of network '" + config_->network +
                    "' now, under lead '" + config_->lead + "'");
}

json worker::heartbeat() const {
    std::shared_ptr<node_simulation> sim;
    json beat = json::object();
    {
        std::lock_guard<std::mutex> lock(mutex_);
        sim = simulation_;
        if (config_) {
            beat["lead"] = config_->lead;
            beat["epoch"] = std::to_string(config_->epoch);
        }
        if (!work_.empty()) beat["work"] = work();
    }
    if (sim)
        if (auto w = sim->waiting(); !w.is_null()) beat["waiting"] = std::move(w);
    return beat;
}

void worker::describe(protocol::node_status& s) const {
    std::lock_guard<std::mutex> lock(mutex_);
    s.memory = {memory_available(), options_.memory_limit, simulation_ ? simulation_->synapse_bytes() : 0};
    for (const auto& t : work_)
        s.work.push_back({t.what, std::chrono::duration<double>(std::chrono::steady_clock::now() - t.since).count()});
    s.state = config_ ? "idle" : "unconfigured";
    s.role = config_ ? "worker" : "none";
    if (!config_) return;
    // Its own runner's progress (the lead's status, when it is the lead, says the run's).
    if (simulation_) {
        s.tick = simulation_->completed();
        s.state = simulation_->granted_more() ? "computing" : "paused";
    }
    s.node = config_->node;
    s.network = config_->network;
    s.lead = config_->lead;
    s.lead_address = config_->lead_host + ":" + std::to_string(config_->lead_port);
    s.neurons = config_->neurons.size();
    s.config_hash = config_hash_;
    s.epoch = std::to_string(config_->epoch);  // a string: JSON readers may hold doubles only
}

void worker::shutdown() {
    std::shared_ptr<node_simulation> simulation;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        simulation = std::move(simulation_);
    }
    simulation.reset();
}

}  // namespace dnnc::node_server
