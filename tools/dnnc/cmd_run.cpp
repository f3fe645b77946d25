// dnnc run CONFIG.xml [--cluster C.xml | --nodes K] [--ticks N] [--input IN.csv]
// [--output OUT.csv] [--spikes SPIKES.csv] [--record-file VARS.csv] [--weights W.csv [--weights-every T]]: the whole
// job on this machine. Brings up the local cluster, submits, feeds the inputs, runs N ticks
// (reading the recorded spikes as they come; in steps of T ticks, the weights written after
// each, with --weights-every), writes the outputs, prints a summary, and takes the cluster
// down again — also on an error or Ctrl-C. With --running-cluster the cluster's nodes are already up (as
// dnnc-node --mpi starts them) and stay up: the same job, on them.
#include "client.hpp"
#include "commands.hpp"
#include "local_run.hpp"
#include "report.hpp"
#include "spike_reader.hpp"
#include "structure_reader.hpp"
#include "weights_reader.hpp"

#include "dnnc/core/files.hpp"
#include "dnnc/model/check.hpp"
#include "dnnc/node_server/local_cluster.hpp"
#include "dnnc/protocol/csv.hpp"
#include "dnnc/protocol/snapshot.hpp"
#include "dnnc/protocol/xml.hpp"

#include <algorithm>
#include <csignal>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include <unistd.h>

