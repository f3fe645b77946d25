// bench_cuba: the CUBA network (Vogels & Abbott 2005; Brette et al. 2007; Brian2's
// examples/CUBA.py) on one engine, the peer being Brian2's C++ standalone mode on the same
// network (bench/sim/brian_cuba.py, run by scripts/bench-sim.sh). Measures the wall time of
// --ticks ticks of 0.1 ms (default 10,000 = 1 s simulated) and the mean firing rate.
//
// Fair because both sides run the same model, parameters and connection probability from a
// compiled program, and both exclude setup: here document reading, expansion and engine
// construction; in Brian2 code generation, compilation and synapse creation (its own
// simulation-loop timer). The engine lists each tick's spikes, as a node recording every
// spike does (spec.list_spikes: inside compute()), and they are counted after every tick
// from that list, timed apart from compute() and reported separately (count_s). compute_cpu_s
// is the calling thread's CPU time in compute(): with --threads 1 all of it, and unlike the
// wall time it does not grow while other programs take the cores. median_tick_us and
// p90_tick_us are the ticks' wall times at those quantiles: what a typical tick costs, which
// slow phases of a machine within a run move less than the total (not what the run took).
//
// Options: --neurons N (4000) --p P (0.02) --threads T (0: all cores) --ticks K (10000)
//          --document FILE (default: examples/cuba/cuba.xml for 4,000 neurons at p = 0.02,
//          otherwise the same network generated for N and p into a temporary folder).
// The engine is built as a node builds its share, every neuron on the one node, from the
// document's rules (whole_network() would list synapses without their models, and expanding
// the full-scale microcircuit's synapses first takes minutes).
// Prints one JSON object.
#include "sim_bench.hpp"

#include "dnnc/sim/engine.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

int main(int argc, char** argv) try {
    using clock = std::chrono::steady_clock;
    const dnnc::bench::options opt(argc, argv);
    const long neurons = opt.integer("neurons", 4000);
    const double p = opt.number("p", 0.02);
    const long ticks = opt.integer("ticks", 10000);
    const dnnc::bench::thread_cap cap(opt.integer("threads", 0));

    std::string document = opt.text("document", "");
    if (document.empty()) {
        document = neurons == 4000 && p == 0.02
                       ? std::string(DNNC_SOURCE_DIR "/examples/cuba/cuba.xml")
                       : dnnc::bench::write_temp_document("cuba-" + std::to_string(neurons) + ".xml",
                                                          dnnc::bench::cuba_document(neurons, p));
    }

    const auto setup_start = clock::now();
    const auto doc = dnnc::protocol::load_document(document);
    if (!doc.net) throw std::invalid_argument(document + " has no network");
    const auto net = dnnc::model::expand_neurons(*doc.net);
    dnnc::sim::engine engine = [&] {
        auto spec = dnnc::sim::whole_network(net);
        spec.history = dnnc::model::longest_delay(*doc.net);
        spec.in_begin.assign(spec.neurons.size() + 1, 0);
        spec.half_weights = doc.run && doc.run->half_weights;
        spec.list_spikes = true;
        return dnnc::sim::engine(spec, *doc.net);
    }();
    const double setup_s = dnnc::bench::seconds_since(setup_start);

    const auto n = static_cast<dnnc::sim::global_index>(engine.neuron_count());
    double compute_s = 0, count_s = 0, compute_cpu_s = 0;
    long long spikes = 0;
    std::vector<double> tick_s(static_cast<std::size_t>(ticks));
    for (long t = 0; t < ticks; ++t) {
        const double cpu = dnnc::bench::thread_cpu_s();
        const auto a = clock::now();
        engine.compute();
        const auto b = clock::now();
        compute_cpu_s += dnnc::bench::thread_cpu_s() - cpu;
        spikes += static_cast<long long>(engine.spiked().size());
        const auto c = clock::now();
        tick_s[static_cast<std::size_t>(t)] = std::chrono::duration<double>(b - a).count();
        compute_s += tick_s[static_cast<std::size_t>(t)];
        count_s += std::chrono::duration<double>(c - b).count();
    }
    const double simulated_s = static_cast<double>(ticks) * net.params_of(0).dt / 1000.0;
    const auto counts = engine.sparse_path_counts();
    // The tick time at quantile q (0 without ticks).
    auto quantile_us = [&tick_s](double q) {
        if (tick_s.empty()) return 0.0;
        const auto k = static_cast<std::size_t>(q * static_cast<double>(tick_s.size() - 1));
        std::nth_element(tick_s.begin(), tick_s.begin() + static_cast<std::ptrdiff_t>(k), tick_s.end());
        return 1e6 * tick_s[k];
    };
    const double median_us = quantile_us(0.5), p90_us = quantile_us(0.9);
    std::printf(
        "{\"neurons\": %lld, \"synapses\": %zu, \"threads\": %d, \"ticks\": %ld, \"setup_s\": %.3f, "
        "\"compute_s\": %.6f, \"median_tick_us\": %.2f, \"p90_tick_us\": %.2f, \"compute_cpu_s\": %.6f, \"count_s\": %.6f, \"rate_hz\": %.6f, \"split_ticks\": %llu, "
        "\"unordered_terms\": %llu, \"joined_reads\": %llu, \"draws_beside_ticks\": %llu, \"early_draws_ticks\": %llu, \"target_free_ticks\": %llu, \"threaded_step_ticks\": %llu, \"document\": \"%s\"}\n",
        static_cast<long long>(n), static_cast<std::size_t>(engine.synapse_count()), cap.threads(), ticks, setup_s, compute_s,
        median_us, p90_us, compute_cpu_s, count_s,
        static_cast<double>(spikes) / static_cast<double>(n) / simulated_s,
        static_cast<unsigned long long>(counts.split_ticks), static_cast<unsigned long long>(counts.unordered_terms),
        static_cast<unsigned long long>(counts.joined_reads), static_cast<unsigned long long>(counts.draws_beside_ticks),
        static_cast<unsigned long long>(counts.early_draws_ticks),
        static_cast<unsigned long long>(counts.target_free_ticks), static_cast<unsigned long long>(counts.threaded_step_ticks),
        document.c_str());
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cuba: %s\n", e.what());
    return 1;
}
