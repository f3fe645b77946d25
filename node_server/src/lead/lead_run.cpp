#include "lead/lead_run.hpp"

#include "dnnc/core/error.hpp"

#include "dnnc/protocol/csv.hpp"
#include "lead/input_routes.hpp"
#include "lead/lockstep_breach.hpp"
#include "lead/population_growth.hpp"
#include "lead/standby.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>

namespace dnnc::node_server {

using json = nlohmann::json;
using clock_type = std::chrono::steady_clock;

namespace {
constexpr std::int64_t forever = std::int64_t{1} << 60;
constexpr std::chrono::milliseconds max_catch_up{100};

}  // namespace

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

lead_run::lead_run(const plan::network_plan& plan, const plan::topology& topo, links l, std::vector<std::string> config_hashes,
                   std::int64_t first_tick, const storage& where)
    : plan_(plan), topo_(topo), links_(std::move(l)), run_(plan.doc.run ? *plan.doc.run : model::run_settings{}),
      config_hashes_(std::move(config_hashes)), assembly_(plan, topo.node_count()),
      rows_(row_assembly::values_per_row(plan), first_tick, where.output_memory),
      load_(topo.node_count(), run_.rebalance_threshold,
            std::chrono::milliseconds(static_cast<std::int64_t>(run_.rebalance_after_ms))),
      spikes_(plan.net), checkpoint_root_(where.checkpoint_root), pieces_(where.checkpoint_root),
      checkpoints_(where.checkpoint_root, run_.checkpoint_every, run_.checkpoint_keep, folder_name_of(plan.net.name)),
      replicated_end_(first_tick), spikes_replicated_end_(first_tick),
      samples_(plan.net, plan.node_of_neuron, topo.node_count()) {
    if (first_tick > 0) state_ = state::frozen;
    std::vector<bool> holds_neurons;
    for (const auto count : plan.neurons_per_node) holds_neurons.push_back(count > 0);
    load_.judge_only(std::move(holds_neurons));
    if (plan.net.structure) structure_ = structure_log(*plan.net.structure);
    granted_ = first_tick - 1;
    nodes_.resize(topo.node_count());
    for (std::size_t v = 0; v < nodes_.size(); ++v) nodes_[v].id = topo.id(v);
    if (run_.sync == model::sync_mode::window) {
        grants_ = std::make_unique<grant_senders>(topo.node_count(), links_.clock);
    }
}

lead_run::~lead_run() {
    stop_ticker();
    grants_.reset();
}

void lead_run::check_outputs(const plan::network_plan& plan) {
    const auto values = row_assembly::values_per_row(plan);
    if (values > max_values_per_tick)
        throw usage_error("the outputs and lanes make " + std::to_string(values) + " values per tick, more than " +
                          std::to_string(max_values_per_tick));
}

void lead_run::on_report(const protocol::tick_report& report) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto v = topo_.index_of(report.node);
    // A late report of a network this run replaced.
    if (report.hash != config_hashes_.at(v)) return;
    auto& p = nodes_[v];
    if (!report.structure.is_null()) structure_.add(report.structure);
    for (const auto& entry : report.ticks) {
        const auto tick = entry.tick;
        if (tick <= completed()) continue;  // a late repeat
        if (tick == std::numeric_limits<std::int64_t>::max()) throw protocol_error("tick report of an impossible tick");
        const bool first = assembly_.place(v, entry, spikes_.recording());
        if (!entry.samples.is_null() && first) samples_.add(v, tick + 1, entry.samples);
        if (!entry.initial.is_null() && first && tick == 0) samples_.add(v, 0, entry.initial);
        p.completed = std::max(p.completed, tick);
    }
    // Batches may arrive out of order (a hold flushes beside the runner): counts only grow.
    p.sent = std::max(p.sent, report.sent);
    p.dropped = std::max(p.dropped, report.dropped);
    p.missing = std::max(p.missing, report.missing);
    for (auto [from, counts] : {std::pair{&report.sent_to, &p.sent_to}, std::pair{&report.late_from, &p.late_from},
                                std::pair{&report.missing_from, &p.missing_from}, std::pair{&report.packet_bytes_to, &p.packet_bytes_to},
                                std::pair{&report.payload_bytes_to, &p.payload_bytes_to}})
        for (const auto& [peer, count] : *from) (*counts)[peer] = std::max((*counts)[peer], count);
    load_.report(v, report.compute_ns, report.cpu_wait_ns, p.completed);
    // The watch closes its intervals either way (the status shows them); the lead acts on
    // them only with rebalance="auto".
    if (auto due = load_.due(); due && run_.rebalance_auto) rebalance_due_ = std::move(due);
    complete_rows();
}

