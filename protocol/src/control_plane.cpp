#include "dnnc/protocol/control_plane.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/model/expand.hpp"

#include <array>
#include <cmath>
#include <limits>

namespace dnnc::protocol {

using json = nlohmann::json;

namespace {

const json& field(const json& j, const char* name, const char* message) {
    if (!j.is_object() || !j.contains(name)) throw protocol_error(std::string(message) + " without " + name);
    return j.at(name);
}

std::int64_t integer(const json& j, const char* what) {
    if (!j.is_number_integer()) throw protocol_error(std::string(what) + " is not a whole number");
    return j.get<std::int64_t>();
}

std::map<std::string, std::int64_t> counts_of(const json& j, const char* what) {
    std::map<std::string, std::int64_t> counts;
    if (j.is_null()) return counts;
    if (!j.is_object()) throw protocol_error(std::string(what) + " is not an object");
    for (const auto& [peer, count] : j.items()) counts[peer] = integer(count, what);
    return counts;
}

json samples_or_null(const json& j) {
    if (!j.is_array()) throw protocol_error("tick report samples are not an array");
    for (const auto& v : j)
        if (!v.is_number() && !v.is_null()) throw protocol_error("tick report sample is not a number");
    return j;
}

reported_tick decode_tick(const json& entry) {
    if (!entry.is_array() || entry.size() < 2 || entry.size() > 5 || !entry[1].is_array())
        throw protocol_error("malformed tick report entry");
    reported_tick t;
    t.tick = integer(entry[0], "tick report tick");
    t.values.reserve(entry[1].size());
    for (const auto& v : entry[1]) {
        if (!v.is_number()) throw protocol_error("tick report value is not a number");
        t.values.push_back(v.get<float>());
    }
    if (entry.size() > 2) {
        if (!entry[2].is_array()) throw protocol_error("tick report spikes are not an array");
        for (const auto& i : entry[2]) {
            if (!i.is_number_integer() || i.get<std::int64_t>() < 0 || i.get<std::int64_t>() > 0xFFFFFFFF)
                throw protocol_error("tick report spike is not a neuron");
            t.spikes.push_back(i.get<std::uint32_t>());
        }
    }
    if (entry.size() > 3) t.samples = samples_or_null(entry[3]);
    if (entry.size() > 4) t.initial = samples_or_null(entry[4]);
    return t;
}

}  // namespace

json encode(const clock_request& r) {
    json j = json::object();
    if (r.what == clock_request::kind::grant) j["grant"] = r.grant;
    if (r.what == clock_request::kind::hold) j["hold"] = true;
    if (r.epoch) j["epoch"] = *r.epoch;
    return j;
}

clock_request decode_clock_request(const json& j) {
    if (!j.is_object()) throw protocol_error("malformed clock request");
    clock_request r;
    if (j.contains("grant")) {
        r.what = clock_request::kind::grant;
        r.grant = integer(j.at("grant"), "clock grant");
    } else if (const auto hold = j.find("hold"); hold != j.end()) {
        if (!hold->is_boolean()) throw protocol_error("clock request hold is not true or false");
        if (hold->get<bool>()) r.what = clock_request::kind::hold;
    }
    if (const auto it = j.find("epoch"); it != j.end()) {
        if (!it->is_string()) throw protocol_error("clock request epoch is not a string");
        r.epoch = it->get<std::string>();
    }
    return r;
}

json encode(const clock_reply& r) { return {{"horizon", r.horizon}, {"completed", r.completed}}; }

clock_reply decode_clock_reply(const json& j) {
    return {integer(field(j, "horizon", "clock reply"), "clock horizon"), integer(field(j, "completed", "clock reply"), "clock completed")};
}

json encode(const tick_report& r) {
    json ticks = json::array();
    for (const auto& t : r.ticks) {
        json entry = json::array({t.tick, t.values});
        const bool samples = !t.samples.is_null() || !t.initial.is_null();
        if (!t.spikes.empty() || samples) entry.push_back(t.spikes);
        if (samples) entry.push_back(t.samples.is_null() ? json::array() : t.samples);
        if (!t.initial.is_null()) entry.push_back(t.initial);
        ticks.push_back(std::move(entry));
    }
    json j{{"node", r.node},       {"hash", r.hash},         {"ticks", std::move(ticks)}, {"sent", r.sent},
           {"sent_to", r.sent_to}, {"dropped", r.dropped},   {"missing", r.missing},      {"compute_ns", r.compute_ns}, {"cpu_wait_ns", r.cpu_wait_ns}, {"late_from", r.late_from},
           {"missing_from", r.missing_from}, {"packet_bytes_to", r.packet_bytes_to}, {"payload_bytes_to", r.payload_bytes_to}};
    if (!r.structure.is_null()) j["structure"] = r.structure;
    return j;
}

tick_report decode_tick_report(const json& j) {
    tick_report r;
    const auto& node = field(j, "node", "tick report");
    if (!node.is_string()) throw protocol_error("tick report node is not a string");
    r.node = node.get<std::string>();
    if (const auto it = j.find("hash"); it != j.end() && it->is_string()) r.hash = it->get<std::string>();
    const auto& ticks = field(j, "ticks", "tick report");
    if (!ticks.is_array()) throw protocol_error("tick report ticks are not an array");
    for (const auto& entry : ticks) r.ticks.push_back(decode_tick(entry));
    r.sent = integer(field(j, "sent", "tick report"), "tick report sent");
    r.dropped = integer(field(j, "dropped", "tick report"), "tick report dropped");
    r.missing = integer(field(j, "missing", "tick report"), "tick report missing");
    if (const auto it = j.find("compute_ns"); it != j.end()) {  // optional: 0 when a node does not say
        r.compute_ns = integer(*it, "tick report compute_ns");
        if (r.compute_ns < 0) throw protocol_error("tick report compute_ns is negative");
    }
    if (const auto it = j.find("cpu_wait_ns"); it != j.end()) {  // optional as well
        r.cpu_wait_ns = integer(*it, "tick report cpu_wait_ns");
        if (r.cpu_wait_ns < 0) throw protocol_error("tick report cpu_wait_ns is negative");
    }
    r.sent_to = counts_of(j.value("sent_to", json()), "tick report sent_to");
    r.late_from = counts_of(j.value("late_from", json()), "tick report late_from");
    r.missing_from = counts_of(j.value("missing_from", json()), "tick report missing_from");
    r.packet_bytes_to = counts_of(j.value("packet_bytes_to", json()), "tick report packet_bytes_to");
    r.payload_bytes_to = counts_of(j.value("payload_bytes_to", json()), "tick report payload_bytes_to");
    if (const auto it = j.find("structure"); it != j.end()) r.structure = *it;
    return r;
}

// ---- a client's command ----

namespace {

using kind = control_request::kind;

constexpr std::array<std::pair<kind, const char*>, 13> kind_names{{{kind::progress, "progress"},
                                                                   {kind::start, "start"},
                                                                   {kind::resume, "resume"},
                                                                   {kind::step, "step"},
                                                                   {kind::freeze, "freeze"},
                                                                   {kind::checkpoint, "checkpoint"},
                                                                   {kind::input, "input"},
                                                                   {kind::structure, "structure"},
                                                                   {kind::recover, "recover"},
                                                                   {kind::grow, "grow"},
                                                                   {kind::rebalance, "rebalance"},
                                                                   {kind::join, "join"},
                                                                   {kind::drain, "drain"}}};

// A command's field checks: each throws usage_error naming the command and the field.
struct command_fields {
    const json& j;
    std::string command;

