// dnnc submit CONFIG.xml [--cluster C.xml] --to HOST:PORT [--replace]: the receiving node becomes the lead,
// partitions, measures links, fans the node configs out, and answers once every node has
// acknowledged.
#include "client.hpp"
#include "commands.hpp"

#include "dnnc/protocol/xml.hpp"

#include <nlohmann/json.hpp>

#include <iostream>

namespace dnnc::cli {
namespace {

struct submit_options {
    std::string file, cluster_file, to;
    bool replace = false, json = false;
    client_options client;
};

int run_submit(const submit_options& o) {
    // Checked here first, so that mistakes get located messages and exit code 2.
    model::document doc = protocol::load_document(o.file);
    if (!o.cluster_file.empty()) {
        const auto c = protocol::load_document(o.cluster_file);
        if (!c.clu) throw usage_error(o.cluster_file + ": the document has no <cluster>");
        doc.clu = c.clu;
    }
    if (!doc.net || !doc.clu) throw usage_error(o.file + ": a submitted document needs a <network> and a <cluster>");
    const auto reply = call_node(o.client, o.to,
                                 {protocol::message_type::submit, o.replace ? protocol::replace_flag : std::uint16_t{0}, 0,
                                  submission_of(std::move(doc))});
    const auto summary = nlohmann::json::parse(reply.payload);
    if (o.json) {
        std::cout << summary.dump(2) << '\n';
        return 0;
    }
    std::cout << "network '" << summary["network"].get<std::string>() << "' runs on " << summary["nodes"].size()
              << " nodes, lead " << summary["lead"].get<std::string>() << " (" << o.to << ")\n";
    for (const auto& n : summary["nodes"])
        std::cout << "  " << n["id"].get<std::string>() << ": " << n["neurons"] << " neurons, config "
                  << n["hash"].get<std::string>().substr(0, 12) << '\n';
    if (summary.contains("placement")) std::cout << "  " << summary["placement"].get<std::string>() << '\n';
    return 0;
}

}  // namespace

void add_submit(CLI::App& app, action& chosen) {
    auto o = std::make_shared<submit_options>();
    auto* cmd = app.add_subcommand("submit", "Send a DNNC document to a node, which becomes its lead");
    cmd->add_option("file", o->file, "DNNC document with a network and a cluster")->required();
    cmd->add_option("--cluster", o->cluster_file, "Use this document's <cluster> instead");
    cmd->add_option("--to", o->to, "HOST:PORT of the node that becomes the lead")->required();
    cmd->add_flag("--replace", o->replace, "Replace the network the nodes already serve");
    cmd->add_flag("--json", o->json, "Print the lead's summary as JSON");
    o->client.add_to(cmd);
    cmd->callback([o, &chosen] { chosen = [o] { return run_submit(*o); }; });
}

}  // namespace dnnc::cli
