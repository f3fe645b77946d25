// dnnc rebalance | join | drain --lead HOST:PORT: the running network's neurons re-placed
// from where they are, a node that joins the cluster, a node that leaves it
// (docs/simulation.md, "Re-balancing, and nodes that join and leave").
#include "client.hpp"
#include "commands.hpp"

#include <iomanip>
#include <iostream>

namespace dnnc::cli {
namespace {

using json = nlohmann::json;

struct change_options {
    std::string lead;
    bool json = false;
    client_options client;
};

// Each node's neurons before and after, one line each, and whether it kept its engine or
// had it built ahead.
void print_nodes(const json& nodes) {
    for (const auto& n : nodes)
        std::cout << "  " << std::left << std::setw(12) << n["id"].get<std::string>() << std::right << std::setw(10)
                  << n["before"].get<std::size_t>() << " -> " << n["after"].get<std::size_t>() << " neurons"
                  << (n.value("kept", false) ? ", kept its engine" : n.value("prepared", false) ? ", its engine built ahead" : "")
                  << "\n";
}

// The reply as JSON, or `headline` and the nodes.
int print_reply(const change_options& o, const json& reply, const std::string& headline) {
    if (o.json) {
        std::cout << reply.dump(2) << '\n';
        return 0;
    }
    std::cout << headline << '\n';
    print_nodes(reply["nodes"]);
    return 0;
}

std::string paused(const json& reply) { return " (run paused " + reply["paused_ms"].dump() + " ms)"; }

struct rebalance_options : change_options {
    rebalance_request request;
    std::vector<std::string> capacities;  // ID=C
};

int run_rebalance(rebalance_options& o) {
    for (const auto& c : o.capacities) {
        const auto eq = c.find('=');
        if (eq == std::string::npos || eq == 0) throw usage_error("rebalance: give a capacity as NODE=C (got '" + c + "')");
        std::size_t used = 0;
        double value = 0;
        try {
            value = std::stod(c.substr(eq + 1), &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != c.size() - eq - 1) throw usage_error("rebalance: '" + c.substr(eq + 1) + "' in '" + c + "' is not a number");
        o.request.capacity[c.substr(0, eq)] = value;
    }
    const auto reply = rebalance(o.client, o.lead, o.request);
    const auto moved = reply["moved"].get<std::size_t>();
    const auto cut = "edge cut " + reply["edge_cut"]["before"].dump() + " -> " + reply["edge_cut"]["after"].dump();
    std::string headline;
    if (reply["applied"].get<bool>())
        headline = "re-balanced at tick " + reply["tick"].dump() + ": " + std::to_string(moved) + " neurons moved, " + cut + paused(reply);
    else if (moved == 0)
        headline = "nothing to move: the placement is already the balanced one (" + cut + ")";
    else
        headline = "would move " + std::to_string(moved) + " neurons, " + cut + " (a dry run: nothing changed)";
    return print_reply(o, reply, headline);
}

struct join_options : change_options {
    std::string node;
    double capacity = 1;
    std::vector<std::string> links;
};

int run_join(const join_options& o) {
    const auto reply = join_node(o.client, o.lead, o.node, o.capacity, o.links);
    return print_reply(o, reply,
                       "node " + reply["joined"].get<std::string>() + " joined at tick " + reply["tick"].dump() + ": " +
                           reply["moved"].dump() + " neurons moved" + paused(reply));
}

struct drain_options : change_options {
    std::string node;
};

int run_drain(const drain_options& o) {
    const auto reply = drain_node(o.client, o.lead, o.node);
    const bool released = reply["released"].get<bool>();
    return print_reply(o, reply,
                       "node " + reply["drained"].get<std::string>() + " drained at tick " + reply["tick"].dump() + ": " +
                           reply["moved"].dump() + " neurons moved" + paused(reply) +
                           (released ? "; it serves no network now" : "; it did not answer the release (see the lead's log)"));
}

void add_common(CLI::App* cmd, change_options& o) {
    cmd->add_option("--lead", o.lead, "HOST:PORT of the lead")->required();
    cmd->add_flag("--json", o.json, "Print the lead's answer as JSON");
    o.client.add_to(cmd);
}

}  // namespace

void add_rebalance(CLI::App& app, action& chosen) {
    {
        auto o = std::make_shared<rebalance_options>();
        auto* cmd = app.add_subcommand("rebalance", "Re-place the running network's neurons from where they are (moving few)");
        cmd->add_flag("--dry-run", o->request.dry_run, "Show what would move; change nothing");
        cmd->add_option("--capacity", o->capacities, "NODE=C: the node's capacity from now on (repeatable)");
        cmd->add_option("--migration-weight", o->request.migration_weight,
                        "What moving a synapse costs in cut synapses (default 1; lower moves more for a smaller cut)");
        add_common(cmd, *o);
        cmd->callback([o, &chosen] { chosen = [o] { return run_rebalance(*o); }; });
    }
    {
        auto o = std::make_shared<join_options>();
        auto* cmd = app.add_subcommand("join", "Add a node (serving no network) to the running cluster; it takes its share");
        cmd->add_option("--node", o->node, "ID@HOST:PORT of the node that joins")->required();
        cmd->add_option("--capacity", o->capacity, "Its capacity (default 1)")->check(CLI::PositiveNumber);
        cmd->add_option("--link", o->links, "A node of the cluster it is linked to (repeatable; default: the lead)");
        add_common(cmd, *o);
        cmd->callback([o, &chosen] { chosen = [o] { return run_join(*o); }; });
    }
    {
        auto o = std::make_shared<drain_options>();
        auto* cmd = app.add_subcommand("drain", "Move a node's neurons to the others and release it from the running cluster");
        cmd->add_option("node", o->node, "The node's id")->required();
        add_common(cmd, *o);
        cmd->callback([o, &chosen] { chosen = [o] { return run_drain(*o); }; });
    }
}

}  // namespace dnnc::cli
