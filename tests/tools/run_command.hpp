#pragma once
// Runs a command line through the shell and captures its exit code, stdout and stderr.
#include <cstdio>
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
    return r;
}

}  // namespace dnnc::test