std::optional<tick_times> lead_run::take_rebalance_due() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(rebalance_due_, std::nullopt);
}

void lead_run::complete_rows() {
    // A row is complete when every node has reported it; in window mode a dead node is not
    // waited for (its outputs read 0).
    const bool window = run_.sync == model::sync_mode::window;
    const auto waited = [&](std::size_t v) { return !window || links_.alive(v); };
    while (auto row = assembly_.take(completed() + 1, waited)) {
        const auto tick = completed() + 1;
        rows_.push(std::move(row->values));
        if (!row->spikes.empty()) spikes_.keep(tick, std::move(row->spikes));
        samples_.complete(tick);
    }
    if (state_ == state::stepping && completed() >= target_) {
        state_ = state::frozen;
        step_seconds_ = std::chrono::duration<double>(clock_type::now() - started_).count();
    }
    changed_.notify_all();
}

protocol::clock_reply lead_run::clock_one(std::size_t v, const protocol::clock_request& request) {
    return grants_ ? grants_->request(v, request) : links_.clock(v, request);
}

std::vector<protocol::clock_reply> lead_run::clock_all(const protocol::clock_request& request) {
    // A window run goes on without nodes that stopped answering; a lockstep run cannot.
    std::vector<protocol::clock_reply> replies;
    for (std::size_t v = 0; v < topo_.node_count(); ++v) {
        try {
            replies.push_back(clock_one(v, request));
        } catch (const std::exception& e) {
            if (run_.sync == model::sync_mode::lockstep)
                throw error("node '" + topo_.id(v) + "' stopped answering (the clock could not reach it: " + e.what() +
                            "); a lockstep run cannot go on without it");
        }
    }
    return replies;
}

void lead_run::grant_all(std::int64_t last) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        granted_ = last;
    }
    if (grants_)
        grants_->grant(last);
    else
        clock_all(protocol::clock_request{protocol::clock_request::kind::grant, last, {}});
}

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
    drive(forever);
}

void lead_run::drive(std::int64_t last) {
    stop_ticker();  // a step's clock may still be writing its last checkpoint
    if (run_.tick_period_ms <= 0 && checkpoints().every <= 0 && !grow_ahead(last)) {
        grant_all(last);
        return;
    }
    ticker_ = std::thread([this, last] { drive_to(last); });
}

void lead_run::drive_to(std::int64_t last) {
    // Invariant: `granted` is the last tick every node may compute; the clock moves it one
    // tick per period (or to the next checkpoint at once), and at a checkpoint boundary B it
    // waits until tick B - 1 is complete, snapshots, and goes on, until it has granted `last`.
    // A paced clock makes up for being held up to max_catch_up (a loaded machine's
    // scheduling); held up longer (a checkpoint, a slow lockstep grant), it starts its pace
    // again from then: it never races to catch up.
    // A scheduled grow at tick G is a boundary too: the clock stops the nodes after G - 1
    // and hands the run to the lead (links::grow_due), which grows it and carries on.
    const auto period = std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double, std::milli>(run_.tick_period_ms));
    auto next_time = clock_type::now();
    std::int64_t granted;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        granted = completed();
    }
    const std::int64_t grow_at = grow_ahead(last) ? next_grow_tick(*plan_.doc.net) : forever;
    auto stopped_at = [&](std::int64_t tick) {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return ticker_stop_ || state_ == state::failed || completed() >= tick; });
        return state_ != state::failed && completed() >= tick;
    };
    try {
        while (granted < last) {
            if (granted >= grow_at - 1) {
                {
                    std::lock_guard<std::mutex> lock(mutex_);
                    if (ticker_stop_) return;
                }
                if (stopped_at(grow_at - 1)) links_.grow_due(grow_at);
                return;
            }
            const auto every = checkpoints().every;
            const std::int64_t boundary = every > 0 ? ((granted + 1) / every + 1) * every : forever;
            std::int64_t target = run_.tick_period_ms > 0 ? granted + 1 : boundary - 1;
            target = std::min({target, boundary - 1, grow_at - 1, last});
            if (run_.tick_period_ms > 0) {
                std::unique_lock<std::mutex> lock(mutex_);
                if (changed_.wait_until(lock, next_time, [&] { return ticker_stop_; })) return;
                const auto now = clock_type::now();
                if (now - next_time > std::max<clock_type::duration>(period, max_catch_up)) next_time = now;
                next_time += period;
            }
            grant_all(target);
            granted = target;
            // Once the nodes have stopped at a checkpoint's boundary it is written, even when
            // the clock is being stopped (a step ending there is frozen already).
            if (target == boundary - 1 && every > 0) {
                if (!stopped_at(target)) return;
                write_checkpoint(boundary);
            }
            std::lock_guard<std::mutex> lock(mutex_);
            if (ticker_stop_) return;
        }
    } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mutex_);
        check_nodes();  // a dead node is the usual cause, and names itself
        if (state_ != state::failed) {
            state_ = state::failed;
            error_ = e.what();
        }
    }
}

