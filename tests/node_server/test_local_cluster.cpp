// Local clusters: which nodes are local, and starting nodes as processes that are really
// the ones answering on their ports.
#include "dnnc/node_server/local_cluster.hpp"
#include "dnnc/node_server/secret.hpp"

#include "../tools/cluster_fixture.hpp"
#include "dnnc/core/error.hpp"
#include "dnnc/protocol/frame.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <csignal>
#include <cstring>
#include <fstream>
#include <sys/wait.h>

using namespace dnnc;

TEST_CASE("loopback hosts are recognised") {
    CHECK(node_server::is_loopback_host("127.0.0.1"));
    CHECK(node_server::is_loopback_host("127.3.2.1"));
    CHECK(node_server::is_loopback_host("::1"));
    CHECK(node_server::is_loopback_host("localhost"));
    CHECK_FALSE(node_server::is_loopback_host("10.0.0.1"));
    CHECK_FALSE(node_server::is_loopback_host("example.org"));
    CHECK_FALSE(node_server::is_loopback_host(""));
}

TEST_CASE("local nodes are those on loopback") {
    model::cluster clu;
    clu.lead = "a";
    clu.nodes = {{"a", "127.0.0.1", 7000, 1, {}}, {"b", "192.0.2.7", 7001, 1, {}},
                 {"c", "localhost", 7002, 2, {}}};
    const auto local = node_server::local_nodes(clu);
    REQUIRE(local.size() == 2);
    CHECK(local[0]->id == "a");
    CHECK(local[1]->id == "c");
}

namespace {

model::cluster loopback_cluster(std::vector<int> ports) {
    model::cluster clu;
    clu.lead = "n0";
    for (std::size_t i = 0; i < ports.size(); ++i) clu.nodes.push_back({"n" + std::to_string(i), "127.0.0.1", ports[i], 1, {}});
    return clu;
}

node_server::launch_options launch_with(const std::string& binary) {
    node_server::launch_options launch;
    launch.node_binary = binary;
    launch.log_level = "warn";
    launch.ready_timeout = std::chrono::milliseconds(10000);
    return launch;
}

int pid_answering(const node_server::endpoint& at, const std::string& secret_file) {
    node_server::peer_client client(node_server::read_secret_file(secret_file));
    const auto reply = client.call(at, protocol::frame{protocol::message_type::status, 0, 0, {}}, std::chrono::seconds(2));
    return nlohmann::json::parse(reply.payload).at("pid").get<int>();
}

}  // namespace

