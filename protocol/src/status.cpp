#include "dnnc/protocol/status.hpp"

#include "dnnc/core/error.hpp"

#include <type_traits>

namespace dnnc::protocol {

using json = nlohmann::json;

namespace {

// Each message lists its fields once, in fields(io, message), and the two ends walk that
// list: the encoder writes a JSON object, the decoder reads one, checking every value. A
// field is
//   required    always written, and the decoder needs it;
//   defaulted   always written; a decoder that does not find it keeps the default;
//   optional    (a std::optional) written when it holds a value;
//   unless_empty  written when it is not empty (a string, a list, null JSON).
// A struct with fields of its own is a JSON object; a list, an array; a map, an object.

template <class T>
struct is_vector : std::false_type {};
template <class E>
struct is_vector<std::vector<E>> : std::true_type {};
template <class T>
struct is_map : std::false_type {};
template <class E>
struct is_map<std::map<std::string, E>> : std::true_type {};

// Whether T is a message with fields() of its own (below).
template <class T, class = void>
struct is_message : std::false_type {};

class encoder {
public:
    json out = json::object();

    template <class T>
    void required(const char* key, const T& value) { out[key] = encoded(value); }
    template <class T>
    void defaulted(const char* key, const T& value) { out[key] = encoded(value); }
    template <class T>
    void optional(const char* key, const std::optional<T>& value) {
        if (value) out[key] = encoded(*value);
    }
    template <class T>
    void unless_empty(const char* key, const T& value) {
        const bool empty = [&] {
            if constexpr (std::is_same_v<T, json>) return value.is_null();
            else return value.empty();
        }();
        if (!empty) out[key] = encoded(value);
    }
    // `part`'s fields beside this object's own, when there is a part.
    template <class T>
    void flattened(const char*, const std::optional<T>& part) {
        if (part) fields(*this, *part);
    }

    template <class T>
    static json encoded(const T& value);
};

class decoder {
public:
    explicit decoder(const json& in, const char* what) : in_(in) {
        if (!in.is_object()) throw protocol_error(std::string(what) + " is not an object");
    }

    template <class T>
    void required(const char* key, T& value) {
        const auto it = in_.find(key);
        if (it == in_.end()) throw protocol_error(std::string("no ") + key);
        value = decoded<T>(*it, key);
    }
    template <class T>
    void defaulted(const char* key, T& value) {
        if (const auto it = in_.find(key); it != in_.end() && !it->is_null()) value = decoded<T>(*it, key);
    }
    template <class T>
    void optional(const char* key, std::optional<T>& value) {
        if (const auto it = in_.find(key); it != in_.end() && !it->is_null()) value = decoded<T>(*it, key);
    }
    template <class T>
    void unless_empty(const char* key, T& value) {
        if (const auto it = in_.find(key); it != in_.end()) value = decoded<T>(*it, key);
    }
    // The part is there when the object has `key`.
    template <class T>
    void flattened(const char* key, std::optional<T>& part) {
        if (in_.contains(key)) fields(*this, part.emplace());
    }

