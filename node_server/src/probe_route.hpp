#pragma once
// A probe's source route as it travels between nodes (private to dnnc_node_server): who to
// visit, the emulated delay of the link into each hop, and the load it carries across its
// last link. A latency probe carries none; a throughput probe carries `load` bytes over the
// last link only, so that the time the load adds to the round trip belongs to that link.
//
// Payload: the JSON {route, hop, load}, and on the frame into the last hop a newline and
// `load` bytes of filler (JSON text has no raw newline, so the first one ends it).
#include "dnnc/node_server/peer_client.hpp"
#include "dnnc/core/error.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace dnnc::node_server {

// The most bytes a probe may carry across a link.
inline constexpr std::size_t max_probe_load = std::size_t{1} << 20;

struct probe_hop {
    std::string id;
    endpoint at;
    double link_delay_ms = 0;
};

struct probe {
    std::vector<probe_hop> route;
    std::size_t hop = 1;   // the node it goes to (route[hop]); route[0] sent it first
    std::size_t load = 0;  // bytes carried across the last link
};

// The frame's payload that takes `p` to route[p.hop].
inline std::string probe_payload(const probe& p) {
    nlohmann::json r = nlohmann::json::array();
    for (const auto& h : p.route) r.push_back({{"id", h.id}, {"host", h.at.host}, {"port", h.at.port}, {"delay", h.link_delay_ms}});
    std::string payload = nlohmann::json{{"route", r}, {"hop", p.hop}, {"load", p.load}}.dump();
    if (p.hop + 1 == p.route.size() && p.load > 0) payload.append(1, '\n').append(p.load, '\0');
    return payload;
}

// Throws protocol_error for a probe that is malformed, too long or too heavy.
inline probe read_probe(std::string_view payload) {
    try {
        const auto j = nlohmann::json::parse(payload.substr(0, payload.find('\n')));
        probe p;
        for (const auto& h : j.at("route"))
            p.route.push_back({h.at("id").get<std::string>(), {h.at("host").get<std::string>(), h.at("port").get<std::uint16_t>()},
                               h.at("delay").get<double>()});
        p.hop = j.at("hop").get<std::size_t>();
        p.load = j.value("load", std::size_t{0});
        if (p.route.size() < 2 || p.route.size() > 1024 || p.hop == 0 || p.hop >= p.route.size()) throw protocol_error("malformed probe route");
        if (p.load > max_probe_load) throw protocol_error("a probe carries at most " + std::to_string(max_probe_load) + " bytes");
        return p;
    } catch (const nlohmann::json::exception& e) {
        throw protocol_error(std::string("malformed probe: ") + e.what());
    }
}

}  // namespace dnnc::node_server
