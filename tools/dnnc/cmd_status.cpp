// dnnc status --lead HOST:PORT [--json] [--links]
#include "client.hpp"
#include "commands.hpp"
#include "dnnc/protocol/rate.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace dnnc::cli {
namespace {

struct status_options {
    std::string lead;
    bool json = false, links = false;
    client_options client;
};

std::string text_of(const nlohmann::json& j, const char* key) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "-";
}

// A live page's address (docs/live.md), with its token when this client knows the secret
// (every node of a cluster has the same).
std::string page_url(const status_options& o, const nlohmann::json& s, const std::string& address) {
    std::string url = "http://" + address + "/";
    if (!s["http"].value("token", false)) return url;
    const auto secret = o.client.secret_for(o.lead);
    return secret.empty() ? url + "?token=TOKEN (the token dnnc-node printed at start-up)"
                          : url + "?token=" + node_server::http_token(secret);
}

int run_status(const status_options& o) {
    const auto s = nlohmann::json::parse(call_node(o.client, o.lead, {protocol::message_type::status, 0, 0, {}}).payload);
    if (o.json) {
        std::cout << s.dump(2) << '\n';
        return 0;
    }
    std::cout << "node " << text_of(s, "node") << " (" << s["role"].get<std::string>() << "), network "
              << text_of(s, "network") << ", state " << s["state"].get<std::string>() << ", tick " << s["tick"] << '\n';
    if (s.value("role", "") == "worker") std::cout << "lead " << text_of(s, "lead") << " (" << text_of(s, "lead_address") << ")\n";
    if (s.contains("replica")) {
        const auto& r = s["replica"];
        std::cout << "standby of lead " << text_of(r, "lead") << ": checkpoint of tick " << r["checkpoint_tick"] << ", "
                  << r["rows"] << " output rows held; lead last heard " << static_cast<long long>(r["lead_silent_ms"].get<double>())
                  << " ms ago\n";
    }
    if (s.contains("standby_node")) std::cout << "standby " << text_of(s, "standby_node") << '\n';
    if (s.contains("http")) {
        std::cout << "live page: " << page_url(o, s, s["http"].value("address", std::string())) << '\n';
        if (s.contains("lead_page")) std::cout << "the lead's live page: " << page_url(o, s, text_of(s, "lead_page")) << '\n';
    }
    if (!s.contains("nodes")) return 0;
    // ms/tick: the node's time per tick over the lead's last interval, compute and CPU wait
    // (load_watch); cpu wait: the latter's part.
    std::printf("%-12s %-22s %-12s %8s %9s  %-5s %9s %9s\n", "node", "address", "roles", "capacity", "neurons", "alive", "ms/tick",
                "cpu wait");
    for (const auto& n : s["nodes"]) {
        std::string roles;
        for (const auto& r : n["roles"]) roles += (roles.empty() ? "" : ",") + r.get<std::string>();
        char ms[32] = "-", waited[32] = "-";
        if (n.contains("ms_per_tick")) std::snprintf(ms, sizeof ms, "%.4f", n["ms_per_tick"].get<double>());
        if (n.contains("cpu_wait_ms_per_tick")) std::snprintf(waited, sizeof waited, "%.4f", n["cpu_wait_ms_per_tick"].get<double>());
        std::printf("%-12s %-22s %-12s %8g %9zu  %-5s %9s %9s\n", n["id"].get<std::string>().c_str(),
                    n["address"].get<std::string>().c_str(), roles.c_str(), n["capacity"].get<double>(),
                    n["neurons"].get<std::size_t>(), n["alive"].get<bool>() ? "yes" : "DEAD", ms, waited);
    }
    // The newest changes that moved neurons (growth, re-balance, join, drain).
    if (s.contains("moves"))
        for (const auto& m : s["moves"])
            std::cout << "moved at tick " << m["tick"] << ": " << m["what"].get<std::string>() << ", " << m["moved"] << " neurons, paused "
                      << static_cast<long>(m["paused_ms"].get<double>()) << " ms\n";
    const auto& w = s["wait_windows"];
    if (w.contains("max_ms"))
        std::printf("wait windows: %zu neurons with remote inputs, %.3f / %.3f / %.3f ms (min / median / max)\n",
                    w["neurons_with_remote_inputs"].get<std::size_t>(), w["min_ms"].get<double>(),
                    w["median_ms"].get<double>(), w["max_ms"].get<double>());
    if (!s["dead"].empty()) std::cout << "dead nodes: " << s["dead"].dump() << '\n';
    // Packets of a link that came late or not at all, each way ("a>b" counts what a sent).
    auto each_way = [](const nlohmann::json& l, const char* key, std::int64_t& total) {
        std::string text;
        if (!l.contains(key)) return std::string("-");
        for (const auto& [sender, count] : l[key].items()) {
            const auto to = sender == l["from"].get<std::string>() ? l["to"] : l["from"];
            text += (text.empty() ? "" : " ") + sender + ">" + to.get<std::string>() + ":" + std::to_string(count.get<std::int64_t>());
            total += count.get<std::int64_t>();
        }
        return text;
    };
    std::int64_t lost = 0;
    for (const auto& l : s["links"]) each_way(l, "packets_late", lost), each_way(l, "packets_missing", lost);
    // Shown with --links, and whenever a link has lost packets.
    if (o.links || lost > 0) {
        // Throughput as measured at submit, bandwidth as the document declares it.
        auto rate = [](const nlohmann::json& l, const char* key) {
            return l.contains(key) ? protocol::rate_human(l[key].get<double>()) : std::string("-");
        };
        // Compressed: whether the lead decided so (docs/node_server.md), then the bytes of the
        // packets between its ends so far, as encoded > as sent (bytes).
        auto compressed = [](const nlohmann::json& l) {
            std::string text = l.value("compressed", false) ? "yes" : "no";
            if (l.contains("packet_bytes"))
                text += " " + std::to_string(l["packet_bytes"].get<std::int64_t>()) + ">" +
                        std::to_string(l["payload_bytes"].get<std::int64_t>());
            return text;
        };
        std::printf("%-12s %-12s %12s %14s %14s %14s  %-24s %-20s %-20s %s\n", "link", "", "latency ms", "round trip ms",
                    "throughput", "bandwidth", "compressed", "packets late", "packets missing", "flags");
        for (const auto& l : s["links"]) {
            std::string flags = l["clamped"].get<bool>() ? "clamped " : "";
            if (l["noisy"].get<bool>()) flags += "noisy";
            std::int64_t ignored = 0;
            std::printf("%-12s %-12s %12.3f %14.3f %14s %14s  %-24s %-20s %-20s %s\n", l["from"].get<std::string>().c_str(),
                        l["to"].get<std::string>().c_str(), l["latency_ms"].get<double>(), l["round_trip_ms"].get<double>(),
                        rate(l, "throughput_bps").c_str(), rate(l, "bandwidth_bps").c_str(), compressed(l).c_str(),
                        each_way(l, "packets_late", ignored).c_str(), each_way(l, "packets_missing", ignored).c_str(),
                        flags.c_str());
        }
    }
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