void lead_run::check_capturable() const {
    if (next_tick() < delays_settled_)
        throw usage_error("the delays changed at tick " + std::to_string(delays_changed_) + " and spikes sent before are on their way until tick " +
                          std::to_string(delays_settled_) + ": a snapshot or checkpoint is taken from then on (dnnc step)");
}

std::string lead_run::snapshot() {
    std::lock_guard<std::mutex> capturing(capture_mutex_);
    if (!paused()) throw usage_error("the network must be frozen before a snapshot (dnnc freeze)");
    check_capturable();
    // Written like a checkpoint, then handed whole to the client in one frame.
    return whole_snapshot(checkpoint_root_, next_tick(), links_.capture);
}

lead_run::snapshot_piece lead_run::snapshot_piece_at(std::uint64_t from, std::size_t count, std::string buffer) {
    std::lock_guard<std::mutex> capturing(capture_mutex_);
    if (!paused()) throw usage_error("the network must be frozen before a snapshot (dnnc freeze)");
    if (from == 0) {
        check_capturable();
        pieces_.capture(next_tick(), links_.capture);
    }
    return pieces_.piece(next_tick(), from, count, std::move(buffer));
}

void lead_run::update_parameters(const std::function<void()>& apply, std::int64_t transition_ticks) {
    {
        std::lock_guard<std::mutex> capturing(capture_mutex_);
        if (!paused()) throw usage_error("the network must be frozen for an update (dnnc freeze): it applies between two ticks");
        // More changes of delays before the next tick act as one (engine::set_synapses).
        if (transition_ticks > 0 && next_tick() != delays_changed_ && next_tick() < delays_settled_)
            throw usage_error("the delays changed at tick " + std::to_string(delays_changed_) + " and spikes sent before are on their way until tick " +
                              std::to_string(delays_settled_) + ": change them again from then on (dnnc step)");
        apply();
        if (transition_ticks > 0) {
            delays_changed_ = next_tick();
            delays_settled_ = delays_changed_ + transition_ticks;
        }
    }
    if (checkpoints().every > 0) write_checkpoint(next_tick());
}

void lead_run::write_checkpoint(std::int64_t tick) {
    const std::string file = checkpoint_folder::file_of(checkpoints(), tick);
    {
        std::lock_guard<std::mutex> capturing(capture_mutex_);
        if (tick < delays_settled_) return;  // the nodes take no snapshot yet: the next boundary's checkpoint follows
        links_.capture(tick, file);
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        checkpoints_.written(file);
    }
    if (!links_.replicate) return;
    // The rows first: a standby holding a checkpoint also holds every row before it.
    replicate_rows(tick);
    replicate_spikes(tick);
    replicate_checkpoint(links_.replicate, tick, file);
}

void lead_run::replicate_spikes(std::int64_t before) {
    if (!links_.replicate || !spikes_.recording()) return;
    bool more = true;
    while (more) {
        replica_piece piece;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            piece = spikes_piece(spikes_.held(), completed(), spikes_replicated_end_, before, more);
        }
        links_.replicate(piece.header, piece.body);
    }
}

void lead_run::replicate_rows(std::int64_t before) {
    if (!links_.replicate) return;
    // In pieces of about replica_piece_bytes, each a frame of its own.
    while (true) {
        std::optional<replica_piece> piece;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            piece = rows_piece(rows_, replicated_end_, before);
        }
        if (!piece) return;
        links_.replicate(piece->header, piece->body);
    }
}

json lead_run::intent() const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!carried_intent_.is_null()) return carried_intent_;
    // Frozen: where, so that a standby taking over steps its checkpoint up to there.
    return {{"state", name(state_)}, {"target", state_ == state::frozen ? completed() : target_}};
}

void lead_run::carry_on_as(const json& intent) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        carried_intent_ = intent;
    }
    replicate_intent(intent);
}

void lead_run::replicate_intent(const json& intent) {
    if (!links_.replicate) return;
    json header = intent;
    header["kind"] = "intent";
    header["checkpoints"] = checkpoint_settings_json();
    links_.replicate(header, {});
}

json lead_run::checkpoint_settings_json() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return checkpoints_.settings_json();
}

