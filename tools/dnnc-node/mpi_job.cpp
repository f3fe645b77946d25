#include "mpi_job.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/core/files.hpp"
#include "dnnc/model/check.hpp"
#include "dnnc/node_server/log.hpp"
#include "dnnc/node_server/peer_client.hpp"
#include "dnnc/node_server/secret.hpp"
#include "dnnc/protocol/control_plane.hpp"
#include "dnnc/protocol/csv.hpp"
#include "dnnc/protocol/xml.hpp"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
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

// Runs one of rank 0's checks: 0, or 2 when the input is bad (said here, once).
int checked(const std::function<void()>& check) {
    try {
        check();
        return 0;
    } catch (const usage_error& e) {
        std::cerr << "dnnc-node: " << e.what() << '\n';
    } catch (const config_error& e) {
        std::cerr << "dnnc-node: " << e.what() << '\n';
    }
    return 2;
}

// Every rank learns rank 0's verdict: 0 to go on, else an exit code (rank 0 printed why).
int agree(int code) {
    MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return code;
}

// Each rank's node id (rank 0): the document's <cluster> of K nodes, node i at rank i, or
// r0, r1, ... for one node per rank.
std::vector<std::string> node_ids(const model::document& doc, const std::string& file, std::size_t ranks) {
    std::vector<std::string> ids;
    if (doc.clu && doc.clu->nodes.size() != ranks)
        throw usage_error(file + ": its <cluster> has " + std::to_string(doc.clu->nodes.size()) + " nodes but the job has " +
                          std::to_string(ranks) + " ranks: give one node per rank, or leave <cluster> out");
    for (std::size_t r = 0; r < ranks; ++r) ids.push_back(doc.clu ? doc.clu->nodes[r].id : "r" + std::to_string(r));
    return ids;
}

// The cluster the job runs on (rank 0): the document's <cluster>, or one node per rank,
// its capacity the rank's cores, every pair linked; at the ranks' addresses.
model::cluster cluster_of(const model::document& doc, const std::vector<std::string>& hosts, const std::vector<int>& ports,
                             const std::vector<double>& capacities) {
    const auto ranks = hosts.size();
    model::cluster clu;
    if (doc.clu) {
        clu = *doc.clu;
    } else {
        for (std::size_t r = 0; r < ranks; ++r) {
            clu.nodes.push_back({"r" + std::to_string(r), {}, 0, capacities[r], {}});
            for (std::size_t q = 0; q < r; ++q) clu.links.push_back({clu.nodes[q].id, clu.nodes[r].id, 0.0, std::nullopt, {}});
        }
    }
    for (std::size_t r = 0; r < ranks; ++r) {
        clu.nodes[r].host = hosts[r];
        clu.nodes[r].port = ports[r];
    }
    clu.lead = clu.nodes[0].id;
    model::check_cluster(clu);
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
    // It gets the signals this process blocks for its signal thread.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t none, stops;
    sigemptyset(&none);
    sigemptyset(&stops);
    for (int s : {SIGTERM, SIGINT, SIGUSR1}) sigaddset(&stops, s);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &stops);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, argv[0], nullptr, &attributes, argv.data(), environ);
    posix_spawnattr_destroy(&attributes);
    if (rc != 0) throw io_error("cannot start " + args[0] + ": " + std::strerror(rc));
    child = pid;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    child = 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

// The folder under STATE_DIR/checkpoints where a job's stop checkpoint goes: the Slurm
// job's own (a requeued job keeps its id), else one for jobs without a scheduler.
std::string job_folder() {
    const char* id = std::getenv("SLURM_JOB_ID");
    return id && *id ? std::string("job-") + id : std::string("job-mpirun");
}

// The newest checkpoint in `dir` and its tick, if any.
std::pair<std::string, std::int64_t> newest_checkpoint(const fs::path& dir) {
    std::pair<std::string, std::int64_t> newest{{}, -1};
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        const auto name = e.path().filename().string();
        if (name.rfind("checkpoint-", 0) != 0 || e.path().extension() != ".dnncs") continue;
        const auto tick = std::atoll(name.c_str() + std::strlen("checkpoint-"));
        if (tick > newest.second) newest = {e.path().string(), tick};
    }
    return newest;
}

// The lines of `file` (header first) whose first field, a tick (or a time in ms when
// `dt` > 0), comes before tick `before`.
std::string lines_before(const std::string& file, std::int64_t before, double dt) {
    std::ifstream in(file);
    std::string line, kept;
    for (bool header = true; std::getline(in, line); header = false) {
        const double first = header ? 0 : std::atof(line.c_str());
        const auto tick = dt > 0 ? std::llround(first / dt) : static_cast<long long>(first);
        if (header || tick < before) kept += line + "\n";
    }
    return kept;
}

