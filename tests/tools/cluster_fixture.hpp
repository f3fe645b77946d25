#pragma once
// A real local cluster for integration tests: a DNNC document on free loopback ports in a
// scratch folder, brought up with `dnnc cluster up` and always taken down again.
#include "run_command.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace dnnc::test {

inline std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The pid `dnnc cluster up` printed for a node ("node ID up on HOST:PORT (pid N, ...").
inline int pid_in(const std::string& up_output, const std::string& node) {
    const auto line = up_output.substr(up_output.find("node " + node + " up"));
    return std::stoi(line.substr(line.find("pid ") + 4));
}

// A port nothing listens on right now.
inline int free_port() {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor acceptor(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
    return acceptor.local_endpoint().port();
}

struct scratch_dir {
    std::filesystem::path path;
    scratch_dir() {
        path = std::filesystem::temp_directory_path() / ("dnnc-it-" + std::to_string(std::random_device{}()));
        std::filesystem::create_directories(path);
    }
    ~scratch_dir() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
    std::string file(const std::string& name, const std::string& text) const {
        const auto p = (path / name).string();
        std::ofstream(p) << text;
        return p;
    }
};

struct node_spec {
    std::string id;
    double capacity = 1;
};

// A random recurrent network of `neurons` tanh neurons on the given nodes and links.
inline std::string cluster_document(const std::vector<node_spec>& nodes, const std::vector<std::string>& link_lines,
                                    std::vector<int>& ports, int neurons = 200, const std::string& run = "") {
    std::string doc = "<dnnc xmlns=\"urn:dnnc:1\">\n  <network name=\"it\">\n    <population id=\"p\" size=\"" +
                      std::to_string(neurons) +
                      "\" model=\"tanh\"/>\n    <projection from=\"p\" to=\"p\" kind=\"random\" p=\"0.05\" seed=\"5\"/>\n"
                      "    <output id=\"y\" neurons=\"p[0:4]\"/>\n  </network>\n  <cluster lead=\"" + nodes.front().id + "\">\n";
    ports.clear();
    for (const auto& n : nodes) {
        ports.push_back(free_port());
        doc += "    <node id=\"" + n.id + "\" port=\"" + std::to_string(ports.back()) + "\" capacity=\"" +
               std::to_string(n.capacity) + "\"/>\n";
    }
    for (const auto& l : link_lines) doc += "    " + l + "\n";
    doc += "  </cluster>\n" + run + "</dnnc>\n";
    return doc;
}

// Brings the document's nodes up and takes them down when it goes out of scope.
class local_cluster_guard {
public:
    local_cluster_guard(std::string config, std::string extra = "") : config_(std::move(config)), extra_(std::move(extra)) {
        up = run_command(dnnc_binary() + " cluster up " + config_ + " " + extra_);
    }
    ~local_cluster_guard() { run_command(dnnc_binary() + " cluster down " + config_ + " " + extra_); }
    command_result up;

private:
    std::string config_, extra_;
};

}  // namespace dnnc::test
