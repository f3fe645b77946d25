// dnnc partition FILE (--parts K | --cluster C.xml) [--strategy multilevel|mincut]
//                [--quality fast|strong] [--imbalance E] [--seed S] [--json] [-o ASSIGNMENT]
// Partitions a METIS `.graph` file or the network of a DNNC document over a cluster, places
// the parts on its nodes and prints the quality metrics (and, for a DNNC document, how many
// neurons each node gets; for a cluster whose links declare bandwidths, what each link
// carries). A DNNC document's own <cluster> is used when neither --parts nor
// --cluster is given. -o writes the node of every vertex: for a `.graph`, one node index per
// line like gpmetis's partition files; for a DNNC document, `neuron,node` CSV lines.
#include "commands.hpp"

#include "dnnc/partitioner/assign.hpp"
#include "dnnc/partitioner/metis_io.hpp"
#include "dnnc/partitioner/physical.hpp"
#include "dnnc/plan/planning_graph.hpp"
#include "dnnc/core/error.hpp"
#include "dnnc/model/expand.hpp"
#include "dnnc/protocol/rate.hpp"
#include "dnnc/protocol/xml.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace dnnc::cli {
namespace {

namespace dp = dnnc::partitioner;

struct partition_cli_options {
    std::string file;
    std::size_t parts = 0;
    bool parts_given = false;
    std::string cluster_file;
    std::string strategy = "multilevel";
    std::string quality = "fast";
    double imbalance = 0.03;
    std::uint64_t seed = 1;
    bool json = false;
    std::string output;
};

// Violating edges listed by name in the text report; the JSON report lists the same number.
constexpr std::size_t listed_violations = 20;

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// What was partitioned: a METIS graph, or a DNNC network as its planning graph (see
// plan/planning_graph.hpp), once the cluster is known.
struct input {
    dp::graph g;
    std::optional<model::network> net;
    std::optional<model::expanded_network> neurons;  // names and numbering, no synapses
    std::optional<plan::planning_graph> units;
    std::optional<model::cluster> own_cluster;
};

input load_input(const std::string& file) {
    input in;
    if (!ends_with(file, ".xml")) {
        in.g = dp::read_metis(file);
        return in;
    }
    model::document doc = protocol::load_document(file);
    if (!doc.net) throw usage_error("partition: " + file + " has no <network> to partition");
    in.neurons = model::expand_neurons(*doc.net);
    in.net = std::move(doc.net);
    in.own_cluster = std::move(doc.clu);
    return in;
}

// --parts stands for a complete graph of nodes, whose links, hop table and placement search
// grow with the square of the count.
constexpr std::size_t max_parts = 4096;

dp::physical_cluster cluster_for(const partition_cli_options& o, const input& in) {
    if (o.parts_given) {
        if (o.parts < 1 || o.parts > max_parts) {
            throw usage_error("partition: --parts must be between 1 and " + std::to_string(max_parts));
        }
        const std::size_t vertices = in.neurons ? in.neurons->neuron_count() : in.g.vertex_count();
        if (o.parts > vertices) {
            throw usage_error("partition: " + std::to_string(o.parts) + " parts for " + std::to_string(vertices) +
                              (in.net ? " neurons" : " vertices"));
        }
        return dp::complete_cluster(o.parts);
    }
    if (!o.cluster_file.empty()) {
        const model::document doc = protocol::load_document(o.cluster_file);
        if (!doc.clu) throw usage_error("partition: " + o.cluster_file + " has no <cluster>");
        return plan::physical_of(*doc.clu);
    }
    if (in.own_cluster) return plan::physical_of(*in.own_cluster);
    throw usage_error("partition: give --parts K or --cluster FILE (" + o.file + " has no <cluster>)");
}

std::string vertex_name(const input& in, dp::vertex_id v) {
    return in.units ? in.units->name(*in.neurons, v) : std::to_string(v + 1);  // METIS ids are 1-based
}

void write_assignment(const partition_cli_options& o, const input& in, const dp::physical_cluster& cluster,
                      const std::vector<std::uint32_t>& node_of_vertex) {
    std::ofstream out(o.output);
    if (!out) throw io_error("cannot write " + o.output);
    if (in.net) {
        out << "neuron,node\n";
        const auto node_of_neuron = in.units->spread(node_of_vertex);
        for (model::neuron_index v = 0; v < node_of_neuron.size(); ++v) {
            out << in.neurons->neuron_name(v) << ',' << cluster.names[node_of_neuron[v]] << '\n';
        }
    } else {
        for (std::uint32_t node : node_of_vertex) out << node << '\n';
    }
    if (!out.flush()) throw io_error("cannot write " + o.output);
}

std::string fixed(double value, int digits) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
    return buffer;
}