TEST_CASE("nodes started on port 0 pick free ports and answer with their own pids") {
    test::scratch_dir dir;
    const auto config = dir.file("zero.xml", "");
    const auto started = node_server::start_local_cluster(loopback_cluster({0, 0}), config,
                                                          launch_with(std::string(DNNC_BINARY_DIR) + "/tools/dnnc-node"));
    REQUIRE(started.nodes.size() == 2);
    CHECK(started.nodes[0].at.port != 0);
    CHECK(started.nodes[1].at.port != 0);
    CHECK(started.nodes[0].at.port != started.nodes[1].at.port);
    for (const auto& n : started.nodes) CHECK(pid_answering(n.at, started.secret_file) == n.pid);
    // Secure by default: a random secret only this user can read, found again by address.
    const auto mode = std::filesystem::status(started.secret_file).permissions();
    CHECK(mode == (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
    CHECK(node_server::read_secret_file(started.secret_file).size() == 64);
    CHECK(node_server::recorded_cluster_at(started.nodes[1].at)->secret_file == started.secret_file);
    CHECK_FALSE(node_server::recorded_cluster_at({"127.0.0.1", 1}));
    node_server::peer_client stranger("");
    CHECK_THROWS_AS(stranger.call(started.nodes[0].at, {protocol::message_type::status, 0, 0, {}}, std::chrono::seconds(2)),
                    node_server::remote_error);
    const auto logs = std::filesystem::path(started.nodes[0].log_file).parent_path();
    CHECK(std::filesystem::exists(started.nodes[1].log_file));
    CHECK(node_server::stop_local_cluster(started).empty());
    CHECK_FALSE(std::filesystem::exists(logs));  // stopped cleanly: nothing left behind
}

namespace {
// The GLIBC_TUNABLES a process was started with ("" without one), up to its first ':' (glibc
// parses the list in place there).
std::string tunables_of(int pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
    std::string entry;
    while (std::getline(in, entry, '\0'))
        if (entry.rfind("GLIBC_TUNABLES=", 0) == 0) return entry.substr(std::strlen("GLIBC_TUNABLES="));
    return "";
}
}  // namespace

TEST_CASE("a node's environment asks for huge pages, beside the tunables the user set, unless they name it") {
    using node_server::with_huge_pages;
    CHECK(with_huge_pages({"HOME=/root"}) == std::vector<std::string>{"HOME=/root", "GLIBC_TUNABLES=glibc.malloc.hugetlb=1"});
    CHECK(with_huge_pages({"GLIBC_TUNABLES=", "A=b"}) == std::vector<std::string>{"GLIBC_TUNABLES=glibc.malloc.hugetlb=1", "A=b"});
    CHECK(with_huge_pages({"GLIBC_TUNABLES=glibc.malloc.arena_max=2"}) ==
          std::vector<std::string>{"GLIBC_TUNABLES=glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1"});
    CHECK(with_huge_pages({"GLIBC_TUNABLES=glibc.malloc.hugetlb=0"}) == std::vector<std::string>{"GLIBC_TUNABLES=glibc.malloc.hugetlb=0"});
}

TEST_CASE("local nodes back large blocks with huge pages, and keep a tunable the user set") {
    test::scratch_dir dir;
    const auto config = dir.file("pages.xml", "");
    const auto launch = launch_with(std::string(DNNC_BINARY_DIR) + "/tools/dnnc-node");
    const char* before = std::getenv("GLIBC_TUNABLES");
    const std::string saved = before ? before : "";
    auto started_with = [&](const char* tunables) {
        if (tunables)
            setenv("GLIBC_TUNABLES", tunables, 1);
        else
            unsetenv("GLIBC_TUNABLES");
        const auto started = node_server::start_local_cluster(loopback_cluster({0}), config, launch);
        const auto seen = tunables_of(started.nodes[0].pid);
        node_server::stop_local_cluster(started);
        return seen;
    };
    CHECK(started_with(nullptr) == "glibc.malloc.hugetlb=1");
    CHECK(started_with("glibc.malloc.hugetlb=0") == "glibc.malloc.hugetlb=0");
    if (before)
        setenv("GLIBC_TUNABLES", saved.c_str(), 1);
    else
        unsetenv("GLIBC_TUNABLES");
}

TEST_CASE("a cluster stopped with its logs kept leaves them, without the record") {
    test::scratch_dir dir;
    const auto config = dir.file("kept.xml", "");
    const auto started = node_server::start_local_cluster(loopback_cluster({0}), config,
                                                          launch_with(std::string(DNNC_BINARY_DIR) + "/tools/dnnc-node"));
    node_server::stop_local_cluster(started, node_server::node_logs::keep);
    CHECK(std::filesystem::exists(started.nodes[0].log_file));
    CHECK_FALSE(std::filesystem::exists(node_server::record_path(config)));
    std::filesystem::remove_all(std::filesystem::path(started.nodes[0].log_file).parent_path());
}

// Regression: a node that lost its port to another process, which took it between the
// "is it free?" check and the node's bind, was taken to be up because something answered.
TEST_CASE("a process that takes a node's port while it starts is not taken for the node") {
    test::scratch_dir dir;
    const int port = test::free_port();
    const auto impostor_pid = (dir.path / "impostor.pid").string();
    // Starts a real node on the port as another process, then fails as a node does that
    // cannot bind.
    const auto script = dir.file("loses-its-port.sh", "#!/bin/sh\n" + std::string(DNNC_BINARY_DIR) +
                                                          "/tools/dnnc-node --port " + std::to_string(port) +
                                                          " >/dev/null 2>&1 &\necho $! > " + impostor_pid +
                                                          "\nsleep 1\necho 'cannot listen: address in use'\nexit 1\n");
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    const auto config = dir.file("taken.xml", "");
    try {
        node_server::start_local_cluster(loopback_cluster({port}), config, launch_with(script));
        FAIL("the impostor was taken for the node");
    } catch (const io_error& e) {
        CHECK_THAT(e.what(), Catch::Contains("node 'n0' exited while starting: cannot listen: address in use"));
        test::remove_kept_logs(e.what());
    }
    CHECK_FALSE(std::filesystem::exists(std::filesystem::path(node_server::record_path(config)).parent_path()));
    const int impostor = std::stoi(test::slurp(impostor_pid));
    CHECK(kill(impostor, SIGKILL) == 0);
}

// Regression: stopping a cluster whose node had died sent SHUTDOWN to whatever process
// had since taken its port.
TEST_CASE("stopping a cluster leaves alone another process on a recorded port") {
    test::scratch_dir dir;
    const auto node = std::string(DNNC_BINARY_DIR) + "/tools/dnnc-node";
    const auto other = node_server::start_local_cluster(loopback_cluster({0}), dir.file("other.xml", ""), launch_with(node));
    // A record whose node (here a plain sleeping process) is gone from the port that
    // `other` now serves.
    auto stale = node_server::start_local_cluster(loopback_cluster({0}), dir.file("stale.xml", ""), launch_with(node));
    kill(stale.nodes[0].pid, SIGKILL);
    waitpid(stale.nodes[0].pid, nullptr, 0);
    const int sleeper = fork();
    if (sleeper == 0) {
        execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
        _exit(127);
    }
    stale.nodes[0].pid = sleeper;
    stale.nodes[0].at = other.nodes[0].at;
    CHECK(node_server::stop_local_cluster(stale) == std::vector<std::string>{"n0"});
    CHECK(pid_answering(other.nodes[0].at, other.secret_file) == other.nodes[0].pid);
    CHECK(node_server::stop_local_cluster(other).empty());
}
