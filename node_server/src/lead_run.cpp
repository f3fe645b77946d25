#include "lead_run.hpp"

#include "dnnc/protocol/error.hpp"

#include <algorithm>
#include <set>

namespace dnnc::node_server {

using json = nlohmann::json;
using clock_type = std::chrono::steady_clock;

namespace {
constexpr std::int64_t forever = std::int64_t{1} << 60;
}

const char* lead_run::name(state s) {
    switch (s) {
    case state::idle: return "idle";
    case state::running: return "running";
    case state::stepping: return "stepping";
    case state::frozen: return "frozen";
    case state::failed: return "failed";
    }
    return "?";
}

lead_run::lead_run(const lead_plan& plan, const topology& topo, links l, std::int64_t first_tick)
    : plan_(plan), topo_(topo), links_(std::move(l)), run_(plan.doc.run ? *plan.doc.run : protocol::run_settings{}),
      first_tick_(first_tick) {
    if (first_tick > 0) state_ = state::frozen;
    const auto& net = plan.net;
    // Columns: the output neurons in document order; each node reports its output neurons
    // in ascending index order, and one neuron may fill several columns.
    std::map<protocol::neuron_index, std::vector<std::size_t>> columns_of_neuron;
    for (const auto& o : net.outputs)
        for (auto i : o.neurons) {
            columns_of_neuron[i].push_back(columns_.size());
            columns_.push_back(net.neuron_name(i));
        }
    columns_of_.resize(topo.node_count());
    for (const auto& [i, cols] : columns_of_neuron) columns_of_[plan.node_of_neuron[i]].push_back(cols);
    nodes_.resize(topo.node_count());
}

lead_run::~lead_run() { stop_ticker(); }

void lead_run::on_report(const json& report) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto v = topo_.index_of(report.at("node").get<std::string>());
    const auto tick = report.at("tick").get<std::int64_t>();
    const auto& values = report.at("values");
    if (values.size() != columns_of_[v].size()) throw protocol_error("tick report with the wrong number of values");
    auto& row = partial_[tick];
    if (row.values.empty()) {
        row.values.assign(columns_.size(), 0.0f);
        row.reported.assign(topo_.node_count(), false);
    }
    for (std::size_t k = 0; k < values.size(); ++k)
        for (auto c : columns_of_[v][k]) row.values[c] = values[k].get<float>();
    row.reported[v] = true;
    auto& p = nodes_[v];
    p.completed = std::max(p.completed, tick);
    p.sent = report.at("sent");
    p.dropped = report.at("dropped");
    p.missing = report.at("missing");
    complete_rows();
}

void lead_run::complete_rows() {
    // A row is complete when every node has reported it; in window mode a dead node is not
    // waited for (its outputs read 0).
    const bool window = run_.sync == protocol::sync_mode::window;
    while (true) {
        auto it = partial_.find(completed() + 1);
        if (it == partial_.end()) break;
        bool complete = true;
        for (std::size_t v = 0; v < topo_.node_count(); ++v)
            if (!it->second.reported[v] && !(window && !links_.alive(v))) complete = false;
        if (!complete) break;
        rows_.push_back(std::move(it->second.values));
        partial_.erase(it);
    }
    if (state_ == state::stepping && completed() >= target_) state_ = state::frozen;
    changed_.notify_all();
}

std::vector<json> lead_run::clock_all(const json& request) {
    // A window run goes on without nodes that stopped answering; a lockstep run cannot.
    std::vector<json> replies;
    for (std::size_t v = 0; v < topo_.node_count(); ++v) {
        try {
            replies.push_back(links_.clock(v, request));
        } catch (const std::exception& e) {
            if (run_.sync == protocol::sync_mode::lockstep)
                throw error("node '" + topo_.id(v) + "' did not answer the clock: " + e.what());
        }
    }
    return replies;
}

void lead_run::grant_all(std::int64_t last) { clock_all(json{{"grant", last}}); }

void lead_run::stop_ticker() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        ticker_stop_ = true;
    }
    changed_.notify_all();
    if (ticker_.joinable()) ticker_.join();
    std::lock_guard<std::mutex> lock(mutex_);
    ticker_stop_ = false;
}

void lead_run::start_running() {
    started_ = clock_type::now();
    ticks_at_start_ = completed();
    if (run_.tick_period_ms <= 0) {
        grant_all(forever);
        return;
    }
    // A fixed tick period: one more tick granted every period.
    ticker_ = std::thread([this] {
        const auto period = std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double, std::milli>(run_.tick_period_ms));
        auto next = clock_type::now();
        std::int64_t granted;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            granted = completed();
        }
        while (true) {
            {
                std::unique_lock<std::mutex> lock(mutex_);
                if (changed_.wait_until(lock, next, [&] { return ticker_stop_; })) return;
            }
            next += period;
            try {
                grant_all(++granted);
            } catch (const std::exception&) {
                // A node that does not answer the clock shows up in progress and status.
            }
        }
    });
}

void lead_run::check_nodes() {
    if (run_.sync != protocol::sync_mode::lockstep || state_ == state::failed) return;
    for (std::size_t v = 0; v < topo_.node_count(); ++v)
        if (!links_.alive(v)) {
            state_ = state::failed;
            error_ = "node '" + topo_.id(v) + "' stopped answering; a lockstep run cannot go on without it (last complete tick " +
                     std::to_string(completed()) + ")";
            return;
        }
}