namespace dnnc::cli {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

volatile bool interrupted = false;
extern "C" void on_interrupt(int) { interrupted = true; }

struct run_options {
    std::string file, cluster_file, input, output, spikes, record_file, weights, report, structure, log_level = "warn", http_bind = "127.0.0.1";
    int nodes = 0, batch = 0;  // batch 0: as the document says
    std::string weight_precision;  // empty: as the document says
    int http = -1;             // the lead's live page
    bool running_cluster = false;
    std::int64_t ticks = 1000;
    std::int64_t weights_every = 0;  // 0: the final weights only
    bool json = false;
    client_options client;
};

int run_run(const run_options& o) {
    model::document doc =
        protocol::is_binary_snapshot_path(o.file) ? protocol::load_snapshot(o.file) : protocol::load_document(o.file);
    if (!doc.net) throw usage_error(o.file + ": the document has no <network>");
    if (!o.cluster_file.empty()) {
        const auto c = protocol::load_document(o.cluster_file);
        if (!c.clu) throw usage_error(o.cluster_file + ": the document has no <cluster>");
        doc.clu = c.clu;
    } else if (o.nodes > 0) {
        doc.clu.reset();  // chosen below, once its nodes have picked their ports
    }
    if (!doc.clu && o.nodes == 0) throw usage_error(o.file + ": no <cluster>; give --cluster C.xml or --nodes K");
    if (!o.structure.empty() && !doc.net->structural)
        throw usage_error(o.file + ": --structure: the network has no <structural-plasticity>");
    if (doc.run) doc.run->clock.clear();  // the clock is the lead of this cluster
    if (o.batch > 0) {
        if (!doc.run) doc.run.emplace();
        doc.run->batch = o.batch;
    }
    if (!o.weight_precision.empty()) {
        if (!doc.run) doc.run.emplace();
        doc.run->half_weights = o.weight_precision == "half";
    }
    const auto& records = doc.net->records;
    if (!o.record_file.empty() && std::all_of(records.begin(), records.end(), [](const model::recording& r) { return r.variables.empty(); }))
        throw usage_error(o.file + ": --record-file: the network samples no variables (add <record neurons=\"...\" variables=\"...\"/>)");
    // --spikes without a <record> of spikes records every spiking neuron.
    if (!o.spikes.empty() && !model::records_spikes(records)) {
        auto spiking = [](const auto& group) { return model::is_spiking(group.params.model); };
        if (std::none_of(doc.net->neurons.begin(), doc.net->neurons.end(), spiking) &&
            std::none_of(doc.net->populations.begin(), doc.net->populations.end(), spiking))
            throw usage_error(o.file + ": --spikes: the network has no neuron of a spiking model (lif)");
        doc.net->records.emplace_back();
    }
    // The run's own files, in a folder removed however the run ends (after the cluster, whose
    // kept logs are elsewhere): the document the cluster is started from and submitted, with
    // the chosen cluster, and the spikes a report reads when --spikes names no file.
    const auto dir = fs::temp_directory_path() / ("dnnc-run-" + std::to_string(getpid()));
    fs::create_directories(dir);
    const removed_at_exit run_folder(dir.string());
    const std::string config = (dir / "run.xml").string();
    // Spikes are read while the run goes when they are wanted, in a file or in the summary.
    const std::string spikes_path =
        !o.spikes.empty() || o.report.empty() || doc.net->records.empty() ? o.spikes : (dir / "report-spikes.csv").string();
    const bool read_spikes = (!doc.net->records.empty() && (!spikes_path.empty() || o.json)) || !o.record_file.empty();
    model::check_document(doc);
    const auto inputs = o.input.empty() ? std::vector<protocol::input_row>{} : protocol::read_input_csv(o.input);
    protocol::check_input_lanes(inputs, doc.run ? doc.run->batch : 1);
    const model::cluster planned = doc.clu ? *doc.clu : local_cluster_of(o.nodes);
    if (o.running_cluster && !doc.clu) throw usage_error("--running-cluster needs the cluster's document (--cluster or <cluster>)");
    if (!o.running_cluster && node_server::local_nodes(planned).size() != planned.nodes.size())
        throw usage_error("dnnc run needs every node on this machine (127.0.0.0/8)");

    std::signal(SIGINT, on_interrupt);
    // On a running cluster its owner (dnnc-node --mpi) decides when the job ends, after it
    // has checkpointed the network, and then interrupts this run with SIGINT: a scheduler's
    // SIGTERM or SIGUSR1 to every process of the job is not for this one.
    std::signal(SIGTERM, o.running_cluster ? SIG_IGN : on_interrupt);
    if (o.running_cluster) std::signal(SIGUSR1, SIG_IGN);
    node_server::launch_options launch;
    launch.node_binary = node_binary();
    launch.secret_file = o.client.secret_file;
    launch.log_level = o.log_level;
    launch.http_port = o.http;
    launch.http_bind = o.http_bind;
    launch.owner_pid = getpid();
    json summary, populations, histograms;
    protocol::run_progress progress;
    std::optional<protocol::node_status> final_status;
    std::int64_t spikes_lost = 0, samples_lost = 0, rows_missed = 0;
    std::uint64_t weights_written = 0, structure_rows = 0;
    std::vector<std::string> weight_samples;
    const auto started = std::chrono::steady_clock::now();
    double run_seconds = 0;  // stepping, without the weights written between steps
    {
        std::optional<cluster_session> session;
        if (!o.running_cluster) session.emplace(planned, config, launch);
        client_options client = o.client;
        if (session) client.secret_file = session->secret_file();
        doc.clu = session ? session->listening(planned) : planned;
        model::check_cluster(*doc.clu);
        const std::string text = submission_of(doc);
        std::ofstream(config) << text;
        const auto& lead_node = *std::find_if(doc.clu->nodes.begin(), doc.clu->nodes.end(),
                                              [&](const auto& n) { return n.id == doc.clu->lead; });
        std::string lead = lead_node.host + ":" + std::to_string(lead_node.port);
        if (interrupted) throw error("interrupted");
        summary = json::parse(call_node(client, lead, {protocol::message_type::submit, 0, 0, text}).payload);
        if (o.http >= 0) {
            const auto s = status_of(client, lead);
            if (s.http) {
                const auto secret = client.secret_for(lead);
                std::cerr << "dnnc: live page on http://" << s.http->address << "/"
                          << (secret.empty() ? "" : "?token=" + node_server::http_token(secret)) << std::endl;
            }
        }
        if (!inputs.empty()) {
            protocol::control_request input(protocol::control_request::kind::input);
            input.rows = inputs;
            control(client, lead, input);
        }
        std::ofstream spikes_file;
        if (!spikes_path.empty()) {
            spikes_file.open(spikes_path);
            if (!spikes_file) throw io_error("cannot write " + spikes_path);
        }
        std::ofstream samples_file;
        if (!o.record_file.empty()) {
            samples_file.open(o.record_file);
            if (!samples_file) throw io_error("cannot write " + o.record_file);
        }
        std::optional<spike_reader> spikes;
        if (read_spikes) {
            spikes.emplace(client, lead, summary["tick"].get<std::int64_t>(), spikes_path.empty() ? nullptr : &spikes_file);
            if (!o.record_file.empty()) spikes->record_samples(&samples_file, nullptr);
        }
        std::ofstream out_file;
        std::optional<output_reader> outputs;
        if (!o.output.empty()) {
            out_file.open(o.output);
            if (!out_file) throw io_error("cannot write " + o.output);
            outputs.emplace(client, lead, summary["tick"].get<std::int64_t>(), out_file, /*raster=*/false);
        }
        auto watch = takeover_watch(doc);
        watch.spikes = spikes ? &*spikes : nullptr;
        watch.outputs = outputs ? &*outputs : nullptr;
        watch.interrupted = &interrupted;
        // With --weights-every the run goes in steps of that many ticks: after each but the
        // last the network is frozen, and its weights are written (and binned for the live
        // page) before the next step. Freezing changes nothing a run computes: the spikes
        // and weights are those of one step.
        bool took_over = false;
        for (std::int64_t done = 0; done < o.ticks;) {
            const auto step = o.weights_every > 0 ? std::min(o.weights_every, o.ticks - done) : o.ticks;
            const auto step_start = std::chrono::steady_clock::now();
            const auto stepped = step_and_read(client, lead, step, watch);
            progress = stepped.progress;
            took_over = took_over || stepped.took_over;
            // The lead's own time for the step (from its grant to the last row), else ours,
            // which is only as fine as our polling. After a takeover or a grow, ours: the new
            // run's step began at its checkpoint, or at the grow.
            const double ours = std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start).count();
            run_seconds += stepped.took_over || !doc.net->grows.empty() ? ours : progress.last_step_seconds.value_or(ours);
            done += step;
            if (done == o.ticks) break;
            weight_samples.push_back(weights_sample_path(o.weights, progress.completed + 1));
            save_weights(client, lead, weight_samples.back(), "");
            read_weight_histograms(client, lead);  // for the live page
        }
        if (!o.weights.empty()) weights_written = save_weights(client, lead, o.weights, "");
        if (!o.structure.empty()) structure_rows = save_structure(client, lead, o.structure);
        histograms = read_weight_histograms(client, lead);
        if (took_over || !doc.net->grows.empty()) {  // the summary names the nodes that ran to the end, grown
            const auto st = status_of(client, lead);
            json nodes = json::array();
            if (st.cluster)
                for (const auto& n : st.cluster->nodes) nodes.push_back({{"id", n.id}, {"neurons", n.neurons}});
            summary["nodes"] = nodes;
        }
        const auto last = progress.completed;
        if (spikes) {
            populations = spikes->rates(last + 1 - summary["tick"].get<std::int64_t>());
            spikes_lost = spikes->lost();
            samples_lost = spikes->samples_lost();
        }
        if (outputs) rows_missed = outputs->missed();
        if (!o.report.empty())
            final_status = status_of(client, lead);
    }

