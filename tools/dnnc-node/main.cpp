// dnnc-node: the node server daemon. Prints "dnnc-node listening on HOST:PORT" once it
// accepts connections; stops cleanly on SIGTERM, SIGINT or a shutdown frame, and with
// --owner PID when that process, which started it, ends.
#include "dnnc/node_server/log.hpp"
#include "dnnc/node_server/node.hpp"
#include "dnnc/node_server/secret.hpp"
#include "mpi_job.hpp"
#include "dnnc/core/error.hpp"
#include "dnnc/model/model.hpp"
#include "dnnc/sim/torch_backend.hpp"

#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <iostream>
#include <limits>
#include <thread>

#include <unistd.h>

namespace {

std::pair<std::string, double> parse_delay(const std::string& text) {
    const auto eq = text.find('=');
    try {
        if (eq != std::string::npos && eq > 0) {
            std::size_t used = 0;
            const double ms = std::stod(text.substr(eq + 1), &used);
            if (used == text.size() - eq - 1 && ms >= 0) return {text.substr(0, eq), ms};
        }
    } catch (const std::exception&) {
    }
    throw dnnc::usage_error("--emulate-delay: '" + text + "' is not PEER=MS with MS >= 0");
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"dnnc-node: a dnnc node server"};
    std::string bind = "127.0.0.1", secret_file, log_level = "info";
    dnnc::node_server::tls_files tls;
    bool mpi = false;
    std::string transport;  // mpi within an MPI job (faster: BENCHMARKS.md, "MPI"), else tcp
    mpi_job job;
    std::vector<std::string> serve;
    int port = 0, http_port = -1, owner = 0;
    std::string http_bind = "127.0.0.1";
    std::size_t threads = 1;
    double silence_limit_s = 10;
    std::vector<std::string> delays, data_dirs;
    std::string device = "auto", memory_limit, output_memory, state_dir = dnnc::node_server::default_state_dir();
    app.add_option("--bind", bind, "Address to listen on (default 127.0.0.1)");
    app.add_option("--port", port, "Port to listen on; 0 picks a free one and prints it")->check(CLI::Range(0, 65535));
    app.add_option("--http", http_port, "Serve the live page on this port (0 picks a free one; docs/live.md)")
        ->check(CLI::Range(0, 65535));
    app.add_option("--http-bind", http_bind, "Address of the live page (default 127.0.0.1)");
    app.add_option("--secret-file", secret_file, "File holding the cluster secret: every frame is then authenticated");
    app.add_option("--tls-cert", tls.certificate, "PEM certificate of this node: serve and speak TLS (with --tls-key, --tls-ca)");
    app.add_option("--tls-key", tls.key, "PEM private key of --tls-cert");
    app.add_option("--tls-ca", tls.authority, "PEM certificate of the CA that signed every node's certificate");
    app.add_option("--log-level", log_level, "error, warn, info or debug");
    app.add_option("--owner", owner, "PID of the process that starts this node (dnnc run, the Python module): stop when it ends")
        ->check(CLI::Range(1, std::numeric_limits<int>::max()));
    app.add_option("--threads", threads, "Threads serving connections (default 1)")->check(CLI::Range(1, 256));
    app.add_option("--emulate-delay", delays, "PEER=MS: hold back what this node sends to node PEER by MS ms");
    app.add_option("--device", device, "Where dense projections run: auto (CUDA when available), cpu or cuda")
        ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    app.add_option("--memory-limit", memory_limit,
                   "The most memory this node's share of a network may need, e.g. 512M or 8G (default: what the machine has)");
    app.add_option("--state-dir", state_dir, "This node's folder: checkpoints are written under STATE_DIR/checkpoints only")
        ->capture_default_str();
    app.add_option("--data-dir", data_dirs,
                   "Without --secret-file: a folder whose files submitted documents may name (spike source file=, "
                   "dense weights=); repeatable. Without one, such a node reads no file a document names")
        ->check(CLI::ExistingDirectory);
    app.add_option("--silence-limit", silence_limit_s,
                   "Seconds another node may stay silent (no answer to heartbeats) while this one waits for it to "
                   "install, restore or capture a share; the work itself has no time limit")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app.add_option("--output-memory", output_memory,
                   "The most memory the output rows held at the lead may take, e.g. 64M (default); older rows are dropped");
    app.add_flag("--mpi", mpi, "Be one node of an MPI job (mpirun -np K dnnc-node --mpi ..., srun): rank 0 leads");
    auto* run = app.add_option("--run", job.run, "With --mpi: run this document on the job's ranks, as dnnc run does");
    auto* serve_option = app.add_option("--serve", serve, "With --mpi: keep the cluster up (after submitting DOC, if given)")
                             ->expected(0, 1)
                             ->excludes(run);
    app.add_option("--lead-file", job.lead_file, "With --serve: write the lead's HOST:PORT here");
    app.add_option("--ticks", job.ticks, "With --run: ticks to run (default 1000)")
        ->check(CLI::Range(std::int64_t{1}, dnnc::model::max_tick_count));
    app.add_option("--input", job.input, "With --run: input CSV");
    app.add_option("--output", job.output, "With --run: write the outputs here as CSV");
    app.add_option("--spikes", job.spikes, "With --run: write the recorded spikes here as CSV");
    auto* weights = app.add_option("--weights", job.weights, "With --run: write the plastic synapses' final weights here as CSV");
    app.add_option("--weights-every", job.weights_every,
                   "With --weights: also write them every T ticks, those after t ticks into W-t.csv beside W.csv")
        ->needs(weights)
        ->check(CLI::Range(std::int64_t{1}, dnnc::model::max_tick_count));
    app.add_flag("--json", job.json, "With --run: print the summary as JSON");
    app.add_option("--transport", transport, "How signals travel between nodes: mpi (the default with --mpi) or tcp")
        ->check(CLI::IsMember({"tcp", "mpi"}));
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    }

    job.serve = serve_option->count() > 0;
    if (mpi && app.count("--log-level") == 0) log_level = "warn";  // K ranks share one terminal
    if (job.serve && !serve.empty()) job.serve_doc = serve.front();
    job.bind_given = app.count("--bind") > 0;
    // Every rank of a job checks its own command line; rank 0 alone says what is wrong.
    const auto fail = [](const std::string& why) {
        if (launch_rank() == 0) std::cerr << "dnnc-node: " << why << '\n';
        return 2;
    };
    if (transport == "mpi" && !mpi) return fail("--transport mpi needs --mpi (signals travel over MPI only within an MPI job)");
    if (!mpi && (!job.run.empty() || job.serve || !job.lead_file.empty()))
        return fail("--run, --serve and --lead-file are for an MPI job: add --mpi and start it with mpirun or srun");
    if (mpi && job.run.empty() && !job.serve) return fail("--mpi needs --run DOC or --serve [DOC]");
    if (mpi && !launched_by_mpi())
        return fail("--mpi: this process was not started by an MPI launcher; run it with mpirun -np K or srun");
    job.mpi_signals = mpi && transport != "tcp";

    // Block the stop signals in every thread; one thread waits for them.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    if (mpi) sigaddset(&signals, SIGUSR1);  // Slurm's warning before a job's time runs out (mpi_job.hpp)
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    std::signal(SIGPIPE, SIG_IGN);

    try {
        dnnc::node_server::set_log_level(dnnc::node_server::parse_log_level(log_level));
        dnnc::node_server::node_options options;
        options.server.bind = bind;
        options.server.port = static_cast<std::uint16_t>(port);
        options.server.threads = threads;
        options.http_port = http_port;
        options.http_bind = http_bind;
        if (!secret_file.empty()) options.server.secret = dnnc::node_server::read_secret_file(secret_file);
        if (!tls.certificate.empty() || !tls.key.empty() || !tls.authority.empty()) {
            if (tls.certificate.empty()) throw dnnc::usage_error("--tls-ca without --tls-cert and --tls-key: a node serves TLS with its own certificate");
            options.server.tls = dnnc::node_server::tls_config::load(tls);
        }
        for (const auto& d : delays) options.emulate_delay_ms.insert(parse_delay(d));
        if (!memory_limit.empty()) options.memory_limit = dnnc::node_server::parse_byte_size(memory_limit);
        if (!output_memory.empty()) options.output_memory = dnnc::node_server::parse_byte_size(output_memory);
        options.state_dir = state_dir;
        options.data_dirs = data_dirs;
        options.silence_limit = std::chrono::milliseconds(static_cast<long>(std::ceil(silence_limit_s * 1000)));
        options.device = dnnc::sim::resolve_device(device == "cpu"    ? dnnc::sim::device_choice::cpu
                                                   : device == "cuda" ? dnnc::sim::device_choice::cuda
                                                                      : dnnc::sim::device_choice::auto_select);
        if (mpi) return run_mpi_job(options, job);

        dnnc::node_server::node node(options);
        node.start();
        std::cout << "dnnc-node listening on " << bind << ":" << node.port() << (options.server.tls ? " (TLS)" : "") << std::endl;
        if (node.http_port() != 0)
            std::cout << "dnnc-node live page on http://" << http_bind << ":" << node.http_port() << "/"
                      << (options.server.secret.empty() ? "" : "?token=" + dnnc::node_server::http_token(options.server.secret))
                      << std::endl;
        std::atomic<bool> stopped_by_request{false};
        std::thread waiter([&] {
            int received = 0;
            sigwait(&signals, &received);
            if (stopped_by_request) return;
            DNNC_LOG(info, "signal " << received << ": stopping");
            node.stop();
        });
        // The owner is this process's parent while it lives; once it has ended (killed, so
        // that it could not stop its nodes) this process has another parent.
        std::thread owner_watch;
        if (owner > 0)
            owner_watch = std::thread([&] {
                while (!stopped_by_request) {
                    if (getppid() != owner) {
                        DNNC_LOG(warn, "process " << owner << ", which started this node, has ended: stopping");
                        node.stop();
                        return;
                    }
                    std::this_thread::sleep_for(std::chrono::milliseconds(250));
                }
            });
        node.wait();
        // Wake the signal waiter if the stop came from a shutdown frame or the owner's end.
        stopped_by_request = true;
        pthread_kill(waiter.native_handle(), SIGTERM);
        waiter.join();
        if (owner_watch.joinable()) owner_watch.join();
        return 0;
    } catch (const dnnc::usage_error& e) {
        std::cerr << "dnnc-node: " << e.what() << '\n';
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "dnnc-node: " << e.what() << '\n';
        return 1;
    }
}
