#include "lead/link_statuses.hpp"

#include <map>
#include <string>

namespace dnnc::node_server {
namespace {

std::int64_t count_to(const std::map<std::string, std::int64_t>& counts, const std::string& peer) {
    const auto it = counts.find(peer);
    return it == counts.end() ? 0 : it->second;
}

}  // namespace

std::vector<protocol::link_status> link_statuses(const plan::topology& topo, const std::vector<plan::link_time>& times,
                                                 const std::vector<model::cluster_link>& declared,
                                                 const protocol::run_progress* progress) {
    const auto reported = [&](std::size_t v) { return progress && v < progress->nodes.size(); };
    std::vector<protocol::link_status> links;
    for (const auto& t : times) {
        const auto [a, b] = topo.link(t.link);
        protocol::link_status link;
        link.from = topo.id(a);
        link.to = topo.id(b);
        link.latency_ms = t.latency_ms;
        link.round_trip_ms = t.round_trip_ms;
        link.clamped = t.clamped;
        link.noisy = t.noisy;
        if (t.throughput_bps > 0) link.throughput_bps = t.throughput_bps;
        link.compressed = t.compressed;
        link.bandwidth_bps = plan::declared_bandwidth(declared, link.from, link.to);
        // Values sent over the link, both ways, since the run began, and the packets that
        // crossed it too late or not at all (window mode), each way (the tick reports say).
        if (reported(a) && reported(b)) {
            const auto& at_a = progress->nodes[a];
            const auto& at_b = progress->nodes[b];
            link.signals_sent = count_to(at_a.sent_to, link.to) + count_to(at_b.sent_to, link.from);
            // Bytes of the packets between its two ends, both ways: as encoded and as sent.
            link.packet_bytes = count_to(at_a.packet_bytes_to, link.to) + count_to(at_b.packet_bytes_to, link.from);
            link.payload_bytes = count_to(at_a.payload_bytes_to, link.to) + count_to(at_b.payload_bytes_to, link.from);
            // By sender, counted where they arrive: b counts what came late from a.
            link.packets_late = {{link.from, count_to(at_b.late_from, link.from)}, {link.to, count_to(at_a.late_from, link.to)}};
            link.packets_missing = {{link.from, count_to(at_b.missing_from, link.from)},
                                    {link.to, count_to(at_a.missing_from, link.to)}};
        }
        links.push_back(std::move(link));
    }
    return links;
}

}  // namespace dnnc::node_server