    const auto ticks = progress.completed + 1 - summary["tick"].get<std::int64_t>();
    json report{{"network", summary["network"]}, {"nodes", summary["nodes"]}, {"ticks", ticks}, {"seconds", run_seconds},
                {"ticks_per_second", run_seconds > 0 ? static_cast<double>(ticks) / run_seconds : 0.0},
                {"signals_sent", progress.signals_sent}, {"signals_dropped", progress.signals_dropped},
                {"packets_missing", progress.packets_missing}, {"edge_cut", summary["edge_cut"]},
                {"sync", progress.sync}, {"setup_seconds", summary["seconds"]},
                {"total_seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()}};
    if (summary.contains("placement")) report["placement"] = summary["placement"];
    if (read_spikes) report["populations"] = populations;
    if (!histograms["projections"].empty()) report["weight_histograms"] = histograms;
    if (rows_missed > 0)
        throw error("the lead dropped " + std::to_string(rows_missed) + " output rows that were not read in time");
    if (spikes_lost > 0)
        throw error("the lead dropped " + std::to_string(spikes_lost) + " recorded spikes that were not read in time");
    if (samples_lost > 0)
        throw error("the lead dropped " + std::to_string(samples_lost) + " sampled values that were not read in time");
    if (!o.report.empty()) {
        spike_table recorded;
        if (!spikes_path.empty()) {
            recorded = read_spike_csv(spikes_path);
            if (final_status && final_status->cluster)
                for (auto& p : recorded.populations)
                    for (const auto& q : final_status->cluster->populations)
                        if (q.id == p.id) p.size = static_cast<std::int64_t>(q.size);
        }
        std::ofstream(o.report) << report_html(recorded, final_status ? &*final_status : nullptr, report);
        if (!o.json) std::printf("report: %s\n", o.report.c_str());
    }
    if (o.json) {
        std::cout << report.dump(2) << '\n';
        return 0;
    }
    std::printf("ran %lld ticks of '%s' on %zu nodes (%s) in %.2f s: %.0f ticks/s\n", static_cast<long long>(ticks),
                summary["network"].get<std::string>().c_str(), summary["nodes"].size(), report["sync"].get<std::string>().c_str(),
                run_seconds, report["ticks_per_second"].get<double>());
    std::printf("signals sent %lld, dropped %lld, packets missing %lld; edge cut %lld\n",
                static_cast<long long>(progress.signals_sent), static_cast<long long>(progress.signals_dropped),
                static_cast<long long>(progress.packets_missing), summary["edge_cut"].get<long long>());
    std::printf("neurons per node:");
    for (const auto& n : summary["nodes"]) std::printf(" %s %zu", n["id"].get<std::string>().c_str(), n["neurons"].get<std::size_t>());
    std::printf("\n");
    if (summary.contains("placement")) std::printf("%s\n", summary["placement"].get<std::string>().c_str());
    if (!o.output.empty()) std::printf("outputs: %s (%lld rows)\n", o.output.c_str(), static_cast<long long>(ticks));
    if (!o.spikes.empty()) {
        std::int64_t count = 0;
        for (const auto& p : populations) count += p["spikes"].get<std::int64_t>();
        std::printf("spikes: %s (%lld)\n", o.spikes.c_str(), static_cast<long long>(count));
    }
    if (!o.record_file.empty()) std::printf("recorded variables: %s\n", o.record_file.c_str());
    if (!o.structure.empty()) std::printf("structure: %s (%llu rows)\n", o.structure.c_str(), static_cast<unsigned long long>(structure_rows));
    if (!o.weights.empty()) std::printf("weights: %s (%llu synapses)\n", o.weights.c_str(), static_cast<unsigned long long>(weights_written));
    if (!weight_samples.empty())
        std::printf("weights every %lld ticks: %s ... %s (%zu files)\n", static_cast<long long>(o.weights_every),
                    weight_samples.front().c_str(), weight_samples.back().c_str(), weight_samples.size());
    return 0;
}

}  // namespace

void add_run(CLI::App& app, action& chosen) {
    auto o = std::make_shared<run_options>();
    auto* cmd = app.add_subcommand("run", "Run a network on a local cluster: up, submit, run, outputs, down");
    cmd->add_option("file", o->file, "DNNC document")->required();
    auto* cluster = cmd->add_option("--cluster", o->cluster_file, "Use this document's <cluster> instead");
    auto* running = cmd->add_flag("--running-cluster", o->running_cluster,
                                  "The cluster's nodes are already running (e.g. under mpirun): run on them and leave them up");
    cmd->add_option("--nodes", o->nodes, "Use K local nodes instead of the document's cluster")
        ->check(CLI::Range(1, 64))
        ->excludes(cluster)
        ->excludes(running);
    cmd->add_option("--ticks", o->ticks, "Ticks to run (default 1000)")->check(CLI::Range(std::int64_t{1}, model::max_tick_count));
    cmd->add_option("--input", o->input, "Input CSV: tick,target,value[,lane]");
    cmd->add_option("--batch", o->batch, "Run B lanes side by side, one input pattern each (overrides <run batch>)")
        ->check(CLI::Range(1, static_cast<int>(model::max_batch)));
    cmd->add_option("--weight-precision", o->weight_precision,
                    "single or half: synapse weights in 32 or 16 bits (overrides <run weight-precision>)")
        ->check(CLI::IsMember({"single", "half"}));
    cmd->add_option("--output", o->output, "Write the outputs here as CSV");
    cmd->add_option("--spikes", o->spikes,
                    "Write the recorded spikes here as CSV (t_ms,population,index); without <record>, every spiking neuron's");
    cmd->add_option("--record-file", o->record_file,
                    "Write the variables that <record variables> sample here as CSV (t_ms,population,index,variable,value)");
    auto* weights = cmd->add_option("--weights", o->weights,
                                    "Write the plastic synapses' final weights here as CSV (projection,source,target,weight)");
    cmd->add_option("--weights-every", o->weights_every,
                    "Also write the weights every T ticks, those after t ticks into W-t.csv beside W.csv (the run freezes there)")
        ->needs(weights)
        ->check(CLI::Range(std::int64_t{1}, model::max_tick_count));
    cmd->add_option("--structure", o->structure,
                    "Write a row per population at every structural update here as CSV "
                    "(t_ms,population,mean_ca,connections_in,created,deleted)");
    cmd->add_option("--log-level", o->log_level, "The nodes' log level (default warn)");
    cmd->add_option("--report", o->report, "Write one self-contained HTML report of the run here (docs/live.md)");
    cmd->add_option("--http", o->http, "The nodes serve the live page while the run lasts: the lead on this port, the others on the next ones (0: free ones)")
        ->check(CLI::Range(0, 65535));
    cmd->add_option("--http-bind", o->http_bind, "Address of the live page (default 127.0.0.1)");
    cmd->add_flag("--json", o->json, "Print the summary as JSON");
    o->client.add_to(cmd);
    cmd->callback([o, &chosen] { chosen = [o] { return run_run(*o); }; });
}

}  // namespace dnnc::cli
