#include "client.hpp"

#include "dnnc/core/files.hpp"
#include "dnnc/node_server/local_cluster.hpp"
#include "dnnc/protocol/snapshot.hpp"
#include "dnnc/protocol/snapshot_file.hpp"
#include "dnnc/protocol/xml.hpp"

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <cstdio>
#include <iostream>
#include <thread>
#include <unistd.h>

namespace dnnc::cli {

using json = nlohmann::json;

std::int64_t print_output_rows(std::ostream& out, const json& reply, bool raster, bool header) {
    const auto columns = reply["columns"].get<std::vector<std::string>>();
    const auto batch = reply.value("batch", std::int64_t{1});
    if (header) out << (raster ? std::string(batch > 1 ? "tick,lane,neuron\n" : "tick,neuron\n") : protocol::output_csv_header(columns, batch));
    std::int64_t next = -1;
    for (const auto& row : reply["rows"]) {
        const auto tick = row[0].get<std::int64_t>();
        std::vector<float> values;
        for (std::size_t k = 1; k < row.size(); ++k) values.push_back(row[k].get<float>());
        if (raster) {
            for (std::size_t k = 0; k < values.size(); ++k) {
                if (values[k] == 0.0f) continue;
                out << tick << ',';
                if (batch > 1) out << k / columns.size() << ',';
                out << columns[k % columns.size()] << '\n';
            }
        } else {
            out << protocol::output_csv_row(tick, values, batch);
        }
        next = tick;
    }
    out.flush();
    return next + 1;
}

std::string client_options::secret_for(const std::string& address) const {
    if (!secret_file.empty()) return secret();
    const auto recorded = node_server::recorded_cluster_at(node_server::parse_endpoint(address));
    return recorded && !recorded->secret_file.empty() ? node_server::read_secret_file(recorded->secret_file) : std::string();
}

node_server::peer_client& client_options::kept_client_for(const std::string& address) const {
    std::lock_guard<std::mutex> lock(kept_->mutex);
    auto& kept = kept_->by_address[address];
    if (!kept) kept = client_for(address);
    return *kept;
}

std::unique_ptr<node_server::peer_client> client_options::client_for(const std::string& address) const {
    const auto recorded = secret_file.empty() || tls_ca.empty() ? node_server::recorded_cluster_at(node_server::parse_endpoint(address))
                                                                 : std::nullopt;
    std::string secret = this->secret();
    if (secret_file.empty() && recorded && !recorded->secret_file.empty()) secret = node_server::read_secret_file(recorded->secret_file);
    node_server::tls_files tls{{}, {}, tls_ca};
    if (tls_ca.empty() && recorded) tls.authority = recorded->tls.authority;
    return std::make_unique<node_server::peer_client>(secret, protocol::default_max_payload,
                                                      tls.enabled() ? node_server::tls_config::load(tls) : nullptr);
}

output_reader::output_reader(const client_options& o, const std::string& lead, std::int64_t from, std::ostream& out, bool raster)
    : output_reader(o, lead, from, [&out, raster, header = json()](const json& reply, bool first) mutable {
          // A grow of a population an output names widens the rows: CSV printed under one
          // header cannot take them.
          if (first) header = reply["columns"];
          else if (reply["columns"] != header && !reply["rows"].empty())
              throw error("the outputs' columns changed at tick " + reply["rows"][0][0].dump() +
                          " (a population that an output names grew): read them again from the start");
          return print_output_rows(out, reply, raster, first);
      }) {}

output_reader::output_reader(const client_options& o, const std::string& lead, std::int64_t from, sink to)
    : options_(o), lead_(node_server::parse_endpoint(lead)), client_(o.client_for(lead)), sink_(std::move(to)), next_(from) {}

std::string output_reader::read() {
    while (true) {
        const auto reply = json::parse(
            client_->call(lead_, {protocol::message_type::output, 0, 0, json{{"from", next_}}.dump()}, options_.timeout()).payload);
        completed_ = reply["completed"].get<std::int64_t>();
        next_ = std::max(next_, reply["start"].get<std::int64_t>());  // no row before the run's first tick
        if (const auto first = reply["first"].get<std::int64_t>(); first > next_) {
            std::cerr << "dnnc: missed the output rows of ticks " << next_ << ".." << first - 1
                      << ": the lead no longer held them (read sooner, or give the lead more --output-memory)\n";
            missed_ += first - next_;
            next_ = first;
        }
        const auto after = sink_(reply, header_);
        header_ = false;
        if (!reply["rows"].empty()) next_ = after;
        if (reply["rows"].empty() || next_ > completed_) return reply["state"].get<std::string>();
    }
}

void output_reader::read_through(std::int64_t last) {
    while (next_ <= last) {
        const auto before = next_;
        read();
        if (next_ == before) return;
    }
}

protocol::frame call_node(const client_options& o, const std::string& address, protocol::frame request) {
    const auto to = node_server::parse_endpoint(address);
    // A node closes a connection whose frame exceeds the limit; say why before sending.
    if (request.payload.size() > protocol::default_max_payload) {
        const auto mib = [](std::size_t bytes) { return std::to_string((bytes + (1u << 19)) >> 20) + " MiB"; };
        throw usage_error(std::string("the ") + protocol::to_string(request.type) + " request is " + mib(request.payload.size()) +
                          ", more than the " + mib(protocol::default_max_payload) +
                          " a frame carries; a document this large must give its connectivity as rules and its dense "
                          "weights as files (weights=\"FILE\"), which the lead reads itself");
    }
    // Installing a network and gathering a snapshot take as long as the network is large:
    // they wait while the lead answers heartbeats, and --timeout bounds its silence instead.
    const bool grows = request.type == protocol::message_type::submit || request.type == protocol::message_type::snapshot;
    if (grows) return o.kept_client_for(address).call_while_alive(to, std::move(request), o.timeout());
    return o.kept_client_for(address).call(to, std::move(request), o.timeout());
}

std::string node_binary() {
    const auto self = std::filesystem::read_symlink("/proc/self/exe");
    const auto beside = self.parent_path() / "dnnc-node";
    if (!std::filesystem::exists(beside)) throw io_error("cannot find dnnc-node beside " + self.string());
    return beside.string();
}

namespace {
// Removes a file when it goes out of scope, unless kept.
struct scratch_file {
    std::string path;
    bool keep = false;
    ~scratch_file() {
        std::error_code ignored;
        if (!keep) std::filesystem::remove(path, ignored);
    }
};
std::string scratch_name(const std::string& beside) { return beside + ".part-" + std::to_string(::getpid()); }

// Files named relative to the document, made absolute: the lead reads them.
void anchor_files(model::document& doc) {
    const auto base = std::filesystem::absolute(doc.file).parent_path();
    auto anchor = [&](std::string& file) {
        if (!file.empty() && std::filesystem::path(file).is_relative()) file = (base / file).lexically_normal().string();
    };
    if (doc.net) {
        for (auto& p : doc.net->projections) {
            anchor(p.weights_file);
            anchor(p.connections_file);
        }
        for (auto& p : doc.net->populations) anchor(p.spike_file);
    }
}
}  // namespace

std::string submission_of(model::document doc) {
    anchor_files(doc);
    return protocol::serialize(doc);
}

json restore_binary_snapshot(const client_options& o, const std::string& to, const std::string& path, bool replace,
                             const std::function<void(model::document&)>& adjust) {
    protocol::snapshot_reader reader(path);
    model::document doc = reader.doc();
    doc.file = path;
    const auto as_written = protocol::serialize(doc);
    adjust(doc);
    anchor_files(doc);
    // A snapshot whose document changes is rewritten beside it, a state at a time.
    scratch_file rewritten{scratch_name(path)};
    std::string sent = path;
    if (protocol::serialize(doc) != as_written) {
        protocol::snapshot_writer out(rewritten.path, doc, doc.state->tick, reader.count());
        for (protocol::indexed_state s; reader.next(s);) out.add(s);
        out.commit();
        sent = rewritten.path;
    }
    char name[40];
    std::snprintf(name, sizeof name, "%x%llx", static_cast<unsigned>(::getpid()),
                  static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count()));
    std::ifstream in(sent, std::ios::binary);
    if (!in) throw io_error("cannot read " + sent);
    std::string piece(1u << 20, '\0');
    std::uint64_t offset = 0;
    do {
        in.read(piece.data(), static_cast<std::streamsize>(piece.size()));
        const auto got = static_cast<std::size_t>(in.gcount());
        std::string payload(1, static_cast<char>(std::strlen(name)));
        payload += name;
        payload.append(reinterpret_cast<const char*>(&offset), 8);
        payload.append(piece.data(), got);
        call_node(o, to, {protocol::message_type::upload, 0, 0, std::move(payload)});
        offset += got;
    } while (in);
    const json submit{{"uploaded", name}};
    return json::parse(call_node(o, to, {protocol::message_type::submit, replace ? protocol::replace_flag : std::uint16_t{0}, 0, submit.dump()}).payload);
}

