// dnnc export (--lead HOST:PORT | FILE) [--format graphml|dot|json] -o OUT [--max-synapses N]
// Writes a network for people to look at (docs/export.md). FILE is a DNNC document or a
// snapshot (.xml or .dnncs); --lead takes a snapshot of the frozen network the lead runs.
// A <state> gives the current values; a <cluster> gives the node of every neuron, placed
// as the lead places them. The format defaults to the one OUT's extension names; `-o -`
// writes to standard output.
#include "client.hpp"
#include "commands.hpp"

#include "dnnc/plan/plan.hpp"
#include "dnnc/core/error.hpp"
#include "dnnc/protocol/export.hpp"
#include "dnnc/protocol/snapshot.hpp"
#include "dnnc/protocol/xml.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

namespace dnnc::cli {
namespace {

struct export_cli_options {
    std::string file;
    std::string lead;
    std::string format;
    std::string output;
    std::uint64_t max_synapses = 0;
    client_options client;
};

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

protocol::export_format format_of(const export_cli_options& o) {
    if (!o.format.empty()) return protocol::parse_export_format(o.format);
    if (ends_with(o.output, ".graphml")) return protocol::export_format::graphml;
    if (ends_with(o.output, ".dot") || ends_with(o.output, ".gv")) return protocol::export_format::dot;
    if (ends_with(o.output, ".json")) return protocol::export_format::json;
    throw usage_error("export: give --format graphml, dot or json (" + o.output + " does not name one)");
}

model::document input_of(const export_cli_options& o) {
    if (!o.lead.empty()) return fetch_snapshot(o.client, o.lead);
    if (protocol::is_binary_snapshot_path(o.file)) return protocol::load_snapshot(o.file);
    model::document doc = protocol::load_document(o.file);
    if (!doc.net) throw usage_error("export: " + o.file + " has no <network>");
    return doc;
}

void write(const export_cli_options& o, const model::network& compact, const model::expanded_network& net,
           const model::snapshot_state* state, const protocol::node_assignment* nodes,
           const protocol::export_options& options) {
    if (o.output == "-") {
        protocol::export_network(std::cout, compact, net, state, nodes, options);
        return;
    }
    std::ofstream out(o.output, std::ios::binary);
    if (!out) throw io_error("export: cannot write " + o.output);
    try {
        protocol::export_network(out, compact, net, state, nodes, options);
    } catch (...) {
        out.close();
        std::remove(o.output.c_str());
        throw;
    }
}

int run_export(const export_cli_options& o) {
    protocol::export_options options;
    options.format = format_of(o);
    options.max_dot_synapses = o.max_synapses;
    model::document doc = input_of(o);
    options.half_weights = doc.run && doc.run->half_weights;
    const std::optional<model::snapshot_state> state = std::move(doc.state);
    if (doc.clu) {
        plan::network_plan plan = plan::plan_network(std::move(doc));
        protocol::node_assignment nodes;
        for (const auto& node : plan.doc.clu->nodes) nodes.node_ids.push_back(node.id);
        nodes.node_of = std::move(plan.node_of_neuron);
        write(o, *plan.doc.net, plan.net, state ? &*state : nullptr, &nodes, options);
    } else {
        write(o, *doc.net, plan::neurons_and_dense_blocks(*doc.net, doc.file), state ? &*state : nullptr, nullptr, options);
    }
    if (o.output != "-") {
        std::cout << "exported " << (o.lead.empty() ? o.file : "the network at " + o.lead) << " as "
                  << protocol::to_string(options.format) << " to " << o.output << '\n';
    }
    return 0;
}

}  // namespace

void add_export(CLI::App& app, action& chosen) {
    auto o = std::make_shared<export_cli_options>();
    auto* cmd = app.add_subcommand("export", "Write a network with its current values as GraphML, DOT or JSON");
    auto* file = cmd->add_option("file", o->file, "A DNNC document or snapshot (.xml or .dnncs)");
    auto* lead = cmd->add_option("--lead", o->lead, "Export the frozen network this lead runs (HOST:PORT)");
    file->excludes(lead);
    cmd->add_option("--format", o->format, "graphml, dot or json (default: from the extension of OUT)");
    cmd->add_option("-o,--output", o->output, "Where to write (- for standard output)")->required();
    cmd->add_option("--max-synapses", o->max_synapses, "DOT only: write at most N synapses (default: all)");
    o->client.add_to(cmd);
    cmd->callback([o, file, lead, &chosen] {
        if (file->count() == 0 && lead->count() == 0) throw CLI::RequiredError("export: give FILE or --lead HOST:PORT");
        chosen = [o] { return run_export(*o); };
    });
}

}  // namespace dnnc::cli
