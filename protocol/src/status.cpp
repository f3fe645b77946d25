#include "dnnc/protocol/status.hpp"

#include "dnnc/core/error.hpp"

#include <type_traits>

namespace dnnc::protocol {

using json = nlohmann::json;

namespace {

// A JSON value as T, checked strictly: a whole number for an integer (>= 0 for an unsigned
// one), any number for a double; protocol_error naming `key` otherwise.
template <class T>
T value_as(const json& v, const char* key);

template <class T>
struct is_vector : std::false_type {};
template <class E>
struct is_vector<std::vector<E>> : std::true_type {};
template <class T>
struct is_map : std::false_type {};
template <class E>
struct is_map<std::map<std::string, E>> : std::true_type {};

template <class T>
T value_as(const json& v, const char* key) {
    auto refuse = [key](const char* expected) { return protocol_error(std::string(key) + " is not " + expected); };
    if constexpr (std::is_same_v<T, bool>) {
        if (!v.is_boolean()) throw refuse("true or false");
        return v.get<bool>();
    } else if constexpr (std::is_integral_v<T>) {
        if (!v.is_number_integer()) throw refuse("a whole number");
        if constexpr (std::is_unsigned_v<T>)
            if (!v.is_number_unsigned()) throw refuse("a whole number >= 0");
        return v.get<T>();
    } else if constexpr (std::is_floating_point_v<T>) {
        if (!v.is_number()) throw refuse("a number");
        return v.get<T>();
    } else if constexpr (std::is_same_v<T, std::string>) {
        if (!v.is_string()) throw refuse("a string");
        return v.get<std::string>();
    } else if constexpr (is_vector<T>::value) {
        if (!v.is_array()) throw refuse("an array");
        T list;
        for (const auto& e : v) list.push_back(value_as<typename T::value_type>(e, key));
        return list;
    } else {
        static_assert(is_map<T>::value, "a type the status holds");
        if (!v.is_object()) throw refuse("an object");
        T map;
        for (const auto& [name, e] : v.items()) map[name] = value_as<typename T::mapped_type>(e, key);
        return map;
    }
}

template <class T>
T required(const json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end()) throw protocol_error(std::string("no ") + key);
    return value_as<T>(*it, key);
}

template <class T>
void read_optional(const json& j, const char* key, std::optional<T>& to) {
    if (const auto it = j.find(key); it != j.end() && !it->is_null()) to = value_as<T>(*it, key);
}

template <class T>
void read_if_present(const json& j, const char* key, T& to) {
    if (const auto it = j.find(key); it != j.end() && !it->is_null()) to = value_as<T>(*it, key);
}

template <class T>
void write_optional(json& j, const char* key, const std::optional<T>& value) {
    if (value) j[key] = *value;
}

const json& object(const json& j, const char* what) {
    if (!j.is_object()) throw protocol_error(std::string(what) + " is not an object");
    return j;
}

const json& array_at(const json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end()) throw protocol_error(std::string("no ") + key);
    if (!it->is_array()) throw protocol_error(std::string(key) + " is not an array");
    return *it;
}

// Decodes with `read`, turning a missing field or a wrong type into protocol_error.
template <class Read>
auto decoded(const char* what, Read read) {
    try {
        return read();
    } catch (const json::exception& e) {
        throw protocol_error(std::string("malformed ") + what + ": " + e.what());
    }
}

json encode(const node_progress& p) {
    json j{{"id", p.id},
           {"completed", p.completed},
           {"sent", p.sent},
           {"sent_to", p.sent_to},
           {"dropped", p.dropped},
           {"missing", p.missing},
           {"late_from", p.late_from},
           {"missing_from", p.missing_from},
           {"packet_bytes_to", p.packet_bytes_to},
           {"payload_bytes_to", p.payload_bytes_to}};
    write_optional(j, "ms_per_tick", p.ms_per_tick);
    write_optional(j, "cpu_wait_ms_per_tick", p.cpu_wait_ms_per_tick);
    return j;
}

node_progress decode_node_progress(const json& j) {
    object(j, "a node's progress");
    node_progress p;
    p.id = required<std::string>(j, "id");
    p.completed = required<std::int64_t>(j, "completed");
    p.sent = required<std::int64_t>(j, "sent");
    read_if_present(j, "dropped", p.dropped);
    read_if_present(j, "missing", p.missing);
    read_if_present(j, "sent_to", p.sent_to);
    read_if_present(j, "late_from", p.late_from);
    read_if_present(j, "missing_from", p.missing_from);
    read_if_present(j, "packet_bytes_to", p.packet_bytes_to);
    read_if_present(j, "payload_bytes_to", p.payload_bytes_to);
    read_optional(j, "ms_per_tick", p.ms_per_tick);
    read_optional(j, "cpu_wait_ms_per_tick", p.cpu_wait_ms_per_tick);
    return p;
}

