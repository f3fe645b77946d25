#include "lead/standby.hpp"

#include "dnnc/core/files.hpp"
#include "dnnc/node_server/log.hpp"
#include "lead/lead_run.hpp"
#include "node_messages.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace dnnc::node_server {

using json = nlohmann::json;
using protocol::frame;
using protocol::message_type;

std::string encode_replica(const json& header, std::string_view body) {
    const std::string text = header.dump();
    const auto length = static_cast<std::uint32_t>(text.size());
    std::string payload(4, '\0');
    for (int k = 0; k < 4; ++k) payload[k] = static_cast<char>((length >> (8 * k)) & 0xff);
    payload += text;
    payload += body;
    return payload;
}

void replicate_checkpoint(const std::function<void(const json&, const std::string&)>& replicate, std::int64_t tick,
                          const std::string& file) {
    if (!replicate) return;
    std::ifstream in(file, std::ios::binary);
    if (!in) throw io_error("cannot read " + file);
    std::string piece(checkpoint_piece_bytes, '\0');
    for (std::uint64_t offset = 0;;) {
        in.read(piece.data(), static_cast<std::streamsize>(piece.size()));
        const auto got = static_cast<std::size_t>(in.gcount());
        const bool last = got < piece.size() || in.peek() == std::char_traits<char>::eof();
        piece.resize(got);
        replicate(json{{"kind", "checkpoint"}, {"tick", tick}, {"offset", offset}, {"last", last}}, piece);
        offset += got;
        if (last) return;
    }
}

namespace {
template <class T>
void append_le(std::string& out, T value) {
    for (std::size_t k = 0; k < sizeof(T); ++k) out.push_back(static_cast<char>((static_cast<std::uint64_t>(value) >> (8 * k)) & 0xff));
}
template <class T>
T read_le(std::string_view in, std::size_t& at) {
    if (in.size() - at < sizeof(T)) throw protocol_error("replica spikes are truncated");
    std::uint64_t value = 0;
    for (std::size_t k = 0; k < sizeof(T); ++k) value |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[at + k])) << (8 * k);
    at += sizeof(T);
    return static_cast<T>(value);
}
}  // namespace

void append_spikes(std::string& body, const tick_spikes& s) {
    append_le<std::int64_t>(body, s.tick);
    append_le<std::uint32_t>(body, static_cast<std::uint32_t>(s.neurons.size()));
    for (auto n : s.neurons) append_le<std::uint32_t>(body, n);
}

std::optional<replica_piece> rows_piece(const output_rows& rows, std::int64_t& replicated_end, std::int64_t before) {
    const auto from = std::max(replicated_end, rows.first());
    const auto end = std::min(before, rows.end());
    if (from >= end) return std::nullopt;
    const std::size_t row_bytes = rows.width() * sizeof(float);
    const auto count = std::min<std::int64_t>(end - from, std::max<std::size_t>(1, replica_piece_bytes / std::max<std::size_t>(1, row_bytes)));
    replica_piece piece;
    piece.body.reserve(static_cast<std::size_t>(count) * row_bytes);
    for (auto t = from; t < from + count; ++t) {
        const auto row = rows.row(t);
        piece.body.append(reinterpret_cast<const char*>(row.data()), row_bytes);
    }
    piece.header = {{"kind", "rows"}, {"start", rows.start()}, {"from", from}, {"count", count}, {"width", rows.width()}};
    replicated_end = from + count;
    return piece;
}

replica_piece spikes_piece(const std::deque<tick_spikes>& held, std::int64_t completed, std::int64_t& replicated_end,
                           std::int64_t before, bool& more) {
    replica_piece piece;
    // The standby forgets what clients have read: what the lead no longer holds.
    piece.header = {{"kind", "spikes"}, {"forget_before", held.empty() ? completed + 1 : held.front().tick}};
    more = false;
    for (const auto& s : held) {
        if (s.tick < replicated_end) continue;
        if (s.tick >= before) break;
        if (!piece.body.empty() && piece.body.size() + s.neurons.size() * sizeof(std::uint32_t) > replica_piece_bytes) {
            more = true;
            break;
        }
        append_spikes(piece.body, s);
        replicated_end = s.tick + 1;
    }
    if (!more) replicated_end = std::max(replicated_end, before);
    return piece;
}

std::vector<tick_spikes> decode_spikes(std::string_view body) {
    std::vector<tick_spikes> ticks;
    std::size_t at = 0;
    while (at < body.size()) {
        tick_spikes s{read_le<std::int64_t>(body, at), {}};
        const auto count = read_le<std::uint32_t>(body, at);
        if ((body.size() - at) / sizeof(std::uint32_t) < count) throw protocol_error("replica spikes are truncated");
        s.neurons.reserve(count);
        for (std::uint32_t k = 0; k < count; ++k) s.neurons.push_back(read_le<std::uint32_t>(body, at));
        ticks.push_back(std::move(s));
    }
    return ticks;
}

