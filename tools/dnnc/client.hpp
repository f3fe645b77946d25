#pragma once
// What the commands that talk to a running cluster share: the secret option and calls.
#include "dnnc/model/model.hpp"
#include "dnnc/node_server/peer_client.hpp"
#include "dnnc/node_server/secret.hpp"
#include "dnnc/protocol/control_plane.hpp"
#include "dnnc/protocol/csv.hpp"
#include "dnnc/protocol/status.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace dnnc::cli {

struct client_options {
    std::string secret_file;
    std::string tls_ca;  // PEM of the CA that signed the nodes' certificates: speak TLS
    double timeout_s = 120;

    void add_to(CLI::App* cmd) {
        cmd->add_option("--secret-file", secret_file, "Cluster secret: authenticate every frame");
        cmd->add_option("--tls-ca", tls_ca, "Speak TLS to nodes whose certificates this CA signed (PEM)");
        cmd->add_option("--timeout", timeout_s,
                        "Seconds to wait for the answer (for a submit or a snapshot: seconds the lead may stay silent while it works)")
            ->check(CLI::PositiveNumber);
    }
    std::string secret() const { return secret_file.empty() ? std::string() : node_server::read_secret_file(secret_file); }
    // A client for talking to `address`, with --secret-file's secret and --tls-ca's CA, or
    // else those of the local cluster this user started with a node there
    // (local_cluster.hpp), or none.
    std::unique_ptr<node_server::peer_client> client_for(const std::string& address) const;
    // The secret client_for uses for `address`; empty when none.
    std::string secret_for(const std::string& address) const;
    // The client of `address` that call_node uses: made by client_for at the first call and
    // kept, with its connection, by these options and their copies (a script's many short
    // runs pay for a connection once).
    node_server::peer_client& kept_client_for(const std::string& address) const;
    std::chrono::milliseconds timeout() const { return std::chrono::milliseconds(static_cast<long>(timeout_s * 1000)); }

private:
    struct kept_clients {
        std::mutex mutex;
        std::map<std::string, std::unique_ptr<node_server::peer_client>> by_address;
    };
    std::shared_ptr<kept_clients> kept_ = std::make_shared<kept_clients>();
};

// One request to a node and its reply. A node that cannot be reached is a runtime failure
// (exit 1); its refusal (error_reply) is reported as it said it. A submit or a snapshot
// waits as long as the node answers heartbeats (peer_client::call_while_alive).
protocol::frame call_node(const client_options& o, const std::string& address, protocol::frame request);

// The dnnc-node executable, installed (and built) beside dnnc.
std::string node_binary();

// The text sent to a lead for `doc`: weight files named relative to the document become
// absolute, since the lead reads them.
std::string submission_of(model::document doc);

// Installs the binary snapshot `path` on the cluster of the node `to` (which becomes the lead),
// its document as `adjust` leaves it (another cluster, ...): uploaded in 1 MiB pieces,
// rewritten a state at a time first when its document changes, and installed by name, so
// that neither the client nor the lead holds more than a piece and a state. Returns the
// lead's summary.
nlohmann::json restore_binary_snapshot(const client_options& o, const std::string& to, const std::string& path, bool replace,
                                       const std::function<void(model::document&)>& adjust);

// The frozen network's binary snapshot, read from the lead piece by piece into `path`,
// which takes the name only once its checksum and states have been checked: the client
// holds one piece, whatever the snapshot's size. Returns its document (checked; its state
// holds the tick).
model::document download_snapshot(const client_options& o, const std::string& lead, const std::string& path);

// A snapshot of the frozen network the lead runs: its document with a <state>.
model::document fetch_snapshot(const client_options& o, const std::string& lead);

// Saves the frozen network the lead runs to `path` (binary for .dnncs, else XML, which holds
// the whole state at once), checked before anything takes the name.
struct saved_snapshot {
    std::string network;
    std::int64_t tick = 0;
    std::uint64_t neurons = 0;
};
saved_snapshot save_snapshot_of(const client_options& o, const std::string& lead, const std::string& path);

// Updates the frozen network the lead runs to `doc`'s parameters (protocol/update.hpp);
// returns the lead's reply {"tick", "nodes"}.
nlohmann::json update_network(const client_options& o, const std::string& lead, const model::document& doc);

// Adds `add` members to population `population` of the running network (docs/document.md,
// "Growing populations") through the lead's grow command; returns its reply {"population",
// "added", "size", "first_new", "tick", "paused_ms"}. An add below 1 is a usage_error, and
// nothing is sent.
nlohmann::json grow_population(const client_options& o, const std::string& lead, const std::string& population, std::int64_t add);

