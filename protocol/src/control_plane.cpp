#include "dnnc/protocol/control_plane.hpp"

#include "dnnc/core/error.hpp"

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
    } else if (j.value("hold", false)) {
        r.what = clock_request::kind::hold;
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

}  // namespace dnnc::protocol
