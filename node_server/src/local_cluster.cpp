#include "dnnc/node_server/local_cluster.hpp"

#include "dnnc/core/files.hpp"
#include "dnnc/node_server/secret.hpp"
#include "dnnc/protocol/frame.hpp"
#include "dnnc/protocol/status.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <nlohmann/json.hpp>

#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace dnnc::node_server {

namespace fs = std::filesystem;
using json = nlohmann::json;

bool is_loopback_host(const std::string& host) {
    if (host == "localhost") return true;
    boost::system::error_code ec;
    const auto address = boost::asio::ip::make_address(host, ec);
    return !ec && address.is_loopback();
}

std::vector<const model::cluster_node*> local_nodes(const model::cluster& clu) {
    std::vector<const model::cluster_node*> result;
    for (const auto& node : clu.nodes)
        if (is_loopback_host(node.host)) result.push_back(&node);
    return result;
}

namespace {

fs::path records_base() {
    const char* runtime = std::getenv("XDG_RUNTIME_DIR");
    return runtime && *runtime ? fs::path(runtime) : fs::temp_directory_path();
}

std::string records_prefix() { return "dnnc-cluster-" + std::to_string(getuid()) + "-"; }

fs::path record_dir(const std::string& config_path) {
    const std::string absolute = fs::absolute(config_path).lexically_normal().string();
    return records_base() / (records_prefix() + protocol::sha256_hex(absolute).substr(0, 16));
}

// The record in `file`; io_error when it cannot be read or is damaged. A record lists a
// cluster's nodes: one of more than 1 MiB is not one that dnnc wrote.
local_cluster read_record_file(const std::string& file) {
    std::string text;
    try {
        text = read_file(file, 1 << 20);
    } catch (const config_error& e) {
        throw io_error(std::string("the cluster record cannot be read: ") + e.what());
    }
    try {
        const json j = json::parse(text);
        local_cluster cluster{j.at("config").get<std::string>(), {}, j.value("secret_file", std::string()), {}};
        if (const auto tls = j.find("tls"); tls != j.end())
            cluster.tls = {tls->at("certificate").get<std::string>(), tls->at("key").get<std::string>(),
                           tls->at("authority").get<std::string>()};
        for (const auto& n : j.at("nodes"))
            cluster.nodes.push_back({n.at("id").get<std::string>(),
                                     {n.at("host").get<std::string>(), n.at("port").get<std::uint16_t>()},
                                     n.at("pid").get<int>(), n.at("log").get<std::string>()});
        return cluster;
    } catch (const json::exception& e) {
        throw io_error("the cluster record " + file + " is damaged: " + e.what());
    }
}

// The pid of the process that answers on `at`, or 0 when nothing answers.
int pid_answering(peer_client& client, const endpoint& at, std::chrono::milliseconds timeout) {
    try {
        const auto reply = client.call(at, protocol::frame{protocol::message_type::status, 0, 0, {}}, timeout);
        return static_cast<int>(protocol::decode_node_status(json::parse(reply.payload)).pid);
    } catch (const std::exception&) {
        client.forget(at);
        return 0;
    }
}

// The port a node started with --port 0 printed ("dnnc-node listening on HOST:PORT"), or 0.
std::uint16_t printed_port(const std::string& log_file) {
    static const std::string banner = "dnnc-node listening on ";
    std::ifstream in(log_file);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(banner, 0) != 0) continue;
        const auto colon = line.rfind(':');
        try {
            return static_cast<std::uint16_t>(std::stoi(line.substr(colon + 1)));
        } catch (const std::exception&) {
            return 0;
        }
    }
    return 0;
}

// Whether anything accepts a connection on `at`: a node of any cluster (whatever its
// secret) or another program.
bool port_taken(const endpoint& at) {
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket socket(io);
    boost::system::error_code ec;
    const auto address = boost::asio::ip::make_address(at.host == "localhost" ? "127.0.0.1" : at.host, ec);
    if (ec) return false;
    socket.connect({address, at.port}, ec);
    return !ec;
}

bool running(int pid) {
    if (pid <= 0) return false;
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return false;  // our child, now reaped
    return kill(pid, 0) == 0;
}

std::string tail_of(const std::string& file) {
    std::ifstream in(file);
    std::string line, last;
    while (std::getline(in, line))
        if (!line.empty()) last = line;
    return last;
}

