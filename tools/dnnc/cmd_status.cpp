// dnnc status --lead HOST:PORT [--json] [--links]
#include "client.hpp"
#include "commands.hpp"
#include "dnnc/protocol/rate.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
#include <optional>
#include <iostream>

namespace dnnc::cli {
namespace {

struct status_options {
    std::string lead;
    bool json = false, links = false;
    client_options client;
};

std::string text_of(const std::optional<std::string>& text) { return text ? *text : "-"; }

// A live page's address (docs/live.md), with its token when this client knows the secret
// (every node of a cluster has the same).
std::string page_url(const status_options& o, const protocol::node_status& s, const std::string& address) {
    std::string url = "http://" + address + "/";
    if (!s.http || !s.http->token) return url;
    const auto secret = o.client.secret_for(o.lead);
    return secret.empty() ? url + "?token=TOKEN (the token dnnc-node printed at start-up)"
                          : url + "?token=" + node_server::http_token(secret);
}

// Packets of a link that came late or not at all, each way ("a>b" counts what a sent), and
// their sum added to `total`; "-" when the link had no run.
std::string each_way(const protocol::link_status& l, const std::optional<std::map<std::string, std::int64_t>>& counts,
                     std::int64_t& total) {
    if (!counts) return "-";
    std::string text;
    for (const auto& [sender, count] : *counts) {
        text += (text.empty() ? "" : " ") + sender + ">" + (sender == l.from ? l.to : l.from) + ":" + std::to_string(count);
        total += count;
    }
    return text;
}

void print_links(const protocol::lead_status& c) {
    // Throughput as measured at submit, bandwidth as the document declares it.
    auto rate = [](const std::optional<double>& bps) { return bps ? protocol::rate_human(*bps) : std::string("-"); };
    // Compressed: whether the lead decided so (docs/node_server.md), then the bytes of the
    // packets between its ends so far, as encoded > as sent (bytes).
    auto compressed = [](const protocol::link_status& l) {
        std::string text = l.compressed ? "yes" : "no";
        if (l.packet_bytes) text += " " + std::to_string(*l.packet_bytes) + ">" + std::to_string(l.payload_bytes.value_or(0));
        return text;
    };
    std::printf("%-12s %-12s %12s %14s %14s %14s  %-24s %-20s %-20s %s\n", "link", "", "latency ms", "round trip ms", "throughput",
                "bandwidth", "compressed", "packets late", "packets missing", "flags");
    for (const auto& l : c.links) {
        std::string flags = l.clamped ? "clamped " : "";
        if (l.noisy) flags += "noisy";
        std::int64_t ignored = 0;
        std::printf("%-12s %-12s %12.3f %14.3f %14s %14s  %-24s %-20s %-20s %s\n", l.from.c_str(), l.to.c_str(), l.latency_ms,
                    l.round_trip_ms, rate(l.throughput_bps).c_str(), rate(l.bandwidth_bps).c_str(), compressed(l).c_str(),
                    each_way(l, l.packets_late, ignored).c_str(), each_way(l, l.packets_missing, ignored).c_str(), flags.c_str());
    }
}

int run_status(const status_options& o) {
    const auto s = status_of(o.client, o.lead);
    if (o.json) {
        std::cout << protocol::encode(s).dump(2) << '\n';
        return 0;
    }
    std::cout << "node " << text_of(s.node) << " (" << s.role << "), network " << text_of(s.network) << ", state " << s.state
              << ", tick " << s.tick << '\n';
    if (s.role == "worker") std::cout << "lead " << text_of(s.lead) << " (" << text_of(s.lead_address) << ")\n";
    if (const auto& r = s.replica)
        std::cout << "standby of lead " << r->lead << ": checkpoint of tick " << r->checkpoint_tick << ", " << r->rows
                  << " output rows held; lead last heard " << static_cast<long long>(r->lead_silent_ms) << " ms ago\n";
    if (s.cluster && s.cluster->standby_node) std::cout << "standby " << *s.cluster->standby_node << '\n';
    if (s.http) {
        std::cout << "live page: " << page_url(o, s, s.http->address) << '\n';
        if (s.lead_page) std::cout << "the lead's live page: " << page_url(o, s, *s.lead_page) << '\n';
    }
    if (!s.cluster) return 0;
    const auto& c = *s.cluster;
    // ms/tick: the node's time per tick over the lead's last interval, compute and CPU wait
    // (load_watch); cpu wait: the latter's part.
    std::printf("%-12s %-22s %-12s %8s %9s  %-5s %9s %9s\n", "node", "address", "roles", "capacity", "neurons", "alive", "ms/tick",
                "cpu wait");
    for (const auto& n : c.nodes) {
        std::string roles;
        for (const auto& r : n.roles) roles += (roles.empty() ? "" : ",") + r;
        char ms[32] = "-", waited[32] = "-";
        if (n.ms_per_tick) std::snprintf(ms, sizeof ms, "%.4f", *n.ms_per_tick);
        if (n.cpu_wait_ms_per_tick) std::snprintf(waited, sizeof waited, "%.4f", *n.cpu_wait_ms_per_tick);
        std::printf("%-12s %-22s %-12s %8g %9llu  %-5s %9s %9s%s\n", n.id.c_str(), n.address.c_str(), roles.c_str(), n.capacity,
                    static_cast<unsigned long long>(n.neurons), n.alive ? "yes" : "DEAD", ms, waited,
                    n.via.empty() ? "" : ("  through " + n.via).c_str());
    }
    // The newest changes that moved neurons (growth, re-balance, join, drain), and the nodes
    // that kept their engines or had them built ahead.
    for (const auto& m : s.moves) {
        std::string kept, ahead;
        for (const auto& n : m.nodes) {
            if (n.kept) kept += (kept.empty() ? "" : ", ") + n.id;
            if (n.prepared) ahead += (ahead.empty() ? "" : ", ") + n.id;
        }
        std::cout << "moved at tick " << m.tick << ": " << m.what << ", " << m.moved << " neurons, paused "
                  << static_cast<long>(m.paused_ms) << " ms" << (kept.empty() ? "" : "; kept their engines: " + kept)
                  << (ahead.empty() ? "" : "; engines built ahead: " + ahead) << "\n";
    }
    const auto& w = c.wait_windows;
    if (w.max_ms)
        std::printf("wait windows: %llu neurons with remote inputs, %.3f / %.3f / %.3f ms (min / median / max)\n",
                    static_cast<unsigned long long>(w.neurons_with_remote_inputs), w.min_ms.value_or(0), w.median_ms.value_or(0),
                    *w.max_ms);
    if (!c.dead.empty()) std::cout << "dead nodes: " << nlohmann::json(c.dead).dump() << '\n';
    std::int64_t lost = 0;
    for (const auto& l : c.links) each_way(l, l.packets_late, lost), each_way(l, l.packets_missing, lost);
    // Shown with --links, and whenever a link has lost packets.
    if (o.links || lost > 0) print_links(c);
    return 0;
}

}  // namespace

void add_status(CLI::App& app, action& chosen) {
    auto o = std::make_shared<status_options>();
    auto* cmd = app.add_subcommand("status", "Show a cluster's nodes, links, wait windows and state");
    cmd->add_option("--lead", o->lead, "HOST:PORT of the lead (or of any node, for its own status)")->required();
    cmd->add_flag("--json", o->json, "Print the status as JSON");
    cmd->add_flag("--links", o->links,
                  "Also list the links: measured latencies and throughputs, declared bandwidths, whether signals are compressed on them (and bytes before > after), and packets that came late or not at all (listed anyway when any did)");
    o->client.add_to(cmd);
    cmd->callback([o, &chosen] { chosen = [o] { return run_status(*o); }; });
}

}  // namespace dnnc::cli