nlohmann::json update_network(const client_options& o, const std::string& lead, const model::document& doc) {
    if (!doc.net) throw usage_error(doc.file + ": an update needs a <network>");
    return nlohmann::json::parse(call_node(o, lead, {protocol::message_type::update, 0, 0, submission_of(doc)}).payload);
}

model::document download_snapshot(const client_options& o, const std::string& lead, const std::string& path) {
    constexpr std::size_t piece_bytes = 1u << 20;  // as the nodes' state pieces
    scratch_file part{scratch_name(path)};
    {
        std::ofstream out(part.path, std::ios::binary | std::ios::trunc);
        if (!out) throw io_error("cannot write " + part.path);
        std::uint64_t from = 0, total = 0;
        do {
            const json request{{"from", from}, {"bytes", piece_bytes}};
            const auto reply = call_node(o, lead, {protocol::message_type::snapshot, 0, 0, request.dump()}).payload;
            if (reply.size() < 16) throw protocol_error("a snapshot piece without its header");
            std::memcpy(&total, reply.data(), 8);
            const auto bytes = reply.size() - 16;
            if ((bytes == 0 && from < total) || from + bytes > total) throw protocol_error("a snapshot piece that does not fit the snapshot");
            out.write(reply.data() + 16, static_cast<std::streamsize>(bytes));
            from += bytes;
        } while (from < total);
        if (!out.flush()) throw io_error("cannot write " + part.path);
    }
    auto doc = protocol::check_snapshot_file(part.path);
    std::filesystem::rename(part.path, path);
    part.keep = true;
    return doc;
}

