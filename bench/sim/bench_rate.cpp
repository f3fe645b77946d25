// bench_rate: synaptic updates per second per core of a rate network — 100,000 `tanh`
// neurons with a random recurrent projection at p = 0.001 (about 10M synapses) — against
// the memory-bandwidth bound measured in the same run.
//
// The engine pulls every synapse every tick (docs: tick semantics), streaming its synapse
// arrays from memory; the arrays are far larger than the per-core caches, so memory
// bandwidth is the limit. Per synapse and tick the engine reads its source slot (uint32)
// and weight (float) from parallel arrays, and its delay (uint16) unless every delay is 1
// (sim/src/engine.cpp): 8 bytes here, 10 with mixed delays. The source's output comes from one history row of 100,000 floats (400 KB), which
// stays in cache, and per-neuron data (offsets, coefficients, state) is about 1% of the
// traffic at 100 synapses per neuron; neither is counted, so the bound is generous. The
// bandwidth is that of a read-only kernel (the synapse arrays are only read) over an array
// several times larger than the last-level cache, run on the same number of threads; a
// STREAM triad is printed beside it for reference, and so is the read kernel over an array
// of the engine's synapse footprint, the tighter bound should those arrays stay in cache.
//
// Options: --neurons N (100000) --p P (0.001) --ticks K (100) --threads T (0: all cores)
//          --bandwidth-mib M (2048: size of the read kernel's array)
// Prints one JSON object.
#include "sim_bench.hpp"

#include "dnnc/sim/engine.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr int bandwidth_passes = 5;

std::string rate_document(long neurons, double p) {
    std::ostringstream x;
    x.precision(17);
    x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<dnnc xmlns=\"urn:dnnc:1\">\n"
      << "  <network name=\"rate\">\n"
      << "    <population id=\"R\" size=\"" << neurons << "\" model=\"tanh\" bias=\"0.1\"/>\n"
      << "    <projection from=\"R\" to=\"R\" kind=\"random\" p=\"" << p << "\" weight=\"0.05\" seed=\"3\"/>\n"
      << "  </network>\n"
      << "</dnnc>\n";
    return x.str();
}

// Best-of-passes bytes per second of summing an array of `bytes` in parallel. Integer
// addition lets the compiler vectorise the sum, so the kernel is bound by memory, not by
// the latency of a chain of additions.
double read_bandwidth(std::size_t bytes) {
    const std::vector<std::uint32_t> data(bytes / sizeof(std::uint32_t), 1u);
    double best = std::numeric_limits<double>::max();
    volatile std::uint32_t sink = 0;
    for (int pass = 0; pass < bandwidth_passes; ++pass) {
        const auto start = std::chrono::steady_clock::now();
        sink = sink + tbb::parallel_reduce(
                          tbb::blocked_range<std::size_t>(0, data.size(), std::size_t{1} << 16), std::uint32_t{0},
                          [&](const tbb::blocked_range<std::size_t>& r, std::uint32_t acc) {
                              for (std::size_t i = r.begin(); i < r.end(); ++i) acc += data[i];
                              return acc;
                          },
                          [](std::uint32_t a, std::uint32_t b) { return a + b; });
        best = std::min(best, dnnc::bench::seconds_since(start));
    }
    return static_cast<double>(data.size() * sizeof(std::uint32_t)) / best;
}

}  // namespace

int main(int argc, char** argv) try {
    const dnnc::bench::options opt(argc, argv);
    const long neurons = opt.integer("neurons", 100000);
    const double p = opt.number("p", 0.001);
    const long ticks = opt.integer("ticks", 100);
    const auto bandwidth_bytes = static_cast<std::size_t>(opt.integer("bandwidth-mib", 2048)) << 20;
    const dnnc::bench::thread_cap cap(opt.integer("threads", 0));

    const std::string document =
        dnnc::bench::write_temp_document("rate-" + std::to_string(neurons) + ".xml", rate_document(neurons, p));
    const auto setup_start = std::chrono::steady_clock::now();
    const auto net = dnnc::bench::load_network(document);
    dnnc::sim::engine engine(dnnc::sim::whole_network(net));
    const double setup_s = dnnc::bench::seconds_since(setup_start);

    engine.compute();  // first touch of the state, not timed
    const auto start = std::chrono::steady_clock::now();
    for (long t = 0; t < ticks; ++t) engine.compute();
    const double compute_s = dnnc::bench::seconds_since(start);

    const double read_bps = read_bandwidth(bandwidth_bytes);
    const double triad_bps = dnnc::bench::triad_bandwidth(bandwidth_bytes / 2 / sizeof(float), bandwidth_passes);
    const double synapses = static_cast<double>(net.synapse_count());
    const bool all_delays_one = std::all_of(net.in_delay.begin(), net.in_delay.end(), [](auto d) { return d == 1; });
    const double bytes_per_synapse =
        sizeof(std::uint32_t) + sizeof(float) + (all_delays_one ? 0.0 : sizeof(std::uint16_t));
    // The same kernel over the engine's own synapse footprint, which may fit in the
    // last-level cache: the bound if the engine's arrays stay there between ticks.
    const double footprint_bps = read_bandwidth(static_cast<std::size_t>(synapses * bytes_per_synapse));
    const double threads = cap.threads();
    const double updates_per_core = synapses * static_cast<double>(ticks) / compute_s / threads;
    const double bound_per_core = read_bps / bytes_per_synapse / threads;
    const double footprint_bound_per_core = footprint_bps / bytes_per_synapse / threads;
    std::printf(
        "{\"neurons\": %zu, \"synapses\": %zu, \"threads\": %d, \"ticks\": %ld, \"setup_s\": %.3f, "
        "\"compute_s\": %.6f, \"updates_per_s_per_core\": %.6g, \"read_gb_s\": %.3f, \"triad_gb_s\": %.3f, "
        "\"bytes_per_synapse\": %.0f, \"bound_per_s_per_core\": %.6g, \"fraction_of_bound\": %.4f, "
        "\"footprint_gb_s\": %.3f, \"fraction_of_footprint_bound\": %.4f}\n",
        engine.neuron_count(), net.synapse_count(), cap.threads(), ticks, setup_s, compute_s, updates_per_core,
        read_bps / 1e9, triad_bps / 1e9, bytes_per_synapse, bound_per_core, updates_per_core / bound_per_core,
        footprint_bps / 1e9, updates_per_core / footprint_bound_per_core);
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "bench_rate: %s\n", e.what());
    return 1;
}