// Link l's traffic over its bandwidth, or nothing for a link that declares no bandwidth.
std::optional<double> link_load(const dp::physical_cluster& cluster, const dp::quality& q, std::size_t l) {
    const double bandwidth = cluster.link_capacity[l];
    if (!std::isfinite(bandwidth)) return std::nullopt;
    return static_cast<double>(q.link_traffic[l]) / bandwidth;
}

std::string scientific(double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.3e", value);
    return buffer;
}

int run_partition(const partition_cli_options& o) {
    if (!(o.imbalance >= 0) || !std::isfinite(o.imbalance)) {
        throw usage_error("partition: --imbalance must be a finite number >= 0");
    }
    if (o.quality != "fast" && o.quality != "strong") {
        throw usage_error("partition: --quality must be fast or strong, not " + o.quality);
    }
    input in = load_input(o.file);
    const dp::physical_cluster cluster = cluster_for(o, in);
    if (in.net) {
        in.units = plan::planning_graph_of(*in.net, cluster);
        in.g = in.units->g;
    }
    dp::partition_options options;
    options.method = o.strategy == "mincut" ? dp::strategy::mincut : dp::strategy::multilevel;
    options.imbalance = o.imbalance;
    options.seed = o.seed;
    options.quality = o.quality == "strong" ? dp::partition_quality::strong : dp::partition_quality::fast;
    dp::metrics_options metrics;
    metrics.max_listed_violations = listed_violations;

    const auto start = std::chrono::steady_clock::now();
    std::vector<std::uint32_t> node_of_vertex;
    dp::quality q;
    if (in.units) {
        auto placed = plan::place(*in.units, cluster, options, metrics);
        node_of_vertex = std::move(placed.node_of_unit);
        q = std::move(placed.quality);
    } else {
        auto result = dp::assign(in.g, cluster, options, metrics);
        node_of_vertex = std::move(result.place.node_of_vertex);
        q = std::move(result.metrics);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    std::vector<std::size_t> count(cluster.size(), 0);
    for (std::uint32_t node : in.units ? in.units->spread(node_of_vertex) : node_of_vertex) ++count[node];
    double capacity_sum = 0;
    for (double c : cluster.capacity) capacity_sum += c;
    const auto total = static_cast<double>(in.g.total_vertex_weight());
    const bool link_capacities = dp::has_link_capacities(cluster);

    if (!o.output.empty()) write_assignment(o, in, cluster, node_of_vertex);

    if (o.json) {
        nlohmann::json report;
        report["file"] = o.file;
        report["vertices"] = in.g.vertex_count();
        if (in.net) {
            report["neurons"] = in.neurons->neuron_count();
            report["chunk"] = in.units->chunk;
        }
        report["edges"] = in.g.edge_count();
        report["total_weight"] = in.g.total_vertex_weight();
        report["strategy"] = o.strategy;
        report["quality"] = o.quality;
        report["imbalance_bound"] = o.imbalance;
        report["seed"] = o.seed;
        report["seconds"] = seconds;
        report["edge_cut"] = q.edge_cut;
        report["communication_volume"] = q.communication_volume;
        report["max_imbalance"] = q.max_imbalance;
        report["condition1_violations"] = q.violation_count;
        report["hop_weighted_cut"] = q.hop_weighted_cut;
        report["tick_cost"] = q.tick_cost;
        report["max_link_load"] = q.max_link_load;
        nlohmann::json nodes = nlohmann::json::array();
        for (std::size_t i = 0; i < cluster.size(); ++i) {
            nlohmann::json node{{"node", cluster.names[i]},
                                {"capacity", cluster.capacity[i]},
                                {"target_share", cluster.capacity[i] / capacity_sum},
                                {"load", q.load[i]},
                                {"share", total > 0 ? static_cast<double>(q.load[i]) / total : 0.0},
                                {"traffic", q.traffic[i]}};
            node[in.net ? "neurons" : "vertices"] = count[i];
            nodes.push_back(node);
        }
        report["nodes"] = nodes;
        if (link_capacities) {
            nlohmann::json links = nlohmann::json::array();
            for (std::size_t l = 0; l < cluster.links.size(); ++l) {
                const auto load = link_load(cluster, q, l);
                links.push_back({{"from", cluster.names[cluster.links[l].first]},
                                 {"to", cluster.names[cluster.links[l].second]},
                                 {"bandwidth_bps", load ? nlohmann::json(cluster.link_capacity[l]) : nlohmann::json()},
                                 {"traffic", q.link_traffic[l]},
                                 {"load", load ? nlohmann::json(*load) : nlohmann::json()}});
            }
            report["links"] = links;
        }
        nlohmann::json violations = nlohmann::json::array();
        for (const auto& e : q.violations) {
            violations.push_back({{"from", vertex_name(in, e.u)},
                                  {"to", vertex_name(in, e.v)},
                                  {"from_node", cluster.names[e.node_u]},
                                  {"to_node", cluster.names[e.node_v]},
                                  {"weight", e.weight}});
        }
        report["violating_edges"] = violations;
        if (!o.output.empty()) report["output"] = o.output;
        std::cout << report.dump(2) << '\n';
        return 0;
    }

    std::cout << o.file << ": ";
    if (in.net) std::cout << in.neurons->neuron_count() << " neurons in ";
    std::cout << in.g.vertex_count() << (in.net ? " units, " : " vertices, ")
              << in.g.edge_count() << " edges, total weight " << in.g.total_vertex_weight() << '\n'
              << "strategy " << o.strategy << " (quality " << o.quality << "), " << cluster.size() << " nodes, imbalance bound "
              << fixed(100 * o.imbalance, 1) << "%, seed " << o.seed << ", " << fixed(seconds, 3) << " s\n\n"
              << "  edge cut                 " << q.edge_cut << '\n'
              << "  communication volume     " << q.communication_volume << '\n'
              << "  max imbalance            " << fixed(q.max_imbalance, 4) << '\n'
              << "  condition-1 violations   " << q.violation_count << '\n'
              << "  hop-weighted cut         " << q.hop_weighted_cut << '\n'
              << "  tick cost (model)        " << fixed(q.tick_cost, 2) << '\n'
              << "  max link load            "
              << (link_capacities ? scientific(q.max_link_load) + " (traffic per bit/s)" : "n/a (no link bandwidths)")
              << "\n\n";
    std::printf("  %-16s %9s %8s %8s %12s %10s %10s\n", "node", "capacity", "target", "share", "load",
                "traffic", in.net ? "neurons" : "vertices");
    for (std::size_t i = 0; i < cluster.size(); ++i) {
        std::printf("  %-16s %9.3g %7.2f%% %7.2f%% %12lld %10lld %10zu\n", cluster.names[i].c_str(),
                    cluster.capacity[i], 100 * cluster.capacity[i] / capacity_sum,
                    total > 0 ? 100 * static_cast<double>(q.load[i]) / total : 0.0,
                    static_cast<long long>(q.load[i]), static_cast<long long>(q.traffic[i]), count[i]);
    }
    if (link_capacities) {
        std::printf("\n  %-33s %14s %10s %10s\n", "link", "bandwidth", "traffic", "load");
        for (std::size_t l = 0; l < cluster.links.size(); ++l) {
            const auto load = link_load(cluster, q, l);
            const std::string ends = cluster.names[cluster.links[l].first] + " - " + cluster.names[cluster.links[l].second];
            std::printf("  %-33s %14s %10lld %10s\n", ends.c_str(),
                        load ? protocol::rate_human(cluster.link_capacity[l]).c_str() : "unknown",
                        static_cast<long long>(q.link_traffic[l]), load ? scientific(*load).c_str() : "-");
        }
    }
    if (!q.violations.empty()) {
        std::cout << "\nedges between unlinked nodes";
        if (q.violation_count > q.violations.size()) std::cout << " (first " << q.violations.size() << ")";
        std::cout << ":\n";
        for (const auto& e : q.violations) {
            std::cout << "  " << vertex_name(in, e.u) << " (" << cluster.names[e.node_u] << ") - "
                      << vertex_name(in, e.v) << " (" << cluster.names[e.node_v] << "), weight " << e.weight
                      << '\n';
        }
    }
    if (!o.output.empty()) std::cout << "\nassignment written to " << o.output << '\n';
    return 0;
}

}  // namespace