model::document fetch_snapshot(const client_options& o, const std::string& lead) {
    const auto path = (std::filesystem::temp_directory_path() / ("dnnc-snapshot-" + std::to_string(::getpid()) + ".dnncs")).string();
    scratch_file file{path};
    download_snapshot(o, lead, path);
    return protocol::load_snapshot(path);
}

saved_snapshot save_snapshot_of(const client_options& o, const std::string& lead, const std::string& path) {
    if (protocol::is_binary_snapshot_path(path)) {
        const auto doc = download_snapshot(o, lead, path);
        return {doc.net->name, doc.state->tick, protocol::snapshot_reader(path).count()};
    }
    scratch_file binary{scratch_name(path) + ".dnncs"};
    download_snapshot(o, lead, binary.path);
    const auto doc = protocol::load_snapshot(binary.path);
    protocol::save_snapshot(doc, path);
    return {doc.net->name, doc.state->tick, doc.state->neurons.size()};
}

json control(const client_options& o, const std::string& lead, const protocol::control_request& command) {
    const auto sent = protocol::encode(command);
    protocol::decode_control_request(sent);  // the lead's checks, before anything is sent
    return json::parse(call_node(o, lead, {protocol::message_type::control, 0, 0, sent.dump()}).payload);
}

json control(const client_options& o, const std::string& lead, protocol::control_request::kind what) {
    return control(o, lead, protocol::control_request(what));
}

protocol::run_progress progress_after(const client_options& o, const std::string& lead, const protocol::control_request& command) {
    return protocol::decode_run_progress(control(o, lead, command));
}

protocol::run_progress progress_of(const client_options& o, const std::string& lead) {
    return progress_after(o, lead, protocol::control_request(protocol::control_request::kind::progress));
}

protocol::node_status status_of(const client_options& o, const std::string& address) {
    return protocol::decode_node_status(json::parse(call_node(o, address, {protocol::message_type::status, 0, 0, {}}).payload));
}