move_record decode_move_record(const json& j) {
    object(j, "a move");
    move_record m{required<std::string>(j, "what"), required<std::int64_t>(j, "tick"), required<std::uint64_t>(j, "moved"),
                  required<double>(j, "paused_ms"), {}};
    for (const auto& n : array_at(j, "nodes"))
        m.nodes.push_back({required<std::string>(n, "id"), required<std::uint64_t>(n, "before"), required<std::uint64_t>(n, "after")});
    return m;
}

json encode(const cluster_node_status& n) {
    json j{{"id", n.id},           {"address", n.address}, {"roles", n.roles},        {"capacity", n.capacity},
           {"neurons", n.neurons}, {"alive", n.alive},     {"silent_ms", n.silent_ms}};
    write_optional(j, "completed", n.completed);
    write_optional(j, "signals_sent", n.signals_sent);
    write_optional(j, "ms_per_tick", n.ms_per_tick);
    write_optional(j, "cpu_wait_ms_per_tick", n.cpu_wait_ms_per_tick);
    if (!n.page.empty()) j["page"] = n.page;
    write_optional(j, "error", n.error);
    return j;
}

cluster_node_status decode_cluster_node(const json& j) {
    object(j, "a cluster's node");
    cluster_node_status n;
    n.id = required<std::string>(j, "id");
    n.address = required<std::string>(j, "address");
    n.roles = required<std::vector<std::string>>(j, "roles");
    n.capacity = required<double>(j, "capacity");
    n.neurons = required<std::uint64_t>(j, "neurons");
    n.alive = required<bool>(j, "alive");
    n.silent_ms = required<double>(j, "silent_ms");
    read_optional(j, "completed", n.completed);
    read_optional(j, "signals_sent", n.signals_sent);
    read_optional(j, "ms_per_tick", n.ms_per_tick);
    read_optional(j, "cpu_wait_ms_per_tick", n.cpu_wait_ms_per_tick);
    read_if_present(j, "page", n.page);
    read_optional(j, "error", n.error);
    return n;
}

json encode(const link_status& l) {
    json j{{"from", l.from},   {"to", l.to},       {"latency_ms", l.latency_ms}, {"round_trip_ms", l.round_trip_ms},
           {"clamped", l.clamped}, {"noisy", l.noisy}, {"compressed", l.compressed}};
    write_optional(j, "throughput_bps", l.throughput_bps);
    write_optional(j, "bandwidth_bps", l.bandwidth_bps);
    write_optional(j, "signals_sent", l.signals_sent);
    write_optional(j, "packet_bytes", l.packet_bytes);
    write_optional(j, "payload_bytes", l.payload_bytes);
    write_optional(j, "packets_late", l.packets_late);
    write_optional(j, "packets_missing", l.packets_missing);
    return j;
}

link_status decode_link(const json& j) {
    object(j, "a link");
    link_status l;
    l.from = required<std::string>(j, "from");
    l.to = required<std::string>(j, "to");
    l.latency_ms = required<double>(j, "latency_ms");
    l.round_trip_ms = required<double>(j, "round_trip_ms");
    l.clamped = required<bool>(j, "clamped");
    l.noisy = required<bool>(j, "noisy");
    read_if_present(j, "compressed", l.compressed);
    read_optional(j, "throughput_bps", l.throughput_bps);
    read_optional(j, "bandwidth_bps", l.bandwidth_bps);
    read_optional(j, "signals_sent", l.signals_sent);
    read_optional(j, "packet_bytes", l.packet_bytes);
    read_optional(j, "payload_bytes", l.payload_bytes);
    read_optional(j, "packets_late", l.packets_late);
    read_optional(j, "packets_missing", l.packets_missing);
    return l;
}

json encode(const population_spread& p) {
    json j{{"id", p.id}, {"size", p.size}, {"nodes", p.nodes}};
    write_optional(j, "first", p.first);
    return j;
}

population_spread decode_population_spread(const json& j) {
    object(j, "a population's spread");
    population_spread p;
    p.id = required<std::string>(j, "id");
    p.size = required<std::uint64_t>(j, "size");
    p.nodes = required<std::vector<std::uint64_t>>(j, "nodes");
    read_optional(j, "first", p.first);
    return p;
}

