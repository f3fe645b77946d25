#pragma once
// A real local cluster for integration tests: a DNNC document on free loopback ports in a
// scratch folder, brought up with `dnnc cluster up` and always taken down again.
#include "run_command.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <csignal>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

namespace dnnc::test {

inline std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// A CSV's header, then its rows sorted: weights CSVs list the synapses node by node.
inline std::string sorted_csv(const std::string& text) {
    std::istringstream in(text);
    std::string header, line;
    std::getline(in, header);
    std::vector<std::string> rows;
    while (std::getline(in, line)) rows.push_back(line);
    std::sort(rows.begin(), rows.end());
    std::string out = header + "\n";
    for (const auto& r : rows) out += r + "\n";
    return out;
}

// The pid `dnnc cluster up` printed for a node ("node ID up on HOST:PORT (pid N, ...").
inline int pid_in(const std::string& up_output, const std::string& node) {
    const auto line = up_output.substr(up_output.find("node " + node + " up"));
    return std::stoi(line.substr(line.find("pid ") + 4));
}

// Lets a process the test stopped (SIGSTOP) go on when it goes out of scope, even when a
// check fails: a stopped node would not come down with its cluster.
struct continued_at_exit {
    int pid;
    ~continued_at_exit() { ::kill(pid, SIGCONT); }
};

// Whether nothing is bound to 127.0.0.1:port now.
inline bool port_is_free(int port) {
    const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return false;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool bound = ::bind(s, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
    ::close(s);
    return bound;
}

// A loopback port for a test's cluster document. Tests run side by side in separate
// processes, and a document names its ports before its nodes bind them, so a port is
// claimed with an exclusive lock on a file named after it, held until this process ends:
// no two test processes get the same port. It is drawn below the kernel's ephemeral range
// (32768 and up), so outgoing connections do not take it either, and is free right now.
inline int free_port() {
    static std::mt19937 draw(std::random_device{}());
    static const auto claims = std::filesystem::temp_directory_path() / "dnnc-test-ports";
    std::filesystem::create_directories(claims);
    for (int attempt = 0; attempt < 10000; ++attempt) {
        const int port = std::uniform_int_distribution<int>(20000, 32000)(draw);
        const int fd = ::open((claims / std::to_string(port)).c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
        if (fd < 0) continue;
        if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
            if (port_is_free(port)) return port;  // the descriptor stays open: the claim lasts
        }
        ::close(fd);
    }
    throw std::runtime_error("no free port in 20000..32000");
}

struct scratch_dir {
    std::filesystem::path path;
    scratch_dir() {
        path = std::filesystem::temp_directory_path() / ("dnnc-it-" + std::to_string(std::random_device{}()));
        std::filesystem::create_directories(path);
    }
    // A process the test started may still be writing into it (a Slurm job's last files after
    // the job has completed), which fails a removal part way: tried again for up to 5 s.
    ~scratch_dir() {
        for (int tries = 0; tries < 50; ++tries) {
            std::error_code ignored;
            std::filesystem::remove_all(path, ignored);
            if (!std::filesystem::exists(path, ignored)) return;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
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

// The same on two linked nodes, a (the lead) and b.
inline std::string two_linked_nodes(std::vector<int>& ports, int neurons, const std::string& run) {
    return cluster_document({{"a"}, {"b"}}, {R"(<link from="a" to="b"/>)"}, ports, neurons, run);
}

// A document's network with a cluster of the given capacities on free ports (a chain).
inline std::string with_cluster_of(std::string text, const std::vector<double>& capacities, std::vector<int>& ports) {
    text = std::regex_replace(text, std::regex("<cluster[\\s\\S]*</cluster>"), "");
    text = std::regex_replace(text, std::regex("<run[^>]*/>"), "");
    std::string cluster = "<cluster lead=\"n0\">\n";
    ports.clear();
    for (std::size_t i = 0; i < capacities.size(); ++i) {
        ports.push_back(free_port());
        cluster += "<node id=\"n" + std::to_string(i) + "\" port=\"" + std::to_string(ports.back()) + "\" capacity=\"" +
                   std::to_string(capacities[i]) + "\"/>\n";
        if (i > 0) cluster += "<link from=\"n" + std::to_string(i - 1) + "\" to=\"n" + std::to_string(i) + "\"/>\n";
    }
    cluster += "</cluster>\n<run probes=\"2\"/>\n";
    return std::regex_replace(text, std::regex("</dnnc>"), cluster + "</dnnc>");
}

// An example's network (a path under examples/) with such a cluster.
inline std::string with_cluster(const std::string& example, const std::vector<double>& capacities, std::vector<int>& ports) {
    return with_cluster_of(slurp(source_path("examples/" + example)), capacities, ports);
}

// NEST's structural plasticity example (examples/structural_plasticity) at a tenth of its size
// and growing 100 times faster: 80 + 20 neurons, an update every 100 ms, calcium of
// tau_Ca 1 s that rises 0.01 a spike.
inline std::string small_growing_network() {
    std::string doc = slurp(source_path("examples/structural_plasticity/structural_plasticity.xml"));
    for (const auto& [from, to] : {std::pair{"size=\"800\"", "size=\"80\""}, {"size=\"200\"", "size=\"20\""},
                                   {"interval=\"1000\"", "interval=\"100\""}, {"growth_rate=\"0.0001\"", "growth_rate=\"0.01\""},
                                   {"growth_rate=\"0.0004\"", "growth_rate=\"0.04\""},
                                   {"seed=\"([12])\">", "seed=\"$1\" tau_Ca=\"1000\" beta_Ca=\"0.01\">"}})
        doc = std::regex_replace(doc, std::regex(from), to);
    return doc;
}

inline std::string lead_of(const std::vector<int>& ports) { return " --lead 127.0.0.1:" + std::to_string(ports[0]); }
inline std::string to_of(const std::vector<int>& ports) { return " --to 127.0.0.1:" + std::to_string(ports[0]); }

// Waits up to 20 s until `dir` holds at least `n` finished checkpoints (checkpoint-T.dnncs; a
// checkpoint being written is a .tmp file beside them, which a failure may still remove).
inline void wait_for_checkpoints(const std::filesystem::path& dir, std::size_t n) {
    std::size_t finished = 0;
    for (int i = 0; i < 400 && finished < n; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        finished = 0;
        if (std::filesystem::exists(dir))
            for (const auto& e : std::filesystem::directory_iterator(dir))
                if (e.path().extension() == ".dnncs") ++finished;
    }
    REQUIRE(finished >= n);
}

inline void must(const std::string& command) {
    const auto r = run_command(command);
    INFO(command << "\n" << r.err);
    REQUIRE(r.exit_code == 0);
}

// A scratch folder for a test that drives the dnnc binary: the nodes' checkpoints go there
// (XDG_STATE_HOME), out(name) is a file's path in it.
struct dnnc_scratch {
    scratch_dir dir;
    const std::string dnnc = dnnc_binary();
    dnnc_scratch() { setenv("XDG_STATE_HOME", dir.path.c_str(), 1); }
    std::string out(const std::string& name) const { return (dir.path / name).string(); }
};

// The capacities of one node and of three (2, 1, 1): the clusters whose results tests compare.
inline const std::vector<std::vector<double>> one_and_three_nodes{{1}, {2, 1, 1}};

// `dnnc update` of the network in `refused` exits 2 with `reason` in its message; then that
// of `taken` succeeds. `lead`: lead_of's option.
inline void update_refused_then_taken(const std::string& refused, const std::string& reason, const std::string& taken,
                                      const std::string& lead) {
    const auto no = run_command(dnnc_binary() + " update " + refused + lead);
    CHECK(no.exit_code == 2);
    CHECK(no.err.find(reason) != std::string::npos);
    const auto yes = run_command(dnnc_binary() + " update " + taken + lead);
    INFO(yes.err);
    REQUIRE(yes.exit_code == 0);
}

// The outputs (CSV text, written to `csv`) of `document` submitted anew (--replace) to the
// cluster whose lead listens on ports[0], after `ticks` ticks.
inline std::string outputs_of_fresh_run(const std::string& document, const std::vector<int>& ports, int ticks, const std::string& csv) {
    const auto dnnc = dnnc_binary();
    must(dnnc + " submit --replace " + document + to_of(ports));
    must(dnnc + " step " + std::to_string(ticks) + lead_of(ports));
    must(dnnc + " output -o " + csv + lead_of(ports));
    return slurp(csv);
}

// Brings the document's nodes up (with node options `up_options`, such as a secret file)
// and takes them down when it goes out of scope.
class local_cluster_guard {
public:
    explicit local_cluster_guard(std::string config, const std::string& up_options = "") : config_(std::move(config)) {
        up = run_command(dnnc_binary() + " cluster up " + config_ + " " + up_options);
    }
    ~local_cluster_guard() { run_command(dnnc_binary() + " cluster down " + config_); }
    command_result up;

private:
    std::string config_;
};

}  // namespace dnnc::test
