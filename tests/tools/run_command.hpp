#pragma once
// Runs a command line through the shell and captures its exit code, stdout and stderr.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace dnnc::test {

struct command_result {
    int exit_code = -1;
    std::string out, err;
};

inline std::string dnnc_binary() { return std::string(DNNC_BINARY_DIR) + "/tools/dnnc"; }
inline std::string node_binary() { return std::string(DNNC_BINARY_DIR) + "/tools/dnnc-node"; }
inline std::string source_path(const std::string& relative) { return std::string(DNNC_SOURCE_DIR) + "/" + relative; }

// A dnnc that failed with a local cluster keeps its nodes' logs for the user and says where
// (a cluster's record folder, dnnc-cluster-*): a test has read what it needs from stderr by
// then, so the folders it names go, and a test run leaves nothing in /tmp.
inline void remove_kept_logs(const std::string& err) {
    for (const std::string said : {"the nodes' logs are in ", "(log: "}) {
        for (auto at = err.find(said); at != std::string::npos; at = err.find(said, at + 1)) {
            const auto from = at + said.size();
            const auto path = std::filesystem::path(err.substr(from, err.find_first_of(")\n", from) - from));
            const auto folder = said[0] == '(' ? path.parent_path() : path;
            if (folder.filename().string().rfind("dnnc-cluster-", 0) == 0) {
                std::error_code ignored;
                std::filesystem::remove_all(folder, ignored);
            }
        }
    }
}

inline command_result run_command(const std::string& command) {
    const std::string stem = "/tmp/dnnc-test-" + std::to_string(getpid()) + "-" + std::to_string(rand());
    const int status = std::system((command + " > " + stem + ".out 2> " + stem + ".err").c_str());
    auto slurp = [](const std::string& path) {
        std::ifstream in(path);
        std::stringstream ss;
        ss << in.rdbuf();
        std::remove(path.c_str());
        return ss.str();
    };
    command_result r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(stem + ".out");
    r.err = slurp(stem + ".err");
    remove_kept_logs(r.err);
    return r;
}

}  // namespace dnnc::test
