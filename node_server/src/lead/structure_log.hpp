#pragma once
// The lead's log of structural plasticity (private to dnnc_node_server): one row per group of
// neurons with synaptic elements at every structural update, as one node reports them (every
// node has the same picture; the node that runs the first group's first neuron reports it),
// kept for clients (dnnc run --structure, sim.structure(), the live page).
#include "dnnc/model/structure.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <deque>
#include <string>

namespace dnnc::node_server {

class structure_log {
public:
    // Bounded: the oldest rows go first, and are counted.
    static constexpr std::size_t max_rows = 1000000;

    structure_log() = default;
    explicit structure_log(const model::resolved_structure& structure);

    // A node's report of records: [[tick, group, mean_ca, connections, created, deleted], ...].
    void add(const nlohmann::json& records);
    // {"from": k} -> {"rows": [{"t_ms", "population", "mean_ca", "connections_in", "created",
    // "deleted"}...], "next": the index after the last row, "first": the oldest row kept,
    // "lost": rows dropped before they were read}.
    nlohmann::json read(std::uint64_t from) const;
    // The newest `count` rows, oldest first (the live page's chart).
    nlohmann::json recent(std::size_t count) const;
    bool empty() const { return rows_.empty(); }
    // The rows of updates before `tick`, numbered as here.
    structure_log before(std::int64_t tick) const;
    // Goes on from `earlier`, the log of the run this one continues (a grow, a recovery): its
    // rows come first, with its numbering.
    void adopt(const structure_log& earlier);

private:
    double dt_ = 0.1;
    std::vector<std::string> populations_;
    std::deque<nlohmann::json> rows_;
    std::uint64_t first_ = 0;  // the index of rows_.front()
};

}  // namespace dnnc::node_server