void lead_run::set_checkpoints(checkpoint_settings settings) {
    std::lock_guard<std::mutex> lock(mutex_);
    checkpoints_.set(std::move(settings));
}

lead_run::checkpoint_settings lead_run::checkpoints() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return checkpoints_.current();
}

void lead_run::adopt_checkpoint(const std::string& file, std::int64_t tick) {
    namespace fs = std::filesystem;
    const auto settings = checkpoints();
    if (settings.every <= 0) return;
    const auto kept = checkpoint_folder::file_of(settings, tick);
    if (fs::weakly_canonical(fs::path(file)) != fs::weakly_canonical(kept)) fs::rename(file, kept);
    std::lock_guard<std::mutex> lock(mutex_);
    checkpoints_.adopted(kept);
}

std::string lead_run::last_checkpoint() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return checkpoints_.last();
}

std::deque<tick_spikes> lead_run::spikes_before(std::int64_t tick) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return spikes_.before(tick);
}

void lead_run::adopt_spikes(const std::deque<tick_spikes>& earlier) {
    std::int64_t first_tick;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        first_tick = rows_.end();
        spikes_.adopt(earlier, first_tick);
        if (!spikes_.held().empty()) spikes_replicated_end_ = std::min(spikes_replicated_end_, spikes_.held().front().tick);
    }
    replicate_spikes(first_tick);
}

structure_log lead_run::structure_before(std::int64_t tick) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return structure_.before(tick);
}

void lead_run::adopt_structure(const structure_log& earlier) {
    std::lock_guard<std::mutex> lock(mutex_);
    structure_.adopt(earlier);
}

output_rows lead_run::rows_before(std::int64_t tick) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return rows_.before(tick);
}

std::vector<std::string> lead_run::column_names() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return assembly_.columns();
}

void lead_run::adopt_rows(const output_rows& earlier, const std::vector<std::string>& columns) {
    std::int64_t first_tick;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        first_tick = rows_.end();
        if (columns.empty() || columns == assembly_.columns()) {
            rows_.adopt(earlier);
        } else {
            rows_.adopt(earlier.remapped(protocol::output_values_from(columns, assembly_.columns(), run_.batch)));
        }
        replicated_end_ = rows_.first();
    }
    replicate_rows(first_tick);
}

void lead_run::check_nodes() {
    if (run_.sync != model::sync_mode::lockstep || state_ == state::failed) return;
    if (const auto why = lockstep_breach(topo_, links_.alive, links_.waiting, nodes_, run_.heartbeat_timeout_ms)) {
        state_ = state::failed;
        error_ = *why + "; a lockstep run cannot go on (last complete tick " + std::to_string(completed()) + ")";
    }
}

void lead_run::freeze_for_change() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        check_nodes();
        if (state_ == state::failed) throw error(error_);
    }
    freeze();
}

json lead_run::freeze() {
    stop_ticker();
    std::int64_t target = -1;
    for (const auto& reply : clock_all({protocol::clock_request::kind::hold, 0, {}})) target = std::max(target, reply.horizon);
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

json lead_run::input(const std::vector<protocol::input_row>& rows) {
    std::int64_t first_open;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        first_open = state_ == state::idle || state_ == state::frozen ? completed() + 1 : completed() + 2;
    }
    const auto routed = route_inputs(plan_, rows, first_open, run_.batch);
    for (const auto& [v, list] : routed.by_node) links_.inputs(v, list);
    return {{"values", routed.values}};
}

protocol::run_progress lead_run::progress() {
    std::lock_guard<std::mutex> lock(mutex_);
    check_nodes();
    protocol::run_progress reply;
    reply.state = name(state_);
    reply.completed = completed();
    reply.target = target_;
    reply.sync = model::to_string(run_.sync);
    const auto& ms_per_tick = load_.ms_per_tick();
    const auto& cpu_wait_ms_per_tick = load_.cpu_wait_ms_per_tick();
    for (std::size_t v = 0; v < topo_.node_count(); ++v) {
        auto p = nodes_[v];
        if (!ms_per_tick.empty()) {
            p.ms_per_tick = ms_per_tick[v];
            p.cpu_wait_ms_per_tick = cpu_wait_ms_per_tick[v];
        }
        reply.signals_sent += p.sent;
        reply.signals_dropped += p.dropped;
        reply.packets_missing += p.missing;
        reply.nodes.push_back(std::move(p));
    }
    if (granted_ < forever) reply.granted = granted_;
    reply.output_rows_first = rows_.first();
    reply.output_rows_dropped = rows_.dropped();
    const double seconds = std::chrono::duration<double>(clock_type::now() - started_).count();
    if (state_ == state::running && seconds > 0) reply.ticks_per_second = static_cast<double>(completed() - ticks_at_start_) / seconds;
    if (step_seconds_ >= 0) reply.last_step_seconds = step_seconds_;
    if (!error_.empty()) reply.error = error_;
    if (const auto& c = checkpoints_.current(); c.every > 0) {
        reply.checkpoint_every = c.every;
        reply.checkpoint_dir = c.dir;
        if (!checkpoints_.last().empty()) reply.last_checkpoint = checkpoints_.last();
    }
    return reply;
}

