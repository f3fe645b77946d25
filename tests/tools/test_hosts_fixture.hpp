#pragma once
// Test hosts for integration tests (scripts/test_hosts.sh): N network namespaces joined by
// a bridge, host K at 10.99.0.K, with a dnnc node each on port 7000 and a cluster secret.
// Commands run on a host; everything is taken down when the fixture goes, also when a
// check fails. Needs root (CI runs as root).
#include "cluster_fixture.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <csignal>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace dnnc::test {

// Whether this test may make test hosts (as root); if not, it says so (a warning) and should
// return.
inline bool test_hosts_available() {
    if (::geteuid() == 0) return true;
    WARN("test hosts need root (CI runs as root): not run");
    return false;
}

class test_hosts {
public:
    static constexpr int port = 7000;

    // Hosts 1..n named after this process (tests run side by side), and a secret in `dir`.
    test_hosts(const scratch_dir& dir, int n) : dir_(dir.path), name_("t" + std::to_string(::getpid() % 10000000)) {
        remove_sets_of_gone_tests();
        secret_ = dir.file("secret", "6f1d3c0a9b8e7d6c5b4a392817f6e5d4c3b2a1908f7e6d5c4b3a29180f7e6d5c\n");
        ::chmod(secret_.c_str(), 0600);
        must(script() + " up " + name_ + " " + std::to_string(n));
        for (int k = 1; k <= n; ++k) nodes_.push_back(start_node(k));
        for (int k = 1; k <= n; ++k) wait_until_listening(k);
    }
    ~test_hosts() {
        for (const int pid : nodes_) ::kill(pid, SIGKILL);
        for (const int pid : nodes_) ::waitpid(pid, nullptr, 0);
        run_command(script() + " down " + name_);
    }
    test_hosts(const test_hosts&) = delete;
    test_hosts& operator=(const test_hosts&) = delete;

    static std::string address(int k) { return "10.99.0." + std::to_string(k); }
    static std::string endpoint(int k) { return address(k) + ":" + std::to_string(port); }
    // A document's <node> elements for hosts 1..n, named h1..hn.
    static std::string nodes_xml(int n) {
        std::string nodes;
        for (int k = 1; k <= n; ++k)
            nodes += "<node id=\"h" + std::to_string(k) + "\" host=\"" + address(k) + "\" port=\"" + std::to_string(port) + "\"/>";
        return nodes;
    }
    // `command` (a dnnc binary's arguments follow it) as run on host k.
    std::string on(int k) const { return script() + " exec " + name_ + " " + std::to_string(k) + " "; }
    // dnnc on host k with the cluster's secret: append the subcommand and its arguments.
    std::string dnnc_on(int k, const std::string& subcommand) const {
        return on(k) + dnnc_binary() + " " + subcommand + " --secret-file " + secret_;
    }
    // Host k's node's state folder (checkpoints go under its checkpoints/).
    std::filesystem::path state_dir(int k) const { return dir_ / ("state" + std::to_string(k)); }
    void link(int k, bool up) const { must(script() + " link " + name_ + " " + std::to_string(k) + (up ? " up" : " down")); }
    void shape(int k, const std::string& rate) const { must(script() + " shape " + name_ + " " + std::to_string(k) + " " + rate); }
    // Host k gets routes to the hosts `reached` only: it cannot reach the others, nor they it.
    void only(int k, const std::vector<int>& reached) const {
        std::string list;
        for (const int j : reached) list += " " + std::to_string(j);
        must(script() + " only " + name_ + " " + std::to_string(k) + list);
    }
    // Host k's node killed (SIGKILL): it answers nothing from here on.
    void kill(int k) const { ::kill(nodes_[static_cast<std::size_t>(k - 1)], SIGKILL); }

    // The lead on host 1 submits `doc`, takes `inputs`, checkpoints every 50 ticks and runs
    // until two checkpoints are there (what a recovery test fails after).
    void start_with_checkpoints(const std::string& doc, const std::string& inputs) const {
        must(dnnc_on(1, "submit " + doc + " --to " + endpoint(1)));
        must(dnnc_on(1, "input " + inputs + lead()));
        must(dnnc_on(1, "checkpoint --every 50 --keep 2 --dir cut" + lead()));
        must(dnnc_on(1, "start" + lead()));
        wait_for_checkpoints(state_dir(1) / "checkpoints" / "cut", 2);
    }
    // The lead's status once its run has failed (asked for 5 s at most).
    nlohmann::json status_once_failed() const {
        nlohmann::json s;
        for (int i = 0; i < 50; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            s = nlohmann::json::parse(run_command(dnnc_on(1, "status --json" + lead())).out);
            if (s["state"] == "failed") break;
        }
        REQUIRE(s["state"] == "failed");
        return s;
    }
    // After a recovery: 60 more ticks, whose outputs from the start equal those of `doc` run
    // straight on one local node with `inputs` for as many ticks.
    void check_outputs_after_recovery(const std::string& doc, const std::string& inputs) const {
        must(dnnc_on(1, "step 60" + lead()));
        must(dnnc_on(1, "output -o " + (dir_ / "out.csv").string() + lead()));
        const auto rows = slurp((dir_ / "out.csv").string());
        const auto ticks = std::count(rows.begin(), rows.end(), '\n') - 1;
        const auto straight = (dir_ / "straight.csv").string();
        must(dnnc_binary() + " run " + doc + " --nodes 1 --ticks " + std::to_string(ticks) + " --input " + inputs + " --output " +
             straight);
        CHECK(rows == slurp(straight));
    }

private:
    static std::string lead() { return " --lead " + endpoint(1); }
    static std::string script() { return source_path("scripts/test_hosts.sh"); }

    // Sets whose test process was killed before it could take them down.
    static void remove_sets_of_gone_tests() {
        std::istringstream sets(run_command("ip netns list").out);
        const std::regex switch_of_test("^t([0-9]+)-sw\\b.*");
        std::smatch m;
        for (std::string line; std::getline(sets, line);)
            if (std::regex_match(line, m, switch_of_test) && ::kill(std::stoi(m[1]), 0) != 0 && errno == ESRCH)
                run_command(script() + " down t" + m[1].str());
    }

    int start_node(int k) const {
        const pid_t pid = ::fork();
        if (pid == 0) {
            const auto log = (dir_ / ("node" + std::to_string(k) + ".log")).string();
            const auto state = state_dir(k).string();
            const std::string command = "exec " + on(k) + node_binary() + " --bind " + address(k) + " --port " + std::to_string(port) +
                                        " --secret-file " + secret_ + " --state-dir " + state + " --log-level warn > " + log + " 2>&1";
            ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
            ::_exit(127);
        }
        return pid;
    }
    void wait_until_listening(int k) const {
        for (int attempt = 0; attempt < 100; ++attempt) {
            if (run_command(dnnc_on(k, "status --lead " + endpoint(k))).exit_code == 0) return;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        FAIL("the node on test host " << k << " did not come up: " << slurp((dir_ / ("node" + std::to_string(k) + ".log")).string()));
    }

    std::filesystem::path dir_;
    std::string name_, secret_;
    std::vector<int> nodes_;
};

}  // namespace dnnc::test