// `http_port` >= 0: the node serves the live page on it (0: a free one).
int spawn_node(const launch_options& options, const model::cluster_node& node, const std::string& log_file, int http_port) {
    std::vector<std::string> args{options.node_binary, "--bind", node.host == "localhost" ? "127.0.0.1" : node.host,
                                  "--port", std::to_string(node.port), "--log-level", options.log_level};
    if (!options.secret_file.empty()) args.insert(args.end(), {"--secret-file", fs::absolute(options.secret_file).string()});
    if (!options.memory_limit.empty()) args.insert(args.end(), {"--memory-limit", options.memory_limit});
    if (!options.output_memory.empty()) args.insert(args.end(), {"--output-memory", options.output_memory});
    if (!options.silence_limit.empty()) args.insert(args.end(), {"--silence-limit", options.silence_limit});
    if (http_port >= 0) args.insert(args.end(), {"--http", std::to_string(http_port), "--http-bind", options.http_bind});
    if (options.owner_pid > 0) args.insert(args.end(), {"--owner", std::to_string(options.owner_pid)});
    if (options.tls.enabled())
        args.insert(args.end(), {"--tls-cert", options.tls.certificate, "--tls-key", options.tls.key, "--tls-ca", options.tls.authority});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) env.emplace_back(*e);
    env = with_huge_pages(std::move(env));
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    // Its own session: a Ctrl-C meant for the command that started it does not reach it.
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, options.node_binary.c_str(), &actions, &attributes, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (rc != 0) throw io_error("cannot start " + options.node_binary + ": " + std::strerror(rc));
    return pid;
}

void write_record(const local_cluster& cluster) {
    json nodes = json::array();
    for (const auto& n : cluster.nodes)
        nodes.push_back({{"id", n.id}, {"host", n.at.host}, {"port", n.at.port}, {"pid", n.pid}, {"log", n.log_file}});
    const fs::path file = record_path(cluster.config);
    const fs::path temporary = file.string() + ".tmp";
    json record{{"config", cluster.config}, {"nodes", nodes}, {"secret_file", cluster.secret_file}};
    if (cluster.tls.enabled())
        record["tls"] = {{"certificate", cluster.tls.certificate}, {"key", cluster.tls.key}, {"authority", cluster.tls.authority}};
    std::ofstream(temporary) << record.dump(2) << '\n';
    fs::rename(temporary, file);
}

}  // namespace

std::string record_path(const std::string& config_path) { return (record_dir(config_path) / "cluster.json").string(); }

std::vector<std::string> with_huge_pages(std::vector<std::string> environment) {
    const std::string name = "GLIBC_TUNABLES=", setting = "glibc.malloc.hugetlb=1";
    for (auto& entry : environment)
        if (entry.rfind(name, 0) == 0) {
            if (entry.find("glibc.malloc.hugetlb") == std::string::npos) entry += (entry.size() > name.size() ? ":" : "") + setting;
            return environment;
        }
    environment.push_back(name + setting);
    return environment;
}