    // A JSON value as T, checked strictly: a whole number for an integer (>= 0 for an
    // unsigned one), any number for a double; protocol_error naming `key` otherwise.
    template <class T>
    static T decoded(const json& v, const char* key);

private:
    const json& in_;
};

// ---- the messages' fields ----

// fields(io, m) for a message M, const (encoding) or not (decoding).
template <class T, class M>
using if_is = std::enable_if_t<std::is_same_v<std::remove_const_t<T>, M>, int>;

template <class Io, class P, if_is<P, node_progress> = 0>
void fields(Io& io, P& p) {
    io.required("id", p.id);
    io.required("completed", p.completed);
    io.required("sent", p.sent);
    io.defaulted("dropped", p.dropped);
    io.defaulted("missing", p.missing);
    io.defaulted("sent_to", p.sent_to);
    io.defaulted("late_from", p.late_from);
    io.defaulted("missing_from", p.missing_from);
    io.defaulted("packet_bytes_to", p.packet_bytes_to);
    io.defaulted("payload_bytes_to", p.payload_bytes_to);
    io.optional("ms_per_tick", p.ms_per_tick);
    io.optional("cpu_wait_ms_per_tick", p.cpu_wait_ms_per_tick);
}

template <class Io, class P, if_is<P, run_progress> = 0>
void fields(Io& io, P& p) {
    io.required("state", p.state);
    io.required("completed", p.completed);
    io.required("target", p.target);
    io.optional("granted", p.granted);
    io.required("nodes", p.nodes);
    io.required("signals_sent", p.signals_sent);
    io.required("signals_dropped", p.signals_dropped);
    io.required("packets_missing", p.packets_missing);
    io.required("sync", p.sync);
    io.required("output_rows_first", p.output_rows_first);
    io.required("output_rows_dropped", p.output_rows_dropped);
    io.optional("ticks_per_second", p.ticks_per_second);
    io.optional("last_step_seconds", p.last_step_seconds);
    io.optional("error", p.error);
    io.optional("checkpoint_every", p.checkpoint_every);
    io.optional("checkpoint_dir", p.checkpoint_dir);
    io.optional("last_checkpoint", p.last_checkpoint);
}

template <class Io, class C, if_is<C, node_count_change> = 0>
void fields(Io& io, C& c) {
    io.required("id", c.id);
    io.required("before", c.before);
    io.required("after", c.after);
    io.defaulted("kept", c.kept);
    io.defaulted("prepared", c.prepared);
}

template <class Io, class M, if_is<M, move_record> = 0>
void fields(Io& io, M& m) {
    io.required("what", m.what);
    io.required("tick", m.tick);
    io.required("moved", m.moved);
    io.required("paused_ms", m.paused_ms);
    io.required("nodes", m.nodes);
}

template <class Io, class N, if_is<N, cluster_node_status> = 0>
void fields(Io& io, N& n) {
    io.required("id", n.id);
    io.required("address", n.address);
    io.required("roles", n.roles);
    io.unless_empty("via", n.via);
    io.required("capacity", n.capacity);
    io.required("neurons", n.neurons);
    io.required("alive", n.alive);
    io.required("silent_ms", n.silent_ms);
    io.optional("completed", n.completed);
    io.optional("signals_sent", n.signals_sent);
    io.optional("ms_per_tick", n.ms_per_tick);
    io.optional("cpu_wait_ms_per_tick", n.cpu_wait_ms_per_tick);
    io.unless_empty("page", n.page);
    io.optional("error", n.error);
}

template <class Io, class L, if_is<L, link_status> = 0>
void fields(Io& io, L& l) {
    io.required("from", l.from);
    io.required("to", l.to);
    io.required("latency_ms", l.latency_ms);
    io.required("round_trip_ms", l.round_trip_ms);
    io.required("clamped", l.clamped);
    io.required("noisy", l.noisy);
    io.defaulted("compressed", l.compressed);
    io.optional("throughput_bps", l.throughput_bps);
    io.optional("bandwidth_bps", l.bandwidth_bps);
    io.optional("signals_sent", l.signals_sent);
    io.optional("packet_bytes", l.packet_bytes);
    io.optional("payload_bytes", l.payload_bytes);
    io.optional("packets_late", l.packets_late);
    io.optional("packets_missing", l.packets_missing);
}

template <class Io, class W, if_is<W, wait_window_spread> = 0>
void fields(Io& io, W& w) {
    io.required("neurons_with_remote_inputs", w.neurons_with_remote_inputs);
    io.optional("min_ms", w.min_ms);
    io.optional("median_ms", w.median_ms);
    io.optional("max_ms", w.max_ms);
}

template <class Io, class P, if_is<P, population_spread> = 0>
void fields(Io& io, P& p) {
    io.required("id", p.id);
    io.optional("first", p.first);
    io.required("size", p.size);
    io.required("nodes", p.nodes);
}

// Flat on the wire, beside the node's own fields (node_status::cluster).
template <class Io, class C, if_is<C, lead_status> = 0>
void fields(Io& io, C& c) {
    io.optional("standby_node", c.standby_node);
    io.required("nodes", c.nodes);
    io.required("links", c.links);
    io.required("wait_windows", c.wait_windows);
    io.required("dead", c.dead);
    io.required("populations", c.populations);
    io.required("dt_ms", c.dt_ms);
    io.required("edge_cut", c.edge_cut);
    io.defaulted("imbalance", c.imbalance);
    io.unless_empty("structure", c.structure);
    io.unless_empty("weight_histograms", c.weight_histograms);
}

template <class Io, class R, if_is<R, replica_status> = 0>
void fields(Io& io, R& r) {
    io.required("lead", r.lead);
    io.required("checkpoint_tick", r.checkpoint_tick);
    io.required("rows", r.rows);
    io.required("lead_silent_ms", r.lead_silent_ms);
}

template <class Io, class M, if_is<M, node_status::memory_use> = 0>
void fields(Io& io, M& m) {
    io.defaulted("available", m.available);
    io.defaulted("limit", m.limit);
    io.defaulted("network", m.network);
}

template <class Io, class T, if_is<T, node_status::task> = 0>
void fields(Io& io, T& t) {
    io.required("task", t.what);
    io.required("seconds", t.seconds);
}

template <class Io, class P, if_is<P, node_status::page_status> = 0>
void fields(Io& io, P& p) {
    io.required("address", p.address);
    io.required("token", p.token);
}

template <class Io, class S, if_is<S, node_status> = 0>
void fields(Io& io, S& s) {
    io.required("state", s.state);
    io.required("role", s.role);
    io.required("tick", s.tick);
    io.defaulted("pid", s.pid);
    io.defaulted("memory", s.memory);
    io.unless_empty("work", s.work);
    io.optional("node", s.node);
    io.optional("network", s.network);
    io.optional("lead", s.lead);
    io.optional("lead_address", s.lead_address);
    io.optional("config_hash", s.config_hash);
    io.optional("epoch", s.epoch);
    io.optional("neurons", s.neurons);
    io.optional("replica", s.replica);
    io.optional("http", s.http);
    io.optional("lead_page", s.lead_page);
    io.optional("granted", s.granted);
    io.optional("output_rows_first", s.output_rows_first);
    io.optional("output_rows_dropped", s.output_rows_dropped);
    io.optional("error", s.error);
    io.optional("ticks_per_second", s.ticks_per_second);
    io.optional("signals_sent", s.signals_sent);
    io.optional("signals_dropped", s.signals_dropped);
    io.optional("packets_missing", s.packets_missing);
    io.optional("sync", s.sync);
    io.optional("last_checkpoint", s.last_checkpoint);
    io.unless_empty("moves", s.moves);
    io.flattened("nodes", s.cluster);
}

// ---- values ----

template <class T>
struct is_message<T, std::void_t<decltype(fields(std::declval<encoder&>(), std::declval<const T&>()))>> : std::true_type {};

template <class T>
json encoder::encoded(const T& value) {
    if constexpr (is_message<T>::value) {
        encoder e;
        fields(e, value);
        return std::move(e.out);
    } else if constexpr (is_vector<T>::value) {
        json list = json::array();
        for (const auto& e : value) list.push_back(encoded(e));
        return list;
    } else {
        return value;  // numbers, strings, maps of numbers, JSON
    }
}

template <class T>
T decoder::decoded(const json& v, const char* key) {
    auto refuse = [key](const char* expected) { return protocol_error(std::string(key) + " is not " + expected); };
    if constexpr (is_message<T>::value) {
        T message;
        decoder d(v, key);
        fields(d, message);
        return message;
    } else if constexpr (std::is_same_v<T, json>) {
        return v;
    } else if constexpr (std::is_same_v<T, bool>) {
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
        for (const auto& e : v) list.push_back(decoded<typename T::value_type>(e, key));
        return list;
    } else {
        static_assert(is_map<T>::value, "a type the status holds");
        if (!v.is_object()) throw refuse("an object");
        T map;
        for (const auto& [name, e] : v.items()) map[name] = decoded<typename T::mapped_type>(e, key);
        return map;
    }
}

template <class T>
T decode_message(const json& j, const char* what) {
    try {
        T message;
        decoder d(j, what);
        fields(d, message);
        return message;
    } catch (const json::exception& e) {
        throw protocol_error(std::string("malformed ") + what + ": " + e.what());
    }
}

}  // namespace

json encode(const move_record& m) { return encoder::encoded(m); }
json encode(const run_progress& p) { return encoder::encoded(p); }
json encode(const node_status& s) { return encoder::encoded(s); }
run_progress decode_run_progress(const json& j) { return decode_message<run_progress>(j, "run progress"); }
node_status decode_node_status(const json& j) { return decode_message<node_status>(j, "node status"); }

}  // namespace dnnc::protocol