// The lead's part goes at the status's top level, beside the node's own.
void encode_into(json& j, const lead_status& c) {
    write_optional(j, "standby_node", c.standby_node);
    json nodes = json::array(), links = json::array(), populations = json::array();
    for (const auto& n : c.nodes) nodes.push_back(encode(n));
    for (const auto& l : c.links) links.push_back(encode(l));
    for (const auto& p : c.populations) populations.push_back(encode(p));
    json windows{{"neurons_with_remote_inputs", c.wait_windows.neurons_with_remote_inputs}};
    write_optional(windows, "min_ms", c.wait_windows.min_ms);
    write_optional(windows, "median_ms", c.wait_windows.median_ms);
    write_optional(windows, "max_ms", c.wait_windows.max_ms);
    j["nodes"] = std::move(nodes);
    j["links"] = std::move(links);
    j["wait_windows"] = std::move(windows);
    j["dead"] = c.dead;
    j["populations"] = std::move(populations);
    j["dt_ms"] = c.dt_ms;
    j["edge_cut"] = c.edge_cut;
    j["imbalance"] = c.imbalance;
    if (!c.structure.is_null()) j["structure"] = c.structure;
    if (!c.weight_histograms.is_null()) j["weight_histograms"] = c.weight_histograms;
}

lead_status decode_lead_status(const json& j) {
    lead_status c;
    read_optional(j, "standby_node", c.standby_node);
    for (const auto& n : array_at(j, "nodes")) c.nodes.push_back(decode_cluster_node(n));
    for (const auto& l : array_at(j, "links")) c.links.push_back(decode_link(l));
    const auto found = j.find("wait_windows");
    if (found == j.end()) throw protocol_error("no wait_windows");
    const auto& windows = object(*found, "wait windows");
    c.wait_windows.neurons_with_remote_inputs = required<std::uint64_t>(windows, "neurons_with_remote_inputs");
    read_optional(windows, "min_ms", c.wait_windows.min_ms);
    read_optional(windows, "median_ms", c.wait_windows.median_ms);
    read_optional(windows, "max_ms", c.wait_windows.max_ms);
    c.dead = required<std::vector<std::string>>(j, "dead");
    for (const auto& p : array_at(j, "populations")) c.populations.push_back(decode_population_spread(p));
    c.dt_ms = required<double>(j, "dt_ms");
    c.edge_cut = required<double>(j, "edge_cut");
    read_if_present(j, "imbalance", c.imbalance);
    if (const auto it = j.find("structure"); it != j.end()) c.structure = *it;
    if (const auto it = j.find("weight_histograms"); it != j.end()) c.weight_histograms = object(*it, "weight histograms");
    return c;
}

}  // namespace

json encode(const move_record& m) {
    json nodes = json::array();
    for (const auto& n : m.nodes) nodes.push_back({{"id", n.id}, {"before", n.before}, {"after", n.after}});
    return {{"what", m.what}, {"tick", m.tick}, {"moved", m.moved}, {"paused_ms", m.paused_ms}, {"nodes", std::move(nodes)}};
}

json encode(const run_progress& p) {
    json nodes = json::array();
    for (const auto& n : p.nodes) nodes.push_back(encode(n));
    json j{{"state", p.state},
           {"completed", p.completed},
           {"target", p.target},
           {"nodes", std::move(nodes)},
           {"signals_sent", p.signals_sent},
           {"signals_dropped", p.signals_dropped},
           {"packets_missing", p.packets_missing},
           {"sync", p.sync},
           {"output_rows_first", p.output_rows_first},
           {"output_rows_dropped", p.output_rows_dropped}};
    write_optional(j, "granted", p.granted);
    write_optional(j, "ticks_per_second", p.ticks_per_second);
    write_optional(j, "last_step_seconds", p.last_step_seconds);
    write_optional(j, "error", p.error);
    write_optional(j, "checkpoint_every", p.checkpoint_every);
    write_optional(j, "checkpoint_dir", p.checkpoint_dir);
    write_optional(j, "last_checkpoint", p.last_checkpoint);
    return j;
}

run_progress decode_run_progress(const json& j) {
    return decoded("run progress", [&] {
        object(j, "run progress");
        run_progress p;
        p.state = required<std::string>(j, "state");
        p.completed = required<std::int64_t>(j, "completed");
        p.target = required<std::int64_t>(j, "target");
        for (const auto& n : array_at(j, "nodes")) p.nodes.push_back(decode_node_progress(n));
        p.signals_sent = required<std::int64_t>(j, "signals_sent");
        p.signals_dropped = required<std::int64_t>(j, "signals_dropped");
        p.packets_missing = required<std::int64_t>(j, "packets_missing");
        p.sync = required<std::string>(j, "sync");
        p.output_rows_first = required<std::int64_t>(j, "output_rows_first");
        p.output_rows_dropped = required<std::int64_t>(j, "output_rows_dropped");
        read_optional(j, "granted", p.granted);
        read_optional(j, "ticks_per_second", p.ticks_per_second);
        read_optional(j, "last_step_seconds", p.last_step_seconds);
        read_optional(j, "error", p.error);
        read_optional(j, "checkpoint_every", p.checkpoint_every);
        read_optional(j, "checkpoint_dir", p.checkpoint_dir);
        read_optional(j, "last_checkpoint", p.last_checkpoint);
        return p;
    });
}