json lead_run::freeze() {
    stop_ticker();
    std::int64_t target = -1;
    for (const auto& reply : clock_all(json{{"hold", true}})) target = std::max(target, reply.at("horizon").get<std::int64_t>());
    {
        std::lock_guard<std::mutex> lock(mutex_);
        target = std::max(target, completed());
    }
    grant_all(target);
    std::unique_lock<std::mutex> lock(mutex_);
    const auto deadline = clock_type::now() + std::chrono::seconds(30);
    while (completed() < target) {
        check_nodes();
        if (state_ == state::failed) throw error(error_);
        if (changed_.wait_until(lock, std::min(deadline, clock_type::now() + std::chrono::milliseconds(100))) ==
                std::cv_status::timeout &&
            clock_type::now() >= deadline)
            throw error("the nodes did not reach tick " + std::to_string(target) + " to freeze");
    }
    state_ = state::frozen;
    return {{"state", name(state_)}, {"tick", completed()}};
}

json lead_run::input(const json& rows) {
    const auto& net = plan_.net;
    std::map<std::size_t, json> per_node;
    std::int64_t first_open;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        first_open = state_ == state::idle || state_ == state::frozen ? completed() + 1 : completed() + 2;
    }
    std::size_t count = 0;
    for (const auto& row : rows) {
        const auto tick = row.at(0).get<std::int64_t>();
        const auto target = row.at(1).get<std::string>();
        const auto value = row.at(2).get<float>();
        if (tick < first_open)
            throw usage_error("input for tick " + std::to_string(tick) + " (" + target + "): that tick has already run");
        std::vector<protocol::neuron_index> neurons;
        const auto port = std::find_if(net.inputs.begin(), net.inputs.end(), [&](const auto& p) { return p.id == target; });
        if (port != net.inputs.end()) {
            neurons = port->neurons;
        } else if (auto i = net.find(target)) {
            neurons.push_back(*i);
        } else {
            throw usage_error("input target '" + target + "' is neither an input id nor a neuron");
        }
        for (auto i : neurons) {
            auto& list = per_node[plan_.node_of_neuron[i]];
            list.push_back(json::array({i, tick, value}));
            ++count;
        }
    }
    for (auto& [v, list] : per_node) links_.inputs(v, list);
    return {{"values", count}};
}

json lead_run::progress() {
    std::lock_guard<std::mutex> lock(mutex_);
    check_nodes();
    json nodes = json::array();
    std::int64_t sent = 0, dropped = 0, missing = 0;
    for (std::size_t v = 0; v < topo_.node_count(); ++v) {
        const auto& p = nodes_[v];
        nodes.push_back({{"id", topo_.id(v)}, {"completed", p.completed}, {"sent", p.sent}, {"dropped", p.dropped},
                         {"missing", p.missing}});
        sent += p.sent;
        dropped += p.dropped;
        missing += p.missing;
    }
    const double seconds = std::chrono::duration<double>(clock_type::now() - started_).count();
    json reply{{"state", name(state_)}, {"completed", completed()}, {"target", target_}, {"nodes", nodes},
               {"signals_sent", sent}, {"signals_dropped", dropped}, {"packets_missing", missing}, {"sync", protocol::to_string(run_.sync)}};
    if (state_ == state::running && seconds > 0) reply["ticks_per_second"] = static_cast<double>(completed() - ticks_at_start_) / seconds;
    if (!error_.empty()) reply["error"] = error_;
    return reply;
}

json lead_run::control(const json& request) {
    const auto command = request.at("command").get<std::string>();
    if (command == "progress") return progress();
    if (command == "input") return input(request.at("rows"));
    {
        std::lock_guard<std::mutex> lock(mutex_);
        check_nodes();
        if (state_ == state::failed) throw error(error_);
    }
    if (command == "start" || command == "resume") {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (state_ == state::running || state_ == state::stepping)
                throw usage_error("the network is already running");
            state_ = state::running;
        }
        start_running();
        return progress();
    }
    if (command == "step") {
        const auto ticks = request.at("ticks").get<std::int64_t>();
        if (ticks < 1) throw usage_error("step needs a number of ticks >= 1");
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (state_ == state::running || state_ == state::stepping)
                throw usage_error("the network is running; freeze it before stepping");
            target_ = completed() + ticks;
            state_ = state::stepping;
            started_ = clock_type::now();
            ticks_at_start_ = completed();
        }
        grant_all(target_);
        return progress();
    }
    if (command == "freeze") return freeze();
    throw usage_error("unknown command '" + command + "'");
}

bool lead_run::paused() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return state_ == state::idle || state_ == state::frozen;
}

std::int64_t lead_run::next_tick() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return completed() + 1;
}

json lead_run::output(const json& request) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto from = std::max(first_tick_, request.value("from", std::int64_t{0}));
    json rows = json::array();
    for (auto t = from; t <= completed() && rows.size() < 100000; ++t) {
        json row = json::array({t});
        for (float v : rows_[static_cast<std::size_t>(t - first_tick_)]) row.push_back(v);
        rows.push_back(std::move(row));
    }
    return {{"columns", columns_}, {"rows", rows}, {"completed", completed()}, {"state", name(state_)}};
}

}  // namespace dnnc::node_server
