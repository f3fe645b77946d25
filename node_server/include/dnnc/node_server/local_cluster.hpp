#pragma once
// Local clusters: the nodes of a cluster that live on this machine (127.0.0.0/8), started
// as dnnc-node processes and recorded so that a later command can stop them.
#include "dnnc/model/model.hpp"
#include "dnnc/node_server/peer_client.hpp"
#include "dnnc/node_server/tls.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace dnnc::node_server {

// True for 127.0.0.0/8, ::1 and "localhost".
bool is_loopback_host(const std::string& host);

std::vector<const model::cluster_node*> local_nodes(const model::cluster& clu);

struct started_node {
    std::string id;
    endpoint at;
    int pid = 0;
    std::string log_file;
};

struct local_cluster {
    std::string config;  // absolute path of the document it was started from
    std::vector<started_node> nodes;
    std::string secret_file;  // absolute path of the cluster secret every node was given
    tls_files tls;            // absolute paths; none when the nodes do not use TLS
};

struct launch_options {
    std::string node_binary;  // dnnc-node
    std::string secret_file;  // passed on to every node; empty: a new random one (secure by default)
    std::string log_level = "info";
    std::string memory_limit;  // passed on to every node (dnnc-node --memory-limit), when set
    std::string output_memory;  // passed on to every node (dnnc-node --output-memory), when set
    std::string silence_limit;  // passed on to every node (dnnc-node --silence-limit), when set
    tls_files tls;              // passed on to every node (dnnc-node --tls-*), when set
    // >= 0: every node serves the live page (dnnc-node --http, --http-bind): the lead on this
    // port, the other nodes on the ports after it in the document's order; 0: each a free one.
    int http_port = -1;
    std::string http_bind = "127.0.0.1";
    std::chrono::milliseconds ready_timeout{15000};
    // > 0: the process starting the nodes (dnnc run, the Python module), which each node
    // outlives by a moment only (dnnc-node --owner): a starter killed leaves no node behind.
    // 0 (dnnc cluster up): the nodes run until they are stopped.
    int owner_pid = 0;
};

// Where the record of the cluster started from `config_path` lives.
std::string record_path(const std::string& config_path);

// A node's environment: `environment` (NAME=VALUE entries) with glibc's malloc told to back
// its large blocks with transparent huge pages (glibc.malloc.hugetlb=1, where the kernel
// leaves THP to madvise, as Debian's does): a node fills hundreds of MB of fresh memory at an
// install of 10^7 listed connections, and 4 KiB page faults were nearly half of its time
// there. A GLIBC_TUNABLES that already names the setting is kept as it is.
std::vector<std::string> with_huge_pages(std::vector<std::string> environment);

// Starts a dnnc-node for every local node of `clu` (with_huge_pages of this process's
// environment), each in its own session with its log
// in the record's folder and the cluster secret (the launch's, or a new random one written
// to the record's folder with mode 0600), and waits until each answers with its own pid (a node with port 0
// picks a free port; the result holds the port it printed). Fails (stopping what it started)
// when a port is taken or a node exits or stays silent. Writes the record.
local_cluster start_local_cluster(const model::cluster& clu, const std::string& config_path,
                                  const launch_options& options);

// Reads the record written by start_local_cluster; throws io_error when there is none.
local_cluster read_record(const std::string& config_path);

// What stopping a cluster leaves behind: nothing, or the nodes' logs (to read why it failed).
enum class node_logs { remove, keep };

// Asks each node to shut down, then escalates to SIGTERM and SIGKILL for those still
// running; removes the record, and the record's folder with the logs unless they are kept.
// Returns the ids of nodes that had to be killed.
std::vector<std::string> stop_local_cluster(const local_cluster& cluster, node_logs logs = node_logs::remove);

// The local cluster (recorded by start_local_cluster for this user) that has a node at
// `at`, if any: commands aimed at a local node find its secret and TLS CA there, and need
// no --secret-file or --tls-ca.
std::optional<local_cluster> recorded_cluster_at(const endpoint& at);

// A client of the cluster's nodes: its secret and, when its nodes use TLS, its CA.
std::unique_ptr<peer_client> client_of(const local_cluster& cluster);

}  // namespace dnnc::node_server
