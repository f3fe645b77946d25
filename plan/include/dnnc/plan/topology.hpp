#pragma once
// The physical cluster seen from the lead: routes between nodes, the original design's
// probe plan (the transition graph of links) and the link times derived from round trips.
// Pure code, no sockets.
#include "dnnc/model/model.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dnnc::plan {

class topology {
public:
    // The cluster must be checked (model::check_cluster).
    explicit topology(const model::cluster& clu);

    std::size_t node_count() const { return ids_.size(); }
    std::size_t link_count() const { return links_.size(); }
    const std::string& id(std::size_t node) const { return ids_[node]; }
    std::size_t index_of(const std::string& id) const;  // throws usage_error
    std::size_t lead() const { return lead_; }
    std::pair<std::size_t, std::size_t> link(std::size_t l) const { return links_[l]; }
    // The link joining a and b, if any.
    std::optional<std::size_t> link_between(std::size_t a, std::size_t b) const;

    // Shortest route (fewest hops, ties by link order) from a to b, both ends included.
    std::vector<std::size_t> route(std::size_t from, std::size_t to) const;
    // Whether the links join every node to every other.
    bool joined() const;

private:
    // Breadth first from `from` (until `until` is reached; SIZE_MAX: every node): each
    // node's predecessor on a shortest route, SIZE_MAX for a node not reached.
    std::vector<std::size_t> predecessors(std::size_t from, std::size_t until) const;

    std::vector<std::string> ids_;
    std::vector<std::pair<std::size_t, std::size_t>> links_;
    std::vector<std::vector<std::pair<std::size_t, std::size_t>>> adjacent_;  // (node, link)
    std::size_t lead_ = 0;
};

// How the lead reaches one link with source-routed probes (the original method): a vertex
// per link plus a virtual link into the lead, adjacent when links share a node; BFS from the
// virtual vertex. `route` runs from the lead across `parent`'s route and then over the link
// itself to its far end; links at the lead have no parent.
struct probe_path {
    std::size_t link = 0;
    std::vector<std::size_t> route;
    std::optional<std::size_t> parent;  // index into the plan
};
std::vector<probe_path> plan_probes(const topology& topo);

struct link_time {
    std::size_t link = 0;
    double round_trip_ms = 0;  // median of the probes of its route
    double latency_ms = 0;     // one-way time of the link alone
    bool clamped = false;      // the estimate came out negative and was set to 0
    bool noisy = false;        // probes spread widely (interquartile range > half the median + 0.2 ms)
    double throughput_bps = 0;  // bits per second, the slower direction (link_throughput); 0: not measured
    bool compressed = false;    // signal packets across it go LZ4-compressed (compression.hpp)
};

// t(1,i) = T(1,i)/2 for links at the lead, t(k,j) = (T(1,j) - T(1,k))/2 for a link j reached
// through link k. `samples_ms[p]` holds the round trips measured for plan[p].
std::vector<link_time> link_times(const std::vector<probe_path>& plan, const std::vector<std::vector<double>>& samples_ms);

// Round trips of the throughput probes across a link one way: each loaded probe came right
// after an unloaded one along the same route.
struct throughput_samples {
    std::vector<double> unloaded_ms;
    std::vector<double> loaded_ms;
};

// A link's throughput, in bits per second, from probes that carry `load_bytes` across it.
// A direction's load time is its least loaded round trip less its least unloaded one: a
// machine busy with other work only ever stretches a probe, so each least is the closest to
// the link's own, and one stretched unloaded probe cannot hide the load. A direction's rate
// is 8 × load over that time; the link's throughput is the slower direction's; 0 when
// neither load added time (too fast to tell with it).
double link_throughput(std::size_t load_bytes, const throughput_samples& there, const throughput_samples& back);

// Whether a direction's samples can be trusted: its two least loaded round trips agree within
// a quarter. On a machine busy with other work a fast link's loads are stretched by several ms
// each; the lead then sends more pairs (up to three times `throughput-probes`) until two of
// them came through unstretched. A shaped link's loads agree at once.
bool throughput_settled(const throughput_samples& direction);

double median(std::vector<double> values);

}  // namespace dnnc::plan