// Re-placing the running network's neurons (docs/simulation.md, "Re-balancing, and nodes
// that join and leave"): from where they are, with the nodes' capacities changed first;
// unless a dry run, applied when anything moves. Returns the lead's reply {"moved",
// "nodes": [{"id", "before", "after"}], "edge_cut": {"before", "after"}, "tick", "applied",
// "paused_ms"}. A capacity that is not a finite number > 0 or a migration weight that is not
// a finite number >= 0 is a usage_error, and nothing is sent.
struct rebalance_request {
    bool dry_run = false;
    std::optional<double> migration_weight;  // none: the lead's default
    std::map<std::string, double> capacity;  // node id -> its new capacity
};
nlohmann::json rebalance(const client_options& o, const std::string& lead, const rebalance_request& request);
// `node` ("ID@HOST:PORT", a node serving no network, with the cluster's secret) joins the
// running cluster, linked to `links` (none: the lead), and takes its share of the neurons.
// Returns the lead's reply {"joined", "tick", "moved", "nodes", "paused_ms"}.
nlohmann::json join_node(const client_options& o, const std::string& lead, const std::string& node, double capacity,
                         const std::vector<std::string>& links);
// Node `id`'s neurons move to the others and it leaves the running cluster, released.
// Returns the lead's reply {"drained", "released", "tick", "moved", "nodes", "paused_ms"}.
nlohmann::json drain_node(const client_options& o, const std::string& lead, const std::string& id);

// A command to the lead, checked as the lead checks it (usage_error) before it is sent;
// returns the lead's JSON reply. The second form: a command of no fields (recover, ...).
nlohmann::json control(const client_options& o, const std::string& lead, const protocol::control_request& command);
nlohmann::json control(const client_options& o, const std::string& lead, protocol::control_request::kind what);
// A command whose reply says where the run is (progress, start, resume, step): that reply,
// decoded (protocol_error when it is not one). The second form: where the run is now.
protocol::run_progress progress_after(const client_options& o, const std::string& lead, const protocol::control_request& command);
protocol::run_progress progress_of(const client_options& o, const std::string& lead);
// The status of the node at `address` (of its cluster, too, when it is a lead).
protocol::node_status status_of(const client_options& o, const std::string& address);

// Prints the rows of the lead's output reply as CSV (a header first with `header`), or as a
// spike raster `tick(,lane),neuron` of the non-zero values; returns the tick after the last
// row printed (0 when there was none).
std::int64_t print_output_rows(std::ostream& out, const nlohmann::json& reply, bool raster, bool header);

// Reads the output rows from the lead as ticks complete and prints them (print_output_rows).
// The lead holds the newest rows only: rows it dropped before they were read are counted
// as missed, and said on standard error where the gap is.
class output_reader {
public:
    // Takes a reply of the lead's output command and whether it is the first; returns the
    // tick after its last row (0 when it has none), as print_output_rows does.
    using sink = std::function<std::int64_t(const nlohmann::json& reply, bool first)>;

    output_reader(const client_options& o, const std::string& lead, std::int64_t from, std::ostream& out, bool raster);
    // Hands each reply to `to` instead of printing it.
    output_reader(const client_options& o, const std::string& lead, std::int64_t from, sink to);
    // Prints every row complete now; returns the run's state ("failed" when it failed).
    std::string read();
    // Reads from another lead from here on (one that took over the run).
    void follow(const std::string& lead) { lead_ = node_server::parse_endpoint(lead); }
    // Reads until tick `last` is printed, or the lead has no more.
    void read_through(std::int64_t last);
    std::int64_t next() const { return next_; }  // the first tick not printed yet
    std::int64_t completed() const { return completed_; }
    std::int64_t missed() const { return missed_; }

private:
    const client_options& options_;
    node_server::endpoint lead_;
    std::unique_ptr<node_server::peer_client> client_;
    sink sink_;
    bool header_ = true;
    std::int64_t next_, completed_ = -1, missed_ = 0;
};

// When the lead at `lost` stops answering, its standby takes the run over (node_server's
// standby.hpp): asks `nodes` (HOST:PORT) until one says it leads network `network`, and
// returns its address; error when none does within `patience`.
std::string find_new_lead(const client_options& o, const std::vector<std::string>& nodes, const std::string& lost,
                          const std::string& network, std::chrono::milliseconds patience);

// Polls the lead until tick `target` is complete; draws a progress bar on a terminal (unless
// `bar` is false), and
// calls `each_poll` (when given) after every poll. Throws error when the run fails (a
// lockstep node died) or `interrupted` becomes true.
protocol::run_progress wait_for_tick(const client_options& o, const std::string& lead, std::int64_t target,
                                     const volatile bool* interrupted = nullptr, const std::function<void()>& each_poll = {},
                                     bool bar = true);

}  // namespace dnnc::cli
