#include "mpi_job.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/node_server/log.hpp"
#include "dnnc/node_server/secret.hpp"
#include "dnnc/protocol/check.hpp"
#include "dnnc/protocol/xml.hpp"

#include <mpi.h>

#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>
#include <vector>

#include <sched.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace fs = std::filesystem;
using namespace dnnc;

namespace {

// Fixed-size text for collectives.
using field = std::array<char, 256>;
field field_of(const std::string& text) {
    field f{};
    std::strncpy(f.data(), text.c_str(), f.size() - 1);
    return f;
}

// The cores this rank was given: Slurm's count, else its affinity mask.
double cores() {
    if (const char* slurm = std::getenv("SLURM_CPUS_PER_TASK"); slurm && std::atoi(slurm) > 0) return std::atoi(slurm);
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    return 1;
}

// Every rank learns rank 0's verdict: 0 to go on, else an exit code (rank 0 printed why).
int agree(int code) {
    MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return code;
}

// The cluster the job runs on (rank 0): from the document's <cluster> of K nodes, node i
// at rank i, or one node per rank, every pair linked.
protocol::cluster cluster_of(const protocol::document& doc, const std::string& file, const std::vector<std::string>& hosts,
                             const std::vector<int>& ports, const std::vector<double>& capacities) {
    const auto ranks = hosts.size();
    protocol::cluster clu;
    if (doc.clu) {
        if (doc.clu->nodes.size() != ranks)
            throw usage_error(file + ": its <cluster> has " + std::to_string(doc.clu->nodes.size()) + " nodes but the job has " +
                              std::to_string(ranks) + " ranks: give one node per rank, or leave <cluster> out");
        clu = *doc.clu;
    } else {
        for (std::size_t r = 0; r < ranks; ++r) {
            clu.nodes.push_back({"r" + std::to_string(r), {}, 0, capacities[r], {}});
            for (std::size_t q = 0; q < r; ++q) clu.links.push_back({clu.nodes[q].id, clu.nodes[r].id, 0.0, {}});
        }
    }
    for (std::size_t r = 0; r < ranks; ++r) {
        clu.nodes[r].host = hosts[r];
        clu.nodes[r].port = ports[r];
    }
    clu.lead = clu.nodes[0].id;
    protocol::check_cluster(clu);
    return clu;
}

// Rank 0 stops here after bad input: every rank has been told, and exits 2.
struct bad_input {};

std::atomic<pid_t> child{0};  // the dnnc command rank 0 runs, for the signal thread

// Runs `args` (the dnnc command beside this dnnc-node) with this process's output; its exit code.
int run_dnnc(std::vector<std::string> args) {
    const auto self = fs::read_symlink("/proc/self/exe");
    args.insert(args.begin(), (self.parent_path() / "dnnc").string());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (const int rc = posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ); rc != 0)
        throw io_error("cannot start " + args[0] + ": " + std::strerror(rc));
    child = pid;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    child = 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

// Waits for rank 0's outcome without spinning a core (a blocking collective would poll
// and take the cycles the nodes need).
int outcome_from_rank0(int mine, int rank) {
    int code = mine;
    MPI_Request request;
    MPI_Ibcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD, &request);
    for (int done = 0; !done;) {
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        if (!done && rank != 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return code;
}

}  // namespace

bool launched_by_mpi() {
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
        if (std::getenv(name)) return true;
    return false;
}

int launch_rank() {
    for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"})
        if (const char* value = std::getenv(name)) return std::atoi(value);
    return 0;
}

int run_mpi_job(node_server::node_options options, const mpi_job& job) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const std::string name = "rank " + std::to_string(rank);
    const fs::path work = fs::temp_directory_path() / ("dnnc-mpi-" + std::to_string(getpid()));
    int code = 0;
    // SIGTERM and SIGINT (blocked in every thread by main) stop this rank's node, and the
    // command rank 0 runs.
    std::atomic<node_server::node*> running{nullptr};
    std::thread signals([&] {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        int received = 0;
        sigwait(&set, &received);  // also woken when the job is over, with nothing left to stop
        if (const pid_t c = child) kill(c, SIGTERM);
        if (auto* n = running.load()) n->stop();
    });
    try {
        // The secret: the given one, or one rank 0 draws; every rank the same.
        field secret = field_of(options.server.secret);
        if (rank == 0 && options.server.secret.empty()) {
            fs::create_directories(work);
            node_server::write_new_secret_file((work / "secret").string());
            secret = field_of(node_server::read_secret_file((work / "secret").string()));
        }
        MPI_Bcast(secret.data(), static_cast<int>(secret.size()), MPI_CHAR, 0, MPI_COMM_WORLD);
        options.server.secret = secret.data();
        // Ranks on one machine talk over loopback; across machines each binds every address
        // and is called by its host name (the secret authenticates every frame).
        char processor[MPI_MAX_PROCESSOR_NAME] = {};
        int length = 0;
        MPI_Get_processor_name(processor, &length);
        std::vector<field> machines(static_cast<std::size_t>(ranks));
        MPI_Allgather(field_of(processor).data(), static_cast<int>(sizeof(field)), MPI_CHAR, machines.data(),
                      static_cast<int>(sizeof(field)), MPI_CHAR, MPI_COMM_WORLD);
        bool one_machine = true;
        for (const auto& m : machines) one_machine = one_machine && std::strcmp(m.data(), machines[0].data()) == 0;
        std::string host = options.server.bind;
        if (!job.bind_given && !one_machine) {
            options.server.bind = "0.0.0.0";
            host = processor;
        }
        node_server::node node(options);
        node.start();
        running = &node;
        std::vector<field> hosts(static_cast<std::size_t>(ranks));
        MPI_Allgather(field_of(host).data(), static_cast<int>(sizeof(field)), MPI_CHAR, hosts.data(), static_cast<int>(sizeof(field)),
                      MPI_CHAR, MPI_COMM_WORLD);
        std::vector<int> ports(static_cast<std::size_t>(ranks));
        const int port = node.port();
        MPI_Allgather(&port, 1, MPI_INT, ports.data(), 1, MPI_INT, MPI_COMM_WORLD);
        std::vector<double> capacities(static_cast<std::size_t>(ranks));
        const double mine = cores();
        MPI_Allgather(&mine, 1, MPI_DOUBLE, capacities.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD);
        DNNC_LOG(info, name << " of " << ranks << ": node on " << host << ":" << port);

        if (rank == 0) {
            const std::string file = job.serve ? job.serve_doc : job.run;
            std::vector<std::string> addresses;
            for (const auto& h : hosts) addresses.push_back(h.data());
            protocol::document doc;
            try {
                if (!file.empty()) {
                    doc = protocol::load_document(file);
                    if (!doc.net) throw usage_error(file + ": the document has no <network>");
                }
                protocol::document clu_doc;
                clu_doc.clu = cluster_of(doc, file, addresses, ports, capacities);
                fs::create_directories(work);
                std::ofstream(work / "cluster.xml") << protocol::serialize(clu_doc);
                std::ofstream(work / "secret") << options.server.secret << '\n';
                fs::permissions(work / "secret", fs::perms::owner_read | fs::perms::owner_write);
            } catch (const usage_error& e) {
                std::cerr << "dnnc-node: " << e.what() << '\n';
                code = 2;
            } catch (const config_error& e) {
                std::cerr << "dnnc-node: " << e.what() << '\n';
                code = 2;
            }
            if (agree(code) != 0) throw bad_input{};
            const std::string lead = addresses[0] + ":" + std::to_string(ports[0]);
            const std::vector<std::string> access{"--secret-file", (work / "secret").string()};
            if (job.serve) {
                if (!file.empty()) {
                    std::vector<std::string> submit{"submit", file, "--cluster", (work / "cluster.xml").string(), "--to", lead};
                    submit.insert(submit.end(), access.begin(), access.end());
                    code = run_dnnc(submit);
                }
                if (code == 0) {
                    if (!job.lead_file.empty()) std::ofstream(job.lead_file) << lead << '\n';
                    std::cout << "dnnc cluster of " << ranks << " ranks up; lead " << lead << ", secret " << (work / "secret").string()
                              << ", cluster " << (work / "cluster.xml").string() << std::endl;
                    node.wait();  // until a signal or a shutdown frame
                }
            } else {
                std::vector<std::string> run{"run", file, "--cluster", (work / "cluster.xml").string(), "--running-cluster",
                                             "--ticks", std::to_string(job.ticks)};
                for (const auto& [flag, value] : {std::pair{"--input", job.input}, {"--output", job.output}, {"--spikes", job.spikes}})
                    if (!value.empty()) run.insert(run.end(), {flag, value});
                if (job.json) run.push_back("--json");
                run.insert(run.end(), access.begin(), access.end());
                code = run_dnnc(run);
            }
        } else {
            if (agree(0) != 0) throw bad_input{};
            if (job.serve) node.wait();
        }
        code = outcome_from_rank0(code, rank);
        running = nullptr;
        node.stop();
    } catch (const bad_input&) {
        code = 2;  // rank 0 said why
    } catch (const std::exception& e) {
        // The other ranks may wait in a collective: the whole job ends here.
        std::cerr << "dnnc-node (" << name << "): " << e.what() << std::endl;
        MPI_Abort(MPI_COMM_WORLD, dynamic_cast<const usage_error*>(&e) ? 2 : 1);
    }
    running = nullptr;
    pthread_kill(signals.native_handle(), SIGTERM);
    signals.join();
    std::error_code ignored;
    fs::remove_all(work, ignored);
    MPI_Finalize();
    return code;
}
