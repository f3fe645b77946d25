#include "lead_run.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/core/files.hpp"

#include "dnnc/protocol/csv.hpp"
#include "dnnc/protocol/snapshot.hpp"
#include "population_growth.hpp"
#include "standby.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <unistd.h>

namespace dnnc::node_server {

using json = nlohmann::json;
using clock_type = std::chrono::steady_clock;

namespace {
constexpr std::int64_t forever = std::int64_t{1} << 60;
constexpr std::chrono::milliseconds max_catch_up{100};
// Snapshot captures served in pieces, numbered across runs (snapshot_piece::capture).
std::atomic<std::uint64_t> piece_captures{0};

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

namespace {

// The output columns, in document order: each output neuron with its name, of the network
// as every grow of its document leaves it (a member a grow adds later reads 0 until then),
// so that a row keeps its width for the whole run; one neuron may fill several columns.
// Without scheduled grows, the plan's own network: nothing is expanded again.
std::vector<std::pair<protocol::neuron_index, std::string>> output_columns(const plan::network_plan& plan) {
    std::optional<protocol::expanded_network> grown;
    if (next_grow_tick(*plan.doc.net) >= 0) grown = protocol::expand_neurons(fully_grown(*plan.doc.net));
    const auto& net = grown ? *grown : plan.net;
    std::vector<std::pair<protocol::neuron_index, std::string>> columns;
    for (const auto& o : net.outputs)
        for (auto i : o.neurons) columns.emplace_back(i, net.neuron_name(i));
    return columns;
}

std::size_t values_per_row(const plan::network_plan& plan) {
    return output_columns(plan).size() * static_cast<std::size_t>(plan.doc.run ? plan.doc.run->batch : 1);
}

}  // namespace

std::string folder_name_of(std::string name) {
    for (auto& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
    return name.empty() || name == "." || name == ".." ? "network" : name;
}

lead_run::lead_run(const plan::network_plan& plan, const plan::topology& topo, links l, std::vector<std::string> config_hashes,
                   std::int64_t first_tick, const storage& where)
    : plan_(plan), topo_(topo), links_(std::move(l)), run_(plan.doc.run ? *plan.doc.run : protocol::run_settings{}),
      config_hashes_(std::move(config_hashes)), rows_(values_per_row(plan), first_tick, where.output_memory),
      load_(topo.node_count(), run_.rebalance_threshold,
            std::chrono::milliseconds(static_cast<std::int64_t>(run_.rebalance_after_ms))),
      spikes_(plan.net), checkpoint_root_(where.checkpoint_root),
      checkpoints_(where.checkpoint_root, run_.checkpoint_every, run_.checkpoint_keep, folder_name_of(plan.net.name)),
      replicated_end_(first_tick), spikes_replicated_end_(first_tick),
      samples_(plan.net, plan.node_of_neuron, topo.node_count()) {
    if (first_tick > 0) state_ = state::frozen;
    std::vector<bool> holds_neurons;
    for (const auto count : plan.neurons_per_node) holds_neurons.push_back(count > 0);
    load_.judge_only(std::move(holds_neurons));
    if (plan.net.structure) structure_ = structure_log(*plan.net.structure);
    granted_ = first_tick - 1;
    // Columns (output_columns); each node reports the output neurons it runs in ascending
    // index order.
    std::map<protocol::neuron_index, std::vector<std::size_t>> columns_of_neuron;
    for (auto& [i, name] : output_columns(plan)) {
        columns_of_neuron[i].push_back(columns_.size());
        columns_.push_back(std::move(name));
    }
    columns_of_.resize(topo.node_count());
    for (const auto& [i, cols] : columns_of_neuron)
        if (i < plan.node_of_neuron.size()) columns_of_[plan.node_of_neuron[i]].push_back(cols);  // not grown yet: none
    nodes_.resize(topo.node_count());
    for (std::size_t v = 0; v < nodes_.size(); ++v) nodes_[v].id = topo.id(v);
    if (run_.sync == protocol::sync_mode::window) {
        grants_ = std::make_unique<grant_senders>(topo.node_count(), links_.clock);
    }
}

lead_run::~lead_run() {
    stop_ticker();
    grants_.reset();
    std::error_code ignored;
    if (!piece_file_.empty()) std::filesystem::remove(piece_file_, ignored);  // a client that stopped reading
}

void lead_run::check_outputs(const plan::network_plan& plan) {
    if (values_per_row(plan) > max_values_per_tick)
        throw usage_error("the outputs and lanes make " + std::to_string(values_per_row(plan)) + " values per tick, more than " +
                          std::to_string(max_values_per_tick));
}

void lead_run::on_report(const protocol::tick_report& report) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto v = topo_.index_of(report.node);
    // A late report of a network this run replaced.
    if (report.hash != config_hashes_.at(v)) return;
    const std::size_t lanes = static_cast<std::size_t>(run_.batch), width = columns_.size();
    auto& p = nodes_[v];
    if (!report.structure.is_null()) structure_.add(report.structure);
    for (const auto& entry : report.ticks) {
        const auto tick = entry.tick;
        if (tick <= completed()) continue;  // a late repeat
        if (tick == std::numeric_limits<std::int64_t>::max()) throw protocol_error("tick report of an impossible tick");
        const auto& values = entry.values;
        if (values.size() != columns_of_[v].size() * lanes) throw protocol_error("tick report with the wrong number of values");
        auto& row = partial_[tick];
        if (row.reported.empty()) {
            row.values.assign(width * lanes, 0.0f);
            row.reported.assign(topo_.node_count(), false);
        }
        // A report lists lanes within each neuron; a row lists columns within each lane.
        for (std::size_t k = 0; k < columns_of_[v].size(); ++k)
            for (std::size_t lane = 0; lane < lanes; ++lane)
                for (auto c : columns_of_[v][k]) row.values[lane * width + c] = values[k * lanes + lane];
        if (spikes_.recording() && !row.reported[v]) row.spikes.insert(row.spikes.end(), entry.spikes.begin(), entry.spikes.end());
        if (!entry.samples.is_null() && !row.reported[v]) samples_.add(v, tick + 1, entry.samples);
        if (!entry.initial.is_null() && !row.reported[v] && tick == 0) samples_.add(v, 0, entry.initial);
        row.reported[v] = true;
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
    const bool window = run_.sync == protocol::sync_mode::window;
    while (true) {
        auto it = partial_.find(completed() + 1);
        if (it == partial_.end()) break;
        bool complete = true;
        for (std::size_t v = 0; v < topo_.node_count(); ++v)
            if (!it->second.reported[v] && !(window && !links_.alive(v))) complete = false;
        if (!complete) break;
        rows_.push(std::move(it->second.values));
        if (!it->second.spikes.empty()) spikes_.keep(it->first, std::move(it->second.spikes));
        samples_.complete(it->first);
        partial_.erase(it);
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
            if (run_.sync == protocol::sync_mode::lockstep)
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
    namespace fs = std::filesystem;
    fs::create_directories(checkpoint_root_);
    const auto file = (fs::path(checkpoint_root_) / ("snapshot-" + std::to_string(::getpid()) + ".dnncs")).string();
    links_.capture(next_tick(), file);
    struct remover {
        std::string file;
        ~remover() {
            std::error_code ignored;
            fs::remove(file, ignored);
        }
    } removing{file};
    return read_file(file);
}

lead_run::snapshot_piece lead_run::snapshot_piece_at(std::uint64_t from, std::size_t count, std::string buffer) {
    namespace fs = std::filesystem;
    std::lock_guard<std::mutex> capturing(capture_mutex_);
    if (!paused()) throw usage_error("the network must be frozen before a snapshot (dnnc freeze)");
    if (from == 0) {
        check_capturable();
        fs::create_directories(checkpoint_root_);
        piece_file_ = (fs::path(checkpoint_root_) / ("snapshot-pieces-" + std::to_string(::getpid()) + ".dnncs")).string();
        piece_tick_ = next_tick();
        piece_capture_ = ++piece_captures;
        links_.capture(piece_tick_, piece_file_);
    }
    if (piece_file_.empty() || piece_tick_ != next_tick())
        throw usage_error("no snapshot of tick " + std::to_string(next_tick()) + " is being read: ask from byte 0");
    snapshot_piece piece;
    piece.tick = piece_tick_;
    piece.capture = piece_capture_;
    piece.total = fs::file_size(piece_file_);
    if (from > piece.total) throw usage_error("the snapshot has " + std::to_string(piece.total) + " bytes");
    piece.bytes = std::move(buffer);
    piece.bytes.resize(static_cast<std::size_t>(std::min<std::uint64_t>(std::min(count, max_snapshot_piece), piece.total - from)));
    std::ifstream in(piece_file_, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(from));
    if (!in.read(piece.bytes.data(), static_cast<std::streamsize>(piece.bytes.size()))) throw io_error("cannot read " + piece_file_);
    if (from + piece.bytes.size() == piece.total) {
        std::error_code ignored;
        fs::remove(piece_file_, ignored);
        piece_file_.clear();
    }
    return piece;
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
    constexpr std::size_t piece = 8u << 20;
    bool more = true;
    while (more) {
        json header;
        std::string body;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            // The standby forgets what clients have read: what this lead no longer holds.
            const auto& held = spikes_.held();
            header = {{"kind", "spikes"}, {"forget_before", held.empty() ? completed() + 1 : held.front().tick}};
            more = false;
            for (const auto& s : held) {
                if (s.tick < spikes_replicated_end_) continue;
                if (s.tick >= before) break;
                if (!body.empty() && body.size() + s.neurons.size() * sizeof(std::uint32_t) > piece) {
                    more = true;
                    break;
                }
                append_spikes(body, s);
                spikes_replicated_end_ = s.tick + 1;
            }
            if (!more) spikes_replicated_end_ = std::max(spikes_replicated_end_, before);
        }
        links_.replicate(header, body);
    }
}

void lead_run::replicate_rows(std::int64_t before) {
    if (!links_.replicate) return;
    // In pieces of about replica_piece_bytes, each a frame of its own.
    while (true) {
        json header;
        std::string body;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            const auto from = std::max(replicated_end_, rows_.first());
            const auto end = std::min(before, rows_.end());
            if (from >= end) return;
            const std::size_t row_bytes = rows_.width() * sizeof(float);
            const auto count = std::min<std::int64_t>(end - from, std::max<std::size_t>(1, replica_piece_bytes / std::max<std::size_t>(1, row_bytes)));
            body.reserve(static_cast<std::size_t>(count) * row_bytes);
            for (auto t = from; t < from + count; ++t) {
                const auto row = rows_.row(t);
                body.append(reinterpret_cast<const char*>(row.data()), row_bytes);
            }
            header = {{"kind", "rows"}, {"start", rows_.start()}, {"from", from}, {"count", count}, {"width", rows_.width()}};
            replicated_end_ = from + count;
        }
        links_.replicate(header, body);
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
    return columns_;
}

void lead_run::adopt_rows(const output_rows& earlier, const std::vector<std::string>& columns) {
    std::int64_t first_tick;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        first_tick = rows_.end();
        if (columns.empty() || columns == columns_) {
            rows_.adopt(earlier);
        } else {
            rows_.adopt(earlier.remapped(protocol::output_values_from(columns, columns_, run_.batch)));
        }
        replicated_end_ = rows_.first();
    }
    replicate_rows(first_tick);
}

void lead_run::check_nodes() {
    if (run_.sync != protocol::sync_mode::lockstep || state_ == state::failed) return;
    auto fail = [&](const std::string& why) {
        state_ = state::failed;
        error_ = why + "; a lockstep run cannot go on (last complete tick " + std::to_string(completed()) + ")";
    };
    for (std::size_t v = 0; v < topo_.node_count(); ++v)
        if (!links_.alive(v)) return fail("node '" + topo_.id(v) + "' stopped answering");
    // A packet a peer has sent (it has completed that tick) and that has not come after a
    // heartbeat timeout is lost: TCP does not lose bytes, so the link itself broke.
    for (std::size_t v = 0; v < topo_.node_count(); ++v) {
        const json w = links_.waiting ? links_.waiting(v) : json();
        if (w.is_null() || w.at("ms").get<double>() <= run_.heartbeat_timeout_ms) continue;
        const auto tick = w.at("tick").get<std::int64_t>();
        for (const auto& peer : w.at("peers")) {
            const auto p = topo_.index_of(peer.get<std::string>());
            if (nodes_[p].completed >= tick)
                return fail("node '" + topo_.id(v) + "' has waited " + std::to_string(static_cast<long long>(w.at("ms").get<double>())) +
                            " ms for the signals node '" + topo_.id(p) + "' sent at tick " + std::to_string(tick) +
                            ": the link from '" + topo_.id(p) + "' to '" + topo_.id(v) + "' is broken");
        }
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
    const auto& net = plan_.net;
    std::map<std::size_t, json> per_node;
    std::int64_t first_open;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        first_open = state_ == state::idle || state_ == state::frozen ? completed() + 1 : completed() + 2;
    }
    std::size_t count = 0;
    for (const auto& row : rows) {
        const auto tick = row.tick, lane = row.lane;
        const auto& target = row.target;
        const auto value = row.value;
        if (tick < first_open)
            throw usage_error("input for tick " + std::to_string(tick) + " (" + target + "): that tick has already run");
        if (lane < -1 || lane >= run_.batch)
            throw usage_error("input for tick " + std::to_string(tick) + " (" + target + "): lane " + std::to_string(lane) +
                              " is out of range; the run has batch " + std::to_string(run_.batch));
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
            list.push_back(json::array({i, tick, value, lane}));
            ++count;
        }
    }
    for (auto& [v, list] : per_node) links_.inputs(v, list);
    return {{"values", count}};
}

protocol::run_progress lead_run::progress() {
    std::lock_guard<std::mutex> lock(mutex_);
    check_nodes();
    protocol::run_progress reply;
    reply.state = name(state_);
    reply.completed = completed();
    reply.target = target_;
    reply.sync = protocol::to_string(run_.sync);
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
    const auto from = std::max(rows_.first(), request.value("from", std::int64_t{0}));
    // At most about a million values per reply (frames are bounded); clients ask again
    // from the next tick.
    json rows = json::array();
    const std::size_t max_rows = std::max<std::size_t>(1, std::min<std::size_t>(100000, 1000000 / (rows_.width() + 1)));
    for (auto t = from; t <= completed() && rows.size() < max_rows; ++t) {
        json row = json::array({t});
        for (float v : rows_.row(t)) row.push_back(v);
        rows.push_back(std::move(row));
    }
    return {{"columns", columns_}, {"batch", run_.batch}, {"rows", rows}, {"completed", completed()}, {"state", name(state_)},
            {"start", rows_.start()}, {"first", rows_.first()}};
}

json lead_run::spikes(const json& request) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto from = request.value("from", std::int64_t{0});
    spikes_.forget_before(from);
    samples_.forget_before(from);
    const bool answer = !request.value("acknowledge", false);
    std::int64_t through = answer ? completed() : from - 1;
    json ticks = answer ? spikes_.answer(through) : json::array();
    std::size_t count = 0;
    for (const auto& t : ticks) count += t.at(1).size();
    json samples = answer ? samples_.answer(from, through, held_spikes::max_per_reply - std::min(count, held_spikes::max_per_reply))
                          : json::array();
    while (!ticks.empty() && ticks.back().at(0).get<std::int64_t>() > through) ticks.erase(ticks.size() - 1);
    json reply{{"recording", spikes_.recording()}, {"spikes", std::move(ticks)}, {"through", std::max(through, from - 1)},
               {"completed", completed()}, {"lost", spikes_.lost()}, {"state", name(state_)}, {"dt", plan_.net.dt},
               {"sampling", samples_.sampling()}, {"samples", std::move(samples)}, {"samples_lost", samples_.lost()}};
    if (request.value("groups", false)) {
        reply["groups"] = spikes_.groups();
        reply["samplings"] = samples_.layout();
    }
    return reply;
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