standby::standby(const node_options& options, std::function<void(const replica&)> take_over)
    : options_(options), take_over_(std::move(take_over)), watcher_([this] { watch(); }) {}

standby::~standby() { shutdown(); }

std::vector<message_type> standby::handles() const { return {message_type::replica}; }

void standby::handle(const frame& request, responder respond) {
    const std::string_view payload = request.payload;
    if (payload.size() < 4) throw protocol_error("replica payload is truncated");
    std::uint32_t length = 0;
    for (int k = 0; k < 4; ++k) length |= static_cast<std::uint32_t>(static_cast<unsigned char>(payload[k])) << (8 * k);
    if (length > payload.size() - 4) throw protocol_error("replica header runs past the payload");
    const json header = parse_payload(std::string(payload.substr(4, length)));
    if (!header.is_object()) throw protocol_error("replica header is not an object");
    try {
        receive(header, std::string(payload.substr(4 + length)));
    } catch (const json::exception& e) {
        throw protocol_error(std::string("malformed replica header: ") + e.what());
    }
    respond(reply_of(message_type::replica_reply));
}

void standby::receive(const json& header, std::string body) {
    const auto kind = header.at("kind").get<std::string>();
    std::lock_guard<std::mutex> lock(mutex_);
    if (kind == "document") {
        replica r;
        r.network = header.at("network").get<std::string>();
        r.lead = header.at("lead").get<std::string>();
        r.lead_at = parse_endpoint(header.at("lead_at").get<std::string>());
        r.heartbeat_timeout_ms = header.at("heartbeat_timeout_ms").get<double>();
        r.first_tick = header.at("tick").get<std::int64_t>();
        r.rows = output_rows(header.at("width").get<std::size_t>(), r.first_tick, options_.output_memory);
        r.document = std::move(body);
        lead_seen_ = clock_type::now();
        if (r.document.empty() && replica_ && replica_->lead == r.lead) {
            // Its checkpoint follows; until it has come, the run as it was can still be
            // carried on from the replica held.
            arriving_ = std::move(r);
            return;
        }
        arriving_.reset();
        replica_ = std::move(r);
        DNNC_LOG(info, "standby for lead '" << replica_->lead << "' of network '" << replica_->network << "'");
        changed_.notify_all();
        return;
    }
    if (!replica_ && !arriving_) throw protocol_error("a replica '" + kind + "' before its document");
    auto& r = arriving_ ? *arriving_ : *replica_;
    lead_seen_ = clock_type::now();  // only the lead sends its replica
    if (kind == "rows") {
        const auto start = header.at("start").get<std::int64_t>();
        const auto from = header.at("from").get<std::int64_t>();
        const auto width = header.at("width").get<std::size_t>();
        // Counted in the header: the rows of a network without outputs have no bytes.
        const auto count = header.at("count").get<std::size_t>();
        const std::size_t row_bytes = width * sizeof(float);
        if (width != r.rows.width() || from < start || count > replica_piece_bytes ||
            (row_bytes > 0 ? body.size() % row_bytes != 0 || body.size() / row_bytes != count : !body.empty()))
            throw protocol_error("replica rows do not match the network's outputs");
        if (start != r.rows.start()) r.rows = output_rows(width, start, options_.output_memory);
        if (from > r.rows.end()) r.rows.skip_to(from);  // the lead no longer had the rows between
        for (std::size_t k = 0; k < count; ++k) {
            if (from + static_cast<std::int64_t>(k) < r.rows.end()) continue;  // held already
            std::vector<float> row(width);
            std::memcpy(row.data(), body.data() + k * row_bytes, row_bytes);
            r.rows.push(std::move(row));
        }
        return;
    }
    if (kind == "spikes") {
        const auto forget_before = header.at("forget_before").get<std::int64_t>();
        while (!r.spikes.empty() && r.spikes.front().tick < forget_before) r.spikes.pop_front();
        std::size_t held = 0;
        for (const auto& s : r.spikes) held += s.neurons.size();
        for (auto& s : decode_spikes(body)) {
            if (!r.spikes.empty() && s.tick <= r.spikes.back().tick) continue;  // held already
            held += s.neurons.size();
            r.spikes.push_back(std::move(s));
        }
        // Bounded as at the lead: the oldest go first.
        while (held > held_spikes::max_held) {
            held -= r.spikes.front().neurons.size();
            r.spikes.pop_front();
        }
        return;
    }
    if (kind == "checkpoint") {
        const auto tick = header.at("tick").get<std::int64_t>();
        const auto offset = header.at("offset").get<std::uint64_t>();
        // Kept on disk, in this node's own state folder: the newest only.
        namespace fs = std::filesystem;
        const auto dir = fs::path(options_.state_dir) / "replicas" / folder_name_of(r.network);
        const auto file = [&](std::int64_t t) { return (dir / ("checkpoint-" + std::to_string(t) + ".dnncs")).string(); };
        if (offset == 0) {
            fs::create_directories(dir);
            r.incoming = std::make_shared<atomic_file>(file(tick));
            r.incoming_bytes = 0;
            r.incoming_tick = tick;
        } else if (!r.incoming || tick != r.incoming_tick || offset != r.incoming_bytes) {
            throw protocol_error("replica checkpoint piece out of order");
        }
        if (body.size() > replica_piece_bytes) throw protocol_error("replica checkpoint piece too large");
        r.incoming->append(body);
        r.incoming_bytes += body.size();
        if (!header.at("last").get<bool>()) return;
        r.incoming->commit();
        r.incoming.reset();
        if (r.checkpoint_tick >= 0 && r.checkpoint_tick != tick) {
            std::error_code ignored;
            fs::remove(file(r.checkpoint_tick), ignored);
        }
        r.checkpoint_file = file(tick);
        r.checkpoint_tick = tick;
        if (arriving_) {
            // The new run's replica can start a run now: it replaces the one held.
            if (replica_ && replica_->checkpoint_file != r.checkpoint_file && !replica_->checkpoint_file.empty()) {
                std::error_code ignored;
                fs::remove(replica_->checkpoint_file, ignored);
            }
            replica_ = std::move(arriving_);
            arriving_.reset();
            DNNC_LOG(info, "standby for lead '" << replica_->lead << "' of network '" << replica_->network << "' from tick "
                                                << replica_->checkpoint_tick);
        }
        return;
    }
    if (kind == "intent") {
        r.intent = header;
        return;
    }
    throw protocol_error("unknown replica kind '" + kind + "'");
}