    const json* find(const char* key) const {
        const auto it = j.find(key);
        return it == j.end() ? nullptr : &*it;
    }
    [[noreturn]] void refuse(const std::string& what, const json& got) const {
        throw usage_error(command + ": " + what + " (got " + got.dump() + ")");
    }
    std::int64_t whole(const json& v, const char* key, std::int64_t first, std::int64_t last) const {
        const bool fits = v.is_number_integer() && (!v.is_number_unsigned() || v.get<std::uint64_t>() <= static_cast<std::uint64_t>(last));
        if (!fits || v.get<std::int64_t>() < first || v.get<std::int64_t>() > last)
            refuse(std::string(key) + " must be a whole number in " + std::to_string(first) + ".." + std::to_string(last), v);
        return v.get<std::int64_t>();
    }
    std::int64_t whole(const char* key, std::int64_t first, std::int64_t last) const {
        const json* v = find(key);
        if (!v) throw usage_error(command + ": " + key + " is missing");
        return whole(*v, key, first, last);
    }
    // A finite number >= `least` (> 0 when `least` is 0 and `positive`).
    double number(const json& v, const std::string& what, bool positive) const {
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 || (positive && v.get<double>() == 0))
            refuse(what + (positive ? " must be a finite number > 0" : " must be a finite number >= 0"), v);
        return v.get<double>();
    }
    std::string text(const char* key, bool required) const {
        const json* v = find(key);
        if (!v && !required) return {};
        if (!v || !v->is_string() || v->get<std::string>().empty()) refuse(std::string(key) + " must be a non-empty string", v ? *v : json());
        return v->get<std::string>();
    }
    bool flag(const char* key) const {
        const json* v = find(key);
        if (v && !v->is_boolean()) refuse(std::string(key) + " must be true or false", *v);
        return v && v->get<bool>();
    }
};

input_row input_row_of(const command_fields& f, const json& row) {
    if (!row.is_array() || row.size() < 3 || row.size() > 4) f.refuse("a row must be [tick, target, value(, lane)]", row);
    input_row r;
    r.tick = f.whole(row[0], "tick", 0, model::max_state_tick);
    if (!row[1].is_string()) f.refuse("a row's target must be an input id or a neuron id", row[1]);
    r.target = row[1].get<std::string>();
    constexpr auto largest = static_cast<double>(std::numeric_limits<float>::max());
    if (!row[2].is_number() || !(std::abs(row[2].get<double>()) <= largest))
        f.refuse("the value for tick " + std::to_string(r.tick) + " (" + r.target + ") must be a finite float32", row[2]);
    r.value = row[2].get<float>();
    if (row.size() > 3) r.lane = f.whole(row[3], "lane", -1, std::numeric_limits<std::int64_t>::max());
    return r;
}

}  // namespace

