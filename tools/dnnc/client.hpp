#pragma once
// What the commands that talk to a running cluster share: the secret option and calls.
#include "dnnc/node_server/peer_client.hpp"
#include "dnnc/node_server/secret.hpp"

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

namespace dnnc::cli {

struct client_options {
    std::string secret_file;
    double timeout_s = 120;

    void add_to(CLI::App* cmd) {
        cmd->add_option("--secret-file", secret_file, "Cluster secret: authenticate every frame");
        cmd->add_option("--timeout", timeout_s, "Seconds to wait for the answer")->check(CLI::PositiveNumber);
    }
    std::string secret() const { return secret_file.empty() ? std::string() : node_server::read_secret_file(secret_file); }
    std::chrono::milliseconds timeout() const { return std::chrono::milliseconds(static_cast<long>(timeout_s * 1000)); }
};

// One request to a node and its reply. A node that cannot be reached is a runtime failure
// (exit 1); its refusal (error_reply) is reported as it said it.
protocol::frame call_node(const client_options& o, const std::string& address, protocol::frame request);

}  // namespace dnnc::cli