local_cluster start_local_cluster(const model::cluster& clu, const std::string& config_path,
                                  const launch_options& options) {
    const auto local = local_nodes(clu);
    if (local.empty()) throw usage_error("the cluster has no node on this machine (127.0.0.0/8)");
    if (options.http_port > 0 && options.http_port + static_cast<int>(local.size()) - 1 > 65535)
        throw usage_error("--http " + std::to_string(options.http_port) + ": the " + std::to_string(local.size()) +
                          " nodes' pages need the ports after it, past 65535");
    // Nothing of a cluster that is up changes: its record, secret and logs stay as they are,
    // and no node is started on a port that something holds.
    if (fs::exists(record_path(config_path))) {
        std::string up;
        try {
            for (const auto& n : read_record(config_path).nodes)
                if (running(n.pid) && port_taken(n.at)) up += (up.empty() ? "" : ", ") + n.id + " on " + n.at.text();
        } catch (const io_error&) {
            // A damaged record is replaced below.
        }
        if (!up.empty())
            throw usage_error("a cluster of " + config_path + " is already up (" + up + "); `dnnc cluster down " + config_path +
                              "` stops it");
    }
    for (const auto* node : local) {
        const endpoint at{node->host, static_cast<std::uint16_t>(node->port)};
        if (at.port != 0 && port_taken(at))
            throw io_error("node '" + node->id + "': something already answers on " + at.text() +
                           " (a cluster still up? try `dnnc cluster down`)");
    }
    if (options.tls.enabled()) tls_config::load(options.tls);  // a bad file is named here, before anything is written
    const fs::path dir = record_dir(config_path);
    fs::create_directories(dir);
    launch_options launch = options;
    if (launch.secret_file.empty()) {
        // Secure by default: a secret of this cluster's own, which only this user can read.
        launch.secret_file = (dir / "secret").string();
        std::error_code ignored;
        fs::remove(launch.secret_file, ignored);
        write_new_secret_file(launch.secret_file);
    }
    launch.secret_file = fs::absolute(launch.secret_file).string();
    if (launch.tls.enabled())
        for (auto* file : {&launch.tls.certificate, &launch.tls.key, &launch.tls.authority}) *file = fs::absolute(*file).string();
    local_cluster cluster{fs::absolute(config_path).lexically_normal().string(), {}, launch.secret_file, launch.tls};
    const auto owned_client = client_of(cluster);
    peer_client& client = *owned_client;
    const std::string lead_id = clu.lead.empty() && !clu.nodes.empty() ? clu.nodes.front().id : clu.lead;
    // Every node serves the page, so that the standby has one when it takes over: the lead
    // on the port asked for, the others on the ports after it (or each a free one, with 0).
    int next_page_port = options.http_port + 1;
    try {
        for (const auto* node : local) {
            const endpoint at{node->host, static_cast<std::uint16_t>(node->port)};
            const std::string log_file = (dir / (node->id + ".log")).string();
            const int page_port = options.http_port <= 0 || node->id == lead_id ? options.http_port : next_page_port++;
            cluster.nodes.push_back({node->id, at, spawn_node(launch, *node, log_file, page_port), log_file});
        }
        // Ready means: our own process answers. Another process answering on the port (one
        // that took it after the check above) is not ours; our node then fails to bind and exits.
        const auto deadline = std::chrono::steady_clock::now() + options.ready_timeout;
        for (auto& n : cluster.nodes) {
            while (true) {
                if (n.at.port == 0) n.at.port = printed_port(n.log_file);
                if (n.at.port != 0 && pid_answering(client, n.at, std::chrono::milliseconds(500)) == n.pid) break;
                if (!running(n.pid))
                    throw io_error("node '" + n.id + "' exited while starting: " + tail_of(n.log_file) + " (log: " +
                                   n.log_file + ")");
                if (std::chrono::steady_clock::now() > deadline)
                    throw io_error("node '" + n.id + "' did not answer on " + n.at.text() + " in time (log: " + n.log_file + ")");
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
        }
    } catch (...) {
        for (const auto& n : cluster.nodes)
            if (running(n.pid)) kill(n.pid, SIGKILL), waitpid(n.pid, nullptr, 0);
        throw;
    }
    write_record(cluster);
    return cluster;
}

local_cluster read_record(const std::string& config_path) {
    const std::string file = record_path(config_path);
    if (!fs::exists(file)) throw io_error("no local cluster is recorded for " + config_path + " (" + file + ")");
    return read_record_file(file);
}

std::unique_ptr<peer_client> client_of(const local_cluster& cluster) {
    return std::make_unique<peer_client>(cluster.secret_file.empty() ? std::string() : read_secret_file(cluster.secret_file),
                                         protocol::default_max_payload,
                                         cluster.tls.enabled() ? tls_config::load(cluster.tls) : nullptr);
}

std::optional<local_cluster> recorded_cluster_at(const endpoint& at) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(records_base(), ec)) {
        if (entry.path().filename().string().rfind(records_prefix(), 0) != 0) continue;
        const auto file = (entry.path() / "cluster.json").string();
        if (!fs::exists(file)) continue;
        try {
            const auto cluster = read_record_file(file);
            for (const auto& n : cluster.nodes)
                if (n.at.port == at.port && (n.at.host == at.host || (is_loopback_host(n.at.host) && is_loopback_host(at.host))))
                    return cluster;
        } catch (const io_error&) {
            // Another cluster's damaged record says nothing about this address.
        }
    }
    return std::nullopt;
}

std::vector<std::string> stop_local_cluster(const local_cluster& cluster, node_logs logs) {
    const auto owned_client = client_of(cluster);
    peer_client& client = *owned_client;
    for (const auto& n : cluster.nodes) {
        // Only our own process: after a crash the port may serve someone else's node.
        if (pid_answering(client, n.at, std::chrono::milliseconds(2000)) != n.pid) continue;  // signals below
        try {
            client.call(n.at, protocol::frame{protocol::message_type::shutdown, 0, 0, {}}, std::chrono::milliseconds(2000));
        } catch (const std::exception&) {
            // Not answering: the signals below take care of it.
        }
    }
    std::vector<std::string> killed;
    for (const auto& n : cluster.nodes) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
        while (running(n.pid) && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (!running(n.pid)) continue;
        kill(n.pid, SIGTERM);
        const auto hard = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        while (running(n.pid) && std::chrono::steady_clock::now() < hard)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (running(n.pid)) kill(n.pid, SIGKILL);
        killed.push_back(n.id);
    }
    std::error_code ignored;
    fs::remove(record_path(cluster.config), ignored);
    if (logs == node_logs::remove) fs::remove_all(record_dir(cluster.config), ignored);
    return killed;
}

}  // namespace dnnc::node_server