// `earlier` (a file's lines before the checkpoint) followed by `later`'s rows, into `file`.
void join_rows(const std::string& file, const std::string& earlier, const std::string& later) {
    std::ifstream in(later);
    std::string line, text = earlier;
    for (bool header = true; std::getline(in, line); header = false)
        if (!header) text += line + "\n";
    const std::string temporary = file + ".tmp";
    std::ofstream(temporary) << text;
    fs::rename(temporary, file);
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

// Rank 0 of a --run job: `dnnc run` on the job's cluster. A requeued Slurm job
// (SLURM_RESTART_COUNT > 0) with a stop checkpoint continues from it: the ticks still to
// run, the inputs from its tick on, and the outputs and spikes appended to the rows of the
// ticks before it. `stopped` says (once the run is over) whether a signal checkpointed it.
int run_batch(const mpi_job& job, const std::string& file, const model::document& doc, const fs::path& work,
              const std::string& state_dir, const std::vector<std::string>& access, const std::function<bool()>& stopped) {
    const char* restarts = std::getenv("SLURM_RESTART_COUNT");
    const auto [checkpoint, tick] = restarts && std::atoi(restarts) > 0
                                        ? newest_checkpoint(fs::path(state_dir) / "checkpoints" / job_folder())
                                        : std::pair<std::string, std::int64_t>{{}, -1};
    std::vector<std::string> run{"run", checkpoint.empty() ? file : checkpoint, "--cluster", (work / "cluster.xml").string(),
                                 "--running-cluster", "--ticks", std::to_string(checkpoint.empty() ? job.ticks : job.ticks - tick)};
    std::string input = job.input, output = job.output, spikes = job.spikes;
    if (!checkpoint.empty()) {
        std::cerr << "dnnc-node: continuing from " << checkpoint << " (tick " << tick << ")" << std::endl;
        if (tick >= job.ticks) return 0;
        if (!input.empty()) {
            std::istringstream in(read_file(input, protocol::max_input_csv_bytes));
            std::ofstream later(work / "input.csv");
            std::string line;
            for (bool header = true; std::getline(in, line); header = false)
                if (header || std::atoll(line.c_str()) >= tick) later << line << '\n';
            input = (work / "input.csv").string();
        }
        if (!output.empty()) output = (work / "output.csv").string();
        if (!spikes.empty()) spikes = (work / "spikes.csv").string();
    }
    for (const auto& [flag, value] : {std::pair{"--input", input}, {"--output", output}, {"--spikes", spikes}, {"--weights", job.weights}})
        if (!value.empty()) run.insert(run.end(), {flag, value});
    if (job.weights_every > 0) run.insert(run.end(), {"--weights-every", std::to_string(job.weights_every)});
    if (job.json) run.push_back("--json");
    run.insert(run.end(), access.begin(), access.end());
    const int code = run_dnnc(run);
    if (stopped()) return 3;
    if (code == 0 && !checkpoint.empty()) {
        if (!job.output.empty()) join_rows(job.output, lines_before(job.output, tick, 0), output);
        if (!job.spikes.empty()) join_rows(job.spikes, lines_before(job.spikes, tick, doc.net->dt), spikes);
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
    // Signals over MPI come from the runners' threads while the main thread waits.
    const int wanted = job.mpi_signals ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED;
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, wanted, &provided);
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (provided < wanted) {
        if (rank == 0) std::cerr << "dnnc-node: --transport mpi: this MPI library does not allow MPI calls from several threads\n";
        MPI_Finalize();
        return 2;
    }
    const std::string name = "rank " + std::to_string(rank);
    const fs::path work = fs::temp_directory_path() / ("dnnc-mpi-" + std::to_string(getpid()));
    int code = 0;
    // SIGTERM, SIGINT and SIGUSR1 (blocked in every thread by main; Slurm's preemption and
    // time-limit warnings). A --serve job stops. A --run job's rank 0 freezes the network,
    // writes a checkpoint (a requeued job continues from it) and ends the job with exit 3;
    // the other ranks wait for it.
    std::atomic<node_server::node*> running{nullptr};
    std::atomic<bool> over{false};
    std::mutex stopping;     // held while rank 0 checkpoints; the job does not end meanwhile
    bool finished = false;   // the batch is done: a late signal changes nothing
    bool checkpointed = false;
    node_server::endpoint own_lead;
    std::thread signals([&] {
        sigset_t set;
        sigemptyset(&set);
        for (int s : {SIGTERM, SIGINT, SIGUSR1}) sigaddset(&set, s);
        while (true) {
            int received = 0;
            sigwait(&set, &received);
            if (over) return;
            if (job.serve) {
                if (auto* n = running.load()) n->stop();
                continue;
            }
            if (rank != 0) continue;
            std::lock_guard<std::mutex> lock(stopping);
            if (finished || checkpointed || own_lead.port == 0) continue;
            try {
                node_server::peer_client lead(options.server.secret, protocol::default_max_payload, options.server.tls);
                auto control = [&](const protocol::control_request& command) {
                    return lead.call(own_lead, {protocol::message_type::control, 0, 0, protocol::encode(command).dump()}, std::chrono::minutes(5))
                        .payload;
                };
                control(protocol::control_request(protocol::control_request::kind::freeze));
                protocol::control_request checkpoint(protocol::control_request::kind::checkpoint);
                checkpoint.now = true;
                checkpoint.dir = job_folder();
                const auto reply = control(checkpoint);
                checkpointed = true;
                std::cerr << "dnnc-node: signal " << received << ": the network is frozen and checkpointed (" << reply
                          << "); a requeued job continues from it" << std::endl;
            } catch (const std::exception& e) {
                std::cerr << "dnnc-node: signal " << received << ": no checkpoint: " << e.what() << std::endl;
            }
            if (const pid_t c = child) kill(c, SIGINT);  // it writes every row up to the freeze, then ends
        }
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
        // Rank 0 reads the document first: bad input ends the job before any node starts,
        // and every rank learns the node ids (signals over MPI go to ranks by node id).
        const std::string file = job.serve ? job.serve_doc : job.run;
        model::document doc;
        std::vector<field> ids(static_cast<std::size_t>(ranks));
        if (rank == 0)
            code = checked([&] {
                if (!file.empty()) {
                    doc = protocol::load_document(file);
                    if (!doc.net) throw usage_error(file + ": the document has no <network>");
                }
                const auto names = node_ids(doc, file, static_cast<std::size_t>(ranks));
                for (std::size_t r = 0; r < names.size(); ++r) ids[r] = field_of(names[r]);
            });
        if (agree(code) != 0) throw bad_input{};
        MPI_Bcast(ids.data(), static_cast<int>(ids.size() * sizeof(field)), MPI_CHAR, 0, MPI_COMM_WORLD);
        if (job.mpi_signals) {
            for (int r = 0; r < ranks; ++r) options.mpi.ranks[ids[static_cast<std::size_t>(r)].data()] = r;
            MPI_Comm signal_comm;
            MPI_Comm_dup(MPI_COMM_WORLD, &signal_comm);
            // A packet that does not fit its receive (one from an earlier installation of
            // the network) is dropped, not the end of the job.
            MPI_Comm_set_errhandler(signal_comm, MPI_ERRORS_RETURN);
            options.mpi.communicator = MPI_Comm_c2f(signal_comm);
        }
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
        if (rank == 0 && std::thread::hardware_concurrency() > 1 &&
            std::any_of(capacities.begin(), capacities.end(), [](double c) { return c < 2; }))
            std::cerr << "dnnc-node: warning: a rank is bound to one core, where its node's threads (runner, server, "
                         "signals) wait on each other; start the job with mpirun --bind-to none, or give each rank "
                         "several cores (srun --cpus-per-task)\n";

        if (rank == 0) {
            std::vector<std::string> addresses;
            for (const auto& h : hosts) addresses.push_back(h.data());
            code = checked([&] {
                model::document clu_doc;
                clu_doc.clu = cluster_of(doc, addresses, ports, capacities);
                fs::create_directories(work);
                std::ofstream(work / "cluster.xml") << protocol::serialize(clu_doc);
                std::ofstream(work / "secret") << options.server.secret << '\n';
                fs::permissions(work / "secret", fs::perms::owner_read | fs::perms::owner_write);
            });
            if (agree(code) != 0) throw bad_input{};
            const std::string lead = addresses[0] + ":" + std::to_string(ports[0]);
            {
                std::lock_guard<std::mutex> lock(stopping);
                own_lead = {addresses[0], static_cast<std::uint16_t>(ports[0])};
            }
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
                code = run_batch(job, file, doc, work, options.state_dir, access, [&] {
                    std::lock_guard<std::mutex> lock(stopping);
                    finished = true;
                    return checkpointed;
                });
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
    over = true;
    pthread_kill(signals.native_handle(), SIGTERM);
    signals.join();
    std::error_code ignored;
    fs::remove_all(work, ignored);
    if (!options.mpi.ranks.empty()) {
        MPI_Comm signal_comm = MPI_Comm_f2c(options.mpi.communicator);
        MPI_Comm_free(&signal_comm);
    }
    MPI_Finalize();
    return code;
}