void add_partition(CLI::App& app, action& chosen) {
    auto o = std::make_shared<partition_cli_options>();
    auto* cmd = app.add_subcommand("partition", "Partition a METIS .graph or a DNNC network over a cluster");
    cmd->add_option("file", o->file, "A METIS .graph file or a DNNC .xml document")->required();
    auto* parts = cmd->add_option("--parts", o->parts, "K nodes of capacity 1, all linked");
    auto* cluster = cmd->add_option("--cluster", o->cluster_file, "A DNNC document whose <cluster> to use");
    parts->excludes(cluster);
    cmd->add_option("--strategy", o->strategy, "multilevel (default) or mincut (the original method)")
        ->check(CLI::IsMember({"multilevel", "mincut"}));
    cmd->add_option("--quality", o->quality,
                    "Multilevel effort: fast (default) or strong (iterated V-cycles: less cut in 2-16x the time)");
    cmd->add_option("--imbalance", o->imbalance, "Allowed imbalance epsilon (default 0.03)");
    cmd->add_option("--seed", o->seed, "Random seed of the multilevel strategy (default 1)");
    cmd->add_flag("--json", o->json, "Report as JSON");
    cmd->add_option("-o,--output", o->output,
                    "Write the node of every vertex (.graph: one per line; DNNC: neuron,node CSV)");
    cmd->callback([o, parts, &chosen] {
        o->parts_given = parts->count() > 0;
        chosen = [o] { return run_partition(*o); };
    });
}

}  // namespace dnnc::cli