json encode(const node_status& s) {
    json work = json::array();
    for (const auto& t : s.work) work.push_back({{"task", t.what}, {"seconds", t.seconds}});
    json j{{"state", s.state},
           {"role", s.role},
           {"tick", s.tick},
           {"pid", s.pid},
           {"memory", {{"available", s.memory.available}, {"limit", s.memory.limit}, {"network", s.memory.network}}}};
    if (!s.work.empty()) j["work"] = std::move(work);
    write_optional(j, "node", s.node);
    write_optional(j, "network", s.network);
    write_optional(j, "lead", s.lead);
    write_optional(j, "lead_address", s.lead_address);
    write_optional(j, "config_hash", s.config_hash);
    write_optional(j, "epoch", s.epoch);
    write_optional(j, "neurons", s.neurons);
    if (s.replica)
        j["replica"] = {{"lead", s.replica->lead},
                        {"checkpoint_tick", s.replica->checkpoint_tick},
                        {"rows", s.replica->rows},
                        {"lead_silent_ms", s.replica->lead_silent_ms}};
    if (s.http) j["http"] = {{"address", s.http->address}, {"token", s.http->token}};
    write_optional(j, "lead_page", s.lead_page);
    write_optional(j, "granted", s.granted);
    write_optional(j, "output_rows_first", s.output_rows_first);
    write_optional(j, "output_rows_dropped", s.output_rows_dropped);
    write_optional(j, "error", s.error);
    write_optional(j, "ticks_per_second", s.ticks_per_second);
    write_optional(j, "signals_sent", s.signals_sent);
    write_optional(j, "signals_dropped", s.signals_dropped);
    write_optional(j, "packets_missing", s.packets_missing);
    write_optional(j, "sync", s.sync);
    write_optional(j, "last_checkpoint", s.last_checkpoint);
    if (!s.moves.empty()) {
        json moves = json::array();
        for (const auto& m : s.moves) moves.push_back(encode(m));
        j["moves"] = std::move(moves);
    }
    if (s.cluster) encode_into(j, *s.cluster);
    return j;
}

node_status decode_node_status(const json& j) {
    return decoded("node status", [&] {
        object(j, "a node's status");
        node_status s;
        s.state = required<std::string>(j, "state");
        s.role = required<std::string>(j, "role");
        s.tick = required<std::int64_t>(j, "tick");
        read_if_present(j, "pid", s.pid);
        if (const auto it = j.find("memory"); it != j.end()) {
            const auto& memory = object(*it, "a node's memory");
            read_if_present(memory, "available", s.memory.available);
            read_if_present(memory, "limit", s.memory.limit);
            read_if_present(memory, "network", s.memory.network);
        }
        if (const auto it = j.find("work"); it != j.end())
            for (const auto& t : array_at(j, "work")) s.work.push_back({required<std::string>(t, "task"), required<double>(t, "seconds")});
        read_optional(j, "node", s.node);
        read_optional(j, "network", s.network);
        read_optional(j, "lead", s.lead);
        read_optional(j, "lead_address", s.lead_address);
        read_optional(j, "config_hash", s.config_hash);
        read_optional(j, "epoch", s.epoch);
        read_optional(j, "neurons", s.neurons);
        if (const auto it = j.find("replica"); it != j.end())
            s.replica = replica_status{required<std::string>(*it, "lead"), required<std::int64_t>(*it, "checkpoint_tick"),
                                       required<std::int64_t>(*it, "rows"), required<double>(*it, "lead_silent_ms")};
        if (const auto it = j.find("http"); it != j.end())
            s.http = node_status::page_status{required<std::string>(*it, "address"), required<bool>(*it, "token")};
        read_optional(j, "lead_page", s.lead_page);
        read_optional(j, "granted", s.granted);
        read_optional(j, "output_rows_first", s.output_rows_first);
        read_optional(j, "output_rows_dropped", s.output_rows_dropped);
        read_optional(j, "error", s.error);
        read_optional(j, "ticks_per_second", s.ticks_per_second);
        read_optional(j, "signals_sent", s.signals_sent);
        read_optional(j, "signals_dropped", s.signals_dropped);
        read_optional(j, "packets_missing", s.packets_missing);
        read_optional(j, "sync", s.sync);
        read_optional(j, "last_checkpoint", s.last_checkpoint);
        if (const auto it = j.find("moves"); it != j.end())
            for (const auto& m : array_at(j, "moves")) s.moves.push_back(decode_move_record(m));
        if (j.contains("nodes")) s.cluster = decode_lead_status(j);
        return s;
    });
}

}  // namespace dnnc::protocol