const char* to_string(control_request::kind k) {
    for (const auto& [each, name] : kind_names)
        if (each == k) return name;
    return "?";
}

control_request::kind control_kind(const std::string& name) {
    for (const auto& [each, known] : kind_names)
        if (name == known) return each;
    throw usage_error("unknown command '" + name + "'");
}

json encode(const control_request& r) {
    json j{{"command", to_string(r.what)}};
    switch (r.what) {
    case kind::step: j["ticks"] = r.ticks; break;
    case kind::checkpoint:
        if (r.now) j["now"] = true;
        if (r.every) j["every"] = *r.every;
        if (r.keep) j["keep"] = *r.keep;
        if (r.dir) j["dir"] = *r.dir;
        break;
    case kind::input:
        j["rows"] = json::array();
        for (const auto& row : r.rows) j["rows"].push_back(json::array({row.tick, row.target, row.value, row.lane}));
        break;
    case kind::structure:
        if (r.recent) j["recent"] = *r.recent;
        else j["from"] = r.from;
        break;
    case kind::grow: j["population"] = r.population, j["add"] = r.add; break;
    case kind::rebalance:
        j["dry_run"] = r.dry_run;
        if (!r.capacities.empty()) j["capacity"] = r.capacities;
        break;
    case kind::join:
        j["node"] = r.node, j["address"] = r.address, j["capacity"] = r.capacity, j["links"] = r.links;
        break;
    case kind::drain: j["node"] = r.node; break;
    default: break;
    }
    if (r.migration_weight && (r.what == kind::rebalance || r.what == kind::join || r.what == kind::drain)) j["migration_weight"] = *r.migration_weight;
    if (r.by_load && (r.what == kind::rebalance || r.what == kind::drain)) j["by_load"] = true;
    return j;
}

control_request decode_control_request(const json& j) {
    if (!j.is_object() || !j.contains("command") || !j["command"].is_string())
        throw usage_error("a command must be a JSON object with a \"command\" name");
    control_request r;
    r.what = control_kind(j["command"].get<std::string>());
    const command_fields f{j, to_string(r.what)};
    switch (r.what) {
    case kind::step: r.ticks = f.whole("ticks", 1, model::max_tick_count); break;
    case kind::checkpoint:
        r.now = f.flag("now");
        if (f.find("every")) r.every = f.whole("every", 0, model::max_tick_count);
        if (f.find("keep")) r.keep = static_cast<int>(f.whole("keep", 1, std::numeric_limits<int>::max()));
        if (f.find("dir")) r.dir = f.text("dir", true);
        break;
    case kind::input: {
        const json* rows = f.find("rows");
        if (!rows || !rows->is_array()) f.refuse("rows must be an array", rows ? *rows : json());
        for (const auto& row : *rows) r.rows.push_back(input_row_of(f, row));
        break;
    }
    case kind::structure:
        if (f.find("recent")) r.recent = f.whole("recent", 0, 100000);
        else if (f.find("from")) r.from = f.whole("from", 0, std::numeric_limits<std::int64_t>::max());
        break;
    case kind::grow:
        r.population = f.text("population", true);
        r.add = f.whole("add", 1, static_cast<std::int64_t>(model::expand_limits{}.max_neurons));
        break;
    case kind::rebalance:
        r.dry_run = f.flag("dry_run");
        if (const json* c = f.find("capacity")) {
            if (!c->is_object()) f.refuse("capacity must map node ids to capacities", *c);
            for (const auto& [id, value] : c->items()) r.capacities[id] = f.number(value, "the capacity of '" + id + "'", true);
        }
        break;
    case kind::join:
        r.node = f.text("node", true);
        r.address = f.text("address", true);
        if (const json* c = f.find("capacity")) r.capacity = f.number(*c, "the capacity", true);
        if (const json* l = f.find("links")) {
            if (!l->is_array()) f.refuse("links must be an array of node ids", *l);
            for (const auto& id : *l) {
                if (!id.is_string()) f.refuse("a link must name a node", id);
                r.links.push_back(id.get<std::string>());
            }
        }
        break;
    case kind::drain: r.node = f.text("node", true); break;
    default: break;
    }
    if (r.what == kind::rebalance || r.what == kind::join || r.what == kind::drain)
        if (const json* w = f.find("migration_weight")) r.migration_weight = f.number(*w, "the migration weight", false);
    if (r.what == kind::rebalance || r.what == kind::drain) r.by_load = f.flag("by_load");
    return r;
}

}  // namespace dnnc::protocol
