// bench_build: how long a node takes to build its engine from its share, and the memory it
// needs at peak, per synapse. The network is the CUBA network of bench_cuba (two random
// projections, 80% excitatory) with --neurons N at probability --p; the node runs the first
// N / --nodes neurons and receives every other neuron from one peer (a superset, as the
// lead lists a projection's whole source range). The config goes through make_node_engine,
// as on a node server.
//
// Peak: the process's maximum resident set (getrusage) after the build, less the resident
// set before it (the parsed network, the libraries), over the synapses built. Run it once
// per measurement: the maximum covers the whole life of the process.
//
// Options: --neurons N (40000) --p P (0.02) --nodes K (1) --threads T (0: all cores)
//          --document FILE (that document's network instead of CUBA's, e.g. the full-scale
//          microcircuit: the set-up a node spends on it, issue #33).
// Prints one JSON object.
#include "sim_bench.hpp"

#include "dnnc/sim/engine.hpp"

#include <sys/resource.h>

#include <cstdio>
#include <exception>
#include <fstream>
#include <string>

namespace {

// Resident set now, from /proc/self/statm (pages), in bytes.
long long resident_bytes() {
    long long pages_total = 0, pages_resident = 0;
    std::ifstream("/proc/self/statm") >> pages_total >> pages_resident;
    return pages_resident * 4096;
}

long long peak_resident_bytes() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<long long>(usage.ru_maxrss) * 1024;
}

}  // namespace

int main(int argc, char** argv) try {
    const dnnc::bench::options opt(argc, argv);
    const long neurons = opt.integer("neurons", 40000);
    const double p = opt.number("p", 0.02);
    const long nodes = opt.integer("nodes", 1);
    const dnnc::bench::thread_cap cap(opt.integer("threads", 0));

    dnnc::model::node_config config;
    config.node = "n0";
    const std::string document = opt.text("document", "");
    const auto doc = document.empty() ? dnnc::protocol::parse_document(dnnc::bench::cuba_document(neurons, p), "cuba.xml")
                                      : dnnc::protocol::load_document(document);
    config.share = *doc.net;
    if (doc.run) config.run = *doc.run;  // its weight precision, as the lead sends it
    const auto expanded = dnnc::model::expand_neurons(*config.share);
    const long all = document.empty() ? neurons : static_cast<long>(expanded.neuron_count());
    const long local = all / std::max(1L, nodes);
    for (long i = 0; i < local; ++i) {
        dnnc::model::local_neuron n;
        n.id = expanded.neuron_name(static_cast<dnnc::model::neuron_index>(i));
        n.index = i;
        n.params = expanded.params_of(static_cast<dnnc::model::neuron_index>(i));
        n.seed = 42;
        config.neurons.push_back(n);
    }
    if (local < all) {
        dnnc::model::peer_route peer;
        peer.id = "n1";
        for (long i = local; i < all; ++i) peer.receives.push_back(i);
        config.peers.push_back(peer);
    }

    const long long before = resident_bytes();
    const auto start = std::chrono::steady_clock::now();
    const auto engine = dnnc::sim::make_node_engine(config);
    const double build_s = dnnc::bench::seconds_since(start);
    const long long peak = peak_resident_bytes();
    const long long after = resident_bytes();
    const auto synapses = engine.synapse_count();
    const auto per = [&](long long bytes) { return synapses ? static_cast<double>(bytes) / static_cast<double>(synapses) : 0.0; };
    std::printf(
        "{\"neurons\": %ld, \"local\": %ld, \"synapses\": %llu, \"threads\": %d, \"build_s\": %.3f, "
        "\"engine_bytes_per_synapse\": %.2f, \"resident_bytes_per_synapse\": %.2f, \"peak_bytes_per_synapse\": %.2f, "
        "\"before_bytes\": %lld, \"peak_bytes\": %lld}\n",
        all, local, static_cast<unsigned long long>(synapses), cap.threads(), build_s,
        per(static_cast<long long>(engine.synapse_bytes())), per(after - before), per(peak - before), before, peak);
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "bench_build: %s\n", e.what());
    return 1;
}