json lead_run::control(const protocol::control_request& request) {
    using kind = protocol::control_request::kind;
    if (request.what == kind::progress) return protocol::encode(progress());
    if (request.what == kind::input) return input(request.rows);
    if (request.what == kind::structure) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (request.recent) return structure_.recent(static_cast<std::size_t>(*request.recent));
        return structure_.read(request.from);
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        check_nodes();
        if (state_ == state::failed) throw error(error_);
    }
    if (request.what == kind::start || request.what == kind::resume) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (state_ == state::running || state_ == state::stepping)
                throw usage_error("the network is already running");
            state_ = state::running;
            carried_intent_ = json();
        }
        replicate_intent();
        start_running();
        return protocol::encode(progress());
    }
    if (request.what == kind::step) {
        const auto ticks = request.ticks;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (state_ == state::running || state_ == state::stepping)
                throw usage_error("the network is running; freeze it before stepping");
            target_ = completed() + ticks;
            state_ = state::stepping;
            carried_intent_ = json();
            step_seconds_ = -1;
            started_ = clock_type::now();
            ticks_at_start_ = completed();
        }
        replicate_intent();
        drive(target_);
        return protocol::encode(progress());
    }
    if (request.what == kind::freeze) {
        auto reply = freeze();
        {
            std::lock_guard<std::mutex> lock(mutex_);
            carried_intent_ = json();
        }
        replicate_intent();
        return reply;
    }
    if (request.what == kind::checkpoint && request.now) {
        // One checkpoint of the frozen network, at once (a job about to be stopped).
        if (!paused()) throw usage_error("the network must be frozen for a checkpoint now (dnnc freeze)");
        {
            std::lock_guard<std::mutex> capturing(capture_mutex_);
            check_capturable();
        }
        if (request.dir) {
            auto c = checkpoints();
            c.dir = checkpoints_.dir_named(*request.dir);
            set_checkpoints(c);
        }
        write_checkpoint(next_tick());
        return {{"tick", next_tick()}, {"last", last_checkpoint()}};
    }
    if (request.what == kind::checkpoint) {
        checkpoint_settings c = checkpoints();
        if (request.every) c.every = *request.every;
        if (request.keep) c.keep = *request.keep;
        if (request.dir) c.dir = checkpoints_.dir_named(*request.dir);
        set_checkpoints(c);
        replicate_intent();
        return {{"every", c.every}, {"keep", c.keep}, {"dir", c.dir}, {"last", last_checkpoint()}};
    }
    throw usage_error(std::string("the lead handles '") + protocol::to_string(request.what) + "', not its run");
}

void lead_run::fail(const std::string& why) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        state_ = state::failed;
        error_ = why;
    }
    changed_.notify_all();
}

bool lead_run::grow_ahead(std::int64_t last) const {
    const auto tick = next_grow_tick(*plan_.doc.net);
    return tick >= 0 && tick <= last;
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
    const auto rows = rows_json(rows_, request.value("from", std::int64_t{0}), completed());
    return {{"columns", assembly_.columns()}, {"batch", run_.batch}, {"rows", rows}, {"completed", completed()}, {"state", name(state_)},
            {"start", rows_.start()}, {"first", rows_.first()}};
}

json lead_run::spikes(const json& request) {
    std::lock_guard<std::mutex> lock(mutex_);
    return read_recorded(spikes_, samples_, request, completed(), name(state_), plan_.net.dt);
}

json lead_run::peek_spikes(const json& request) {
    // A copy of the slice under the lock, the JSON after it: the clock's reports wait only
    // for the copy.
    held_spikes::recent_slice slice;
    std::int64_t done = 0;
    bool recording = false;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        done = completed();
        recording = spikes_.recording();
        slice = spikes_.recent_from(std::max(request.value("from", std::int64_t{0}), done + 1 - held_spikes::max_peek_ticks));
    }
    return json{{"recording", recording}, {"spikes", slice.to_json()}, {"completed", done}, {"dt", plan_.net.dt}, {"groups", spikes_.groups()}};
}

}  // namespace dnnc::node_server