void standby::lead_heard(const std::string& lead) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (replica_ && replica_->lead == lead) lead_seen_ = clock_type::now();
}

void standby::forget_unless_led_by(const std::string& lead) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (replica_ && replica_->lead == lead) return;
    replica_.reset();
    arriving_.reset();
}

void standby::forget() {
    std::lock_guard<std::mutex> lock(mutex_);
    replica_.reset();
    arriving_.reset();
}

void standby::describe(protocol::node_status& status) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!replica_) return;
    status.replica = protocol::replica_status{replica_->lead, replica_->checkpoint_tick,
                                              replica_->rows.end() - replica_->rows.first(), elapsed_ms(lead_seen_)};
}

void standby::shutdown() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    changed_.notify_all();
    if (watcher_.joinable()) watcher_.join();
}

// Pings the lead a few times per heartbeat timeout; once it has been silent for a whole
// timeout, takes over with the replica held then.
void standby::watch() {
    peer_client pinger(options_.server.secret, protocol::default_max_payload, options_.server.tls);
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
        if (!replica_) {
            changed_.wait(lock, [&] { return stopping_ || replica_.has_value(); });
            continue;
        }
        const double timeout_ms = replica_->heartbeat_timeout_ms;
        const auto period = std::chrono::duration<double, std::milli>(std::clamp(timeout_ms / 4, 20.0, 500.0));
        if (changed_.wait_for(lock, period, [&] { return stopping_; })) return;
        if (!replica_) continue;
        const auto lead_at = replica_->lead_at;
        const std::string lead = replica_->lead;
        lock.unlock();
        bool answered = false;
        try {
            pinger.call(lead_at, frame{message_type::heartbeat, 0, 0, {}},
                        std::chrono::milliseconds(static_cast<long>(std::max(10.0, timeout_ms / 2))));
            answered = true;
        } catch (const remote_error&) {
            answered = true;  // refused (a connection limit, say), but by a lead that runs
        } catch (const std::exception&) {
        }
        lock.lock();
        if (!replica_ || replica_->lead != lead) continue;
        if (answered) {
            lead_seen_ = clock_type::now();
            continue;
        }
        if (elapsed_ms(lead_seen_) <= timeout_ms) continue;
        replica taken = std::move(*replica_);
        replica_.reset();
        arriving_.reset();
        lock.unlock();
        DNNC_LOG(warn, "lead '" << taken.lead << "' has been silent for " << static_cast<long>(taken.heartbeat_timeout_ms)
                                << " ms: taking over network '" << taken.network << "'");
        try {
            take_over_(taken);
        } catch (const std::exception& e) {
            DNNC_LOG(error, "taking over from lead '" << taken.lead << "' failed: " << e.what());
        }
        lock.lock();
    }
}

}  // namespace dnnc::node_server
