#pragma once
// A latency probe's source route as it travels between nodes (private to dnnc_node_server):
// who to visit, and the emulated delay of the link into each hop.
#include "dnnc/node_server/peer_client.hpp"
#include "dnnc/core/error.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

namespace dnnc::node_server {

struct probe_hop {
    std::string id;
    endpoint at;
    double link_delay_ms = 0;
};

inline nlohmann::json route_to_json(const std::vector<probe_hop>& route, std::size_t hop) {
    nlohmann::json r = nlohmann::json::array();
    for (const auto& h : route) r.push_back({{"id", h.id}, {"host", h.at.host}, {"port", h.at.port}, {"delay", h.link_delay_ms}});
    return {{"route", r}, {"hop", hop}};
}

// Throws protocol_error for a route that is malformed or too long.
inline std::pair<std::vector<probe_hop>, std::size_t> route_from_json(const std::string& payload) {
    try {
        const auto j = nlohmann::json::parse(payload);
        std::vector<probe_hop> route;
        for (const auto& h : j.at("route"))
            route.push_back({h.at("id").get<std::string>(), {h.at("host").get<std::string>(), h.at("port").get<std::uint16_t>()},
                             h.at("delay").get<double>()});
        const auto hop = j.at("hop").get<std::size_t>();
        if (route.size() < 2 || route.size() > 1024 || hop == 0 || hop >= route.size()) throw protocol_error("malformed probe route");
        return {route, hop};
    } catch (const nlohmann::json::exception& e) {
        throw protocol_error(std::string("malformed probe: ") + e.what());
    }
}

}  // namespace dnnc::node_server