json grow_population(const client_options& o, const std::string& lead, const std::string& population, std::int64_t add) {
    if (add < 1) throw usage_error("grow: the number of members to add must be a whole number >= 1 (got " + std::to_string(add) + ")");
    protocol::control_request command(protocol::control_request::kind::grow);
    command.population = population;
    command.add = add;
    return control(o, lead, command);
}

json rebalance(const client_options& o, const std::string& lead, const rebalance_request& request) {
    protocol::control_request command(protocol::control_request::kind::rebalance);
    command.dry_run = request.dry_run;
    command.migration_weight = request.migration_weight;
    command.capacities = request.capacity;
    return control(o, lead, command);
}

json join_node(const client_options& o, const std::string& lead, const std::string& node, double capacity,
               const std::vector<std::string>& links) {
    const auto at = node.find('@');
    if (at == std::string::npos || at == 0)
        throw usage_error("join: give the node as ID@HOST:PORT (got '" + node + "')");
    const auto address = node.substr(at + 1);
    node_server::parse_endpoint(address);  // a usage_error for a bad address, before anything is sent
    protocol::control_request command(protocol::control_request::kind::join);
    command.node = node.substr(0, at);
    command.address = address;
    command.capacity = capacity;
    command.links = links;
    return control(o, lead, command);
}

json drain_node(const client_options& o, const std::string& lead, const std::string& id) {
    protocol::control_request command(protocol::control_request::kind::drain);
    command.node = id;
    return control(o, lead, command);
}

std::string find_new_lead(const client_options& o, const std::vector<std::string>& nodes, const std::string& lost,
                          const std::string& network, std::chrono::milliseconds patience) {
    const auto deadline = std::chrono::steady_clock::now() + patience;
    client_options quick = o;
    quick.timeout_s = 2;
    while (std::chrono::steady_clock::now() < deadline) {
        for (const auto& address : nodes) {
            if (address == lost) continue;
            try {
                const auto s = status_of(quick, address);
                if (s.role == "lead" && s.network == network) return address;
            } catch (const std::exception&) {
                // down too, or busy taking over: asked again
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    throw error("the lead at " + lost + " stopped answering and no node took over network '" + network + "' within " +
                std::to_string(patience.count() / 1000) + " s");
}

protocol::run_progress wait_for_tick(const client_options& o, const std::string& lead, std::int64_t target,
                                     const volatile bool* interrupted, const std::function<void()>& each_poll, bool with_bar) {
    const bool bar = with_bar && isatty(STDERR_FILENO);
    const auto start = std::chrono::steady_clock::now();
    const auto to = node_server::parse_endpoint(lead);
    auto& client = o.kept_client_for(lead);
    std::int64_t first = -2;
    // Short steps (a PyNN script's many run(1 ms)) end within a millisecond or two: the
    // polls start close together and spread out to the usual pace.
    auto pause = std::chrono::microseconds(250);
    const auto slowest = std::chrono::microseconds(bar ? 100'000 : 20'000);
    while (true) {
        const auto p = protocol::decode_run_progress(json::parse(
            client.call(to, {protocol::message_type::control, 0, 0, protocol::encode(protocol::control_request{}).dump()}, o.timeout())
                .payload));
        if (p.error) {
            if (bar) std::fputc('\n', stderr);
            throw error(*p.error);
        }
        const auto done = p.completed;
        if (first == -2) first = done;
        if (bar) {
            const double total = static_cast<double>(std::max<std::int64_t>(1, target - first));
            const double fraction = std::clamp(static_cast<double>(done - first) / total, 0.0, 1.0);
            const int width = 40, filled = static_cast<int>(fraction * width);
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            std::fprintf(stderr, "\r[%.*s%*s] tick %lld/%lld  %.0f ticks/s ", filled, "########################################",
                         width - filled, "", static_cast<long long>(done), static_cast<long long>(target),
                         seconds > 0 ? static_cast<double>(done - first) / seconds : 0.0);
        }
        if (done >= target) {
            if (bar) std::fputc('\n', stderr);
            return p;
        }
        if (each_poll) each_poll();
        if (interrupted && *interrupted) {
            if (bar) std::fputc('\n', stderr);
            throw error("interrupted");
        }
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, slowest);
    }
}

}  // namespace dnnc::cli
