// dnnc cluster up|down CONFIG.xml: start or stop the config's nodes that live on this
// machine as dnnc-node processes.
#include "client.hpp"
#include "commands.hpp"

#include "dnnc/node_server/local_cluster.hpp"
#include "dnnc/node_server/node.hpp"
#include "dnnc/protocol/xml.hpp"

#include <filesystem>
#include <iostream>
#include <unistd.h>

namespace dnnc::cli {
namespace {

struct cluster_options {
    std::string file, log_level = "info", memory_limit, output_memory, tls_cert, tls_key, http_bind = "127.0.0.1";
    int http = -1;
    double silence_limit_s = 0;  // 0: the nodes' default
    client_options client;
};

model::cluster cluster_of(const std::string& file) {
    const auto doc = protocol::load_document(file);
    if (!doc.clu) throw usage_error(file + ": the document has no <cluster>");
    return *doc.clu;
}

int run_up(const cluster_options& o) {
    const auto clu = cluster_of(o.file);
    node_server::launch_options launch;
    launch.node_binary = node_binary();
    launch.secret_file = o.client.secret_file;
    launch.log_level = o.log_level;
    if (!o.memory_limit.empty()) node_server::parse_byte_size(o.memory_limit);  // a bad size stops here (exit 2)
    launch.memory_limit = o.memory_limit;
    if (!o.output_memory.empty()) node_server::parse_byte_size(o.output_memory);
    launch.output_memory = o.output_memory;
    if (o.silence_limit_s > 0) launch.silence_limit = std::to_string(o.silence_limit_s);
    launch.http_port = o.http;
    launch.http_bind = o.http_bind;
    if (!o.client.secret_file.empty()) o.client.secret();  // fail early on an unreadable secret
    launch.tls = {o.tls_cert, o.tls_key, o.client.tls_ca};
    if (!launch.tls.enabled() && !(o.tls_cert.empty() && o.tls_key.empty()))
        throw usage_error("--tls-cert and --tls-key need --tls-ca, the CA that signed every node's certificate");
    if (launch.tls.enabled() && o.tls_cert.empty())
        throw usage_error("--tls-ca needs --tls-cert and --tls-key: each node serves TLS with a certificate");
    const auto started = node_server::start_local_cluster(clu, o.file, launch);
    for (const auto& n : started.nodes)
        std::cout << "node " << n.id << " up on " << n.at.text() << " (pid " << n.pid << ", log " << n.log_file << ")\n";
    std::cout << "cluster secret: " << started.secret_file << "\n";
    if (started.tls.enabled()) std::cout << "TLS: certificates signed by " << started.tls.authority << "\n";
    const auto remote = clu.nodes.size() - started.nodes.size();
    if (remote) std::cout << remote << " node(s) live on other machines; start them there with dnnc-node\n";
    return 0;
}

int run_down(const cluster_options& o) {
    const auto record = node_server::read_record(o.file);
    const auto killed = node_server::stop_local_cluster(record);
    for (const auto& n : record.nodes) {
        const bool forced = std::find(killed.begin(), killed.end(), n.id) != killed.end();
        std::cout << "node " << n.id << " down" << (forced ? " (killed: it did not stop when asked)" : "") << '\n';
    }
    return 0;
}

}  // namespace

void add_cluster(CLI::App& app, action& chosen) {
    auto o = std::make_shared<cluster_options>();
    auto* cmd = app.add_subcommand("cluster", "Start or stop the local nodes of a cluster");
    cmd->require_subcommand(1);
    auto* up = cmd->add_subcommand("up", "Start a dnnc-node for each node of CONFIG on this machine");
    up->add_option("file", o->file, "DNNC document with a <cluster>")->required();
    up->add_option("--log-level", o->log_level, "The nodes' log level");
    up->add_option("--memory-limit", o->memory_limit, "The most memory each node's share may need, e.g. 8G");
    up->add_option("--output-memory", o->output_memory, "The most memory the lead's unread output rows may take, e.g. 64M");
    up->add_option("--silence-limit", o->silence_limit_s,
                   "Seconds a node may stay silent while another waits for it to install, restore or capture a share (default 10)")
        ->check(CLI::PositiveNumber);
    up->add_option("--http", o->http, "Every node serves the live page: the lead on this port, the others on the next ones (0: free ones; dnnc status names the lead's)")
        ->check(CLI::Range(0, 65535));
    up->add_option("--http-bind", o->http_bind, "Address of the live page (default 127.0.0.1)");
    up->add_option("--tls-cert", o->tls_cert, "Serve and speak TLS with this certificate (PEM; with --tls-key and --tls-ca)");
    up->add_option("--tls-key", o->tls_key, "The private key of --tls-cert (PEM)");
    o->client.add_to(up);
    up->callback([o, &chosen] { chosen = [o] { return run_up(*o); }; });
    auto* down = cmd->add_subcommand("down", "Stop the nodes `cluster up` started for CONFIG");
    down->add_option("file", o->file, "The same DNNC document")->required();
    down->callback([o, &chosen] { chosen = [o] { return run_down(*o); }; });
}

}  // namespace dnnc::cli
