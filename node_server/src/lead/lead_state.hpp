#pragma once
// What the lead keeps of the network it runs (private to dnnc_node_server: lead.cpp, and the
// install pipeline in lead_install.cpp).
#include "lead/lead.hpp"
#include "lead/lead_run.hpp"
#include "node_messages.hpp"
#include "lead/plastic_weights.hpp"

#include "dnnc/plan/plan.hpp"
#include "dnnc/plan/topology.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace dnnc::node_server {

// Made by lead::measure for each network the lead installs.
struct lead_state {
    // `plan` on the topology of its cluster, with its plastic elements; `replica_calls`: the
    // standby's own connection (null: none).
    lead_state(plan::network_plan p, std::shared_ptr<peer_client> replica_calls)
        : plan(std::move(p)), topo(*plan.doc.clu), replicas(std::move(replica_calls)), plastic(plastic_elements(*plan.doc.net)) {}

    plan::network_plan plan;
    plan::topology topo;
    std::vector<plan::link_time> times;
    std::vector<double> windows;
    std::vector<clock_type::time_point> last_seen;
    std::vector<std::string> last_error;
    std::vector<nlohmann::json> waiting;  // what each node's last heartbeat said it waits for
    clock_type::time_point since;
    // The lead's first child in the broadcast tree holds its replica; none on one node.
    std::optional<endpoint> standby;
    std::string standby_id;
    std::shared_ptr<peer_client> replicas;  // its own connection: a replica never waits behind a clock call
    std::vector<protocol::population_spread> populations;  // how each population is spread over the nodes; made by the first describe
    std::vector<std::string> pages;  // where each node's live page is, as its heartbeat said
    std::uint64_t epoch = 0;         // of the configs this lead installed (node_config::epoch)
    std::vector<plastic_element> plastic;
    // The plastic weights' histograms of the last freeze (weight_histograms), and the tick of
    // the last histograms made or tried, so that statuses ask the nodes once per freeze.
    nlohmann::json histograms{};
    std::optional<std::int64_t> binned_tick{};
    bool binning = false;
    std::uint16_t history = 1;  // ticks of output the nodes keep (node_config::history): what new delays may reach
};

}  // namespace dnnc::node_server
