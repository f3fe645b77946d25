// dnnc update --lead HOST:PORT FILE: the frozen network takes the parameters of FILE, a
// version of the running network that differs in parameters or weights only (protocol/update.hpp).
#include "client.hpp"
#include "commands.hpp"

#include "dnnc/model/check.hpp"
#include "dnnc/protocol/xml.hpp"

#include <iostream>

namespace dnnc::cli {
namespace {

struct update_options {
    std::string file, lead;
    client_options client;
};

int run_update(const update_options& o) {
    auto doc = protocol::load_document(o.file);
    if (!doc.net) throw usage_error(o.file + ": the document has no <network>");
    model::check_network(*doc.net);
    const auto reply = update_network(o.client, o.lead, doc);
    std::cout << "network '" << doc.net->name << "' updated on " << reply["nodes"] << " nodes: its parameters hold from tick "
              << reply["tick"] << '\n';
    return 0;
}

}  // namespace

void add_update(CLI::App& app, action& chosen) {
    auto o = std::make_shared<update_options>();
    auto* cmd = app.add_subcommand("update", "Give the frozen network new parameters (neurons, spike sources, generators, synapse models), weights or static delays");
    cmd->add_option("file", o->file, "The network with its new parameters (DNNC document)")->required();
    cmd->add_option("--lead", o->lead, "HOST:PORT of the lead")->required();
    o->client.add_to(cmd);
    cmd->callback([o, &chosen] { chosen = [o] { return run_update(*o); }; });
}

}  // namespace dnnc::cli
