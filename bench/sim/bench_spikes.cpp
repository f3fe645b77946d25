// bench_spikes: what recording every spike costs the CUBA ticks, against the same ticks
// without recording, in one process. A recording pass runs an engine that lists the neurons
// that spiked after every tick (engine::spiked()) and appends them to a recording, (tick,
// neuron) pairs, as a node does before it reports them; a plain pass runs an engine built
// with list_spikes off, which records nothing. Each pass builds a fresh engine and runs
// --ticks ticks; the passes alternate, --repeats of each, and each side keeps its fastest
// (the least disturbed by the machine's other work): cost = recording / plain - 1. One pass
// also counts spikes the way bench_cuba does, reading every neuron's output after each tick,
// for comparison.
//
// Limit: recording adds at most 10% to the ticks' time.
// Options: --neurons N (4000) --p P (0.02) --threads T (1) --ticks K (20000) --repeats R (5)
// Prints one JSON object; exits 1 when the cost is over the limit.
#include "sim_bench.hpp"

#include "dnnc/sim/engine.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <utility>
#include <vector>

int main(int argc, char** argv) try {
    using clock = std::chrono::steady_clock;
    const dnnc::bench::options opt(argc, argv);
    const long neurons = opt.integer("neurons", 4000);
    const double p = opt.number("p", 0.02);
    const long ticks = opt.integer("ticks", 20000);
    const long repeats = opt.integer("repeats", 5);
    const double limit = 0.10;
    const dnnc::bench::thread_cap cap(opt.integer("threads", 1));

    const std::string document = neurons == 4000 && p == 0.02
                                     ? std::string(DNNC_SOURCE_DIR "/examples/cuba/cuba.xml")
                                     : dnnc::bench::write_temp_document("cuba-" + std::to_string(neurons) + ".xml",
                                                                        dnnc::bench::cuba_document(neurons, p));
    const auto net = dnnc::bench::load_network(document);
    auto recording_spec = dnnc::sim::whole_network(net);
    auto plain_spec = recording_spec;
    plain_spec.list_spikes = false;
    const auto n = static_cast<dnnc::sim::global_index>(net.neuron_count());

    std::vector<std::pair<dnnc::sim::tick_t, dnnc::sim::global_index>> recorded;
    auto plain_pass = [&] {
        dnnc::sim::engine e(plain_spec);
        const auto start = clock::now();
        for (long t = 0; t < ticks; ++t) e.compute();
        return dnnc::bench::seconds_since(start);
    };
    auto recording_pass = [&] {
        dnnc::sim::engine e(recording_spec);
        recorded.clear();
        recorded.reserve(static_cast<std::size_t>(ticks) * 8);
        const auto start = clock::now();
        for (long t = 0; t < ticks; ++t) {
            e.compute();
            for (const auto i : e.spiked()) recorded.emplace_back(t, i);
        }
        return dnnc::bench::seconds_since(start);
    };
    double plain_s = 1e300, recording_s = 1e300;
    for (long r = 0; r < repeats; ++r) {
        plain_s = std::min(plain_s, plain_pass());
        recording_s = std::min(recording_s, recording_pass());
    }
    long long counted = 0;
    double reading_s;
    {
        dnnc::sim::engine e(plain_spec);
        const auto start = clock::now();
        for (long t = 0; t < ticks; ++t) {
            e.compute();
            for (dnnc::sim::global_index i = 0; i < n; ++i) counted += e.output(i) > 0.5f;
        }
        reading_s = dnnc::bench::seconds_since(start);
    }
    if (static_cast<long long>(recorded.size()) != counted)
        throw std::runtime_error("the recording holds " + std::to_string(recorded.size()) + " spikes, the outputs show " +
                                 std::to_string(counted));
    const double cost = recording_s / plain_s - 1.0;
    const double simulated_s = static_cast<double>(ticks) * net.dt / 1000.0;
    std::printf(
        "{\"neurons\": %lld, \"synapses\": %zu, \"threads\": %d, \"ticks\": %ld, \"spikes\": %zu, \"rate_hz\": %.3f, "
        "\"plain_s\": %.6f, \"recording_s\": %.6f, \"cost\": %.4f, \"limit\": %.2f, "
        "\"reading_every_output_s\": %.6f, \"reading_cost\": %.4f, \"within_limit\": %s}\n",
        static_cast<long long>(n), net.synapse_count(), cap.threads(), ticks, recorded.size(),
        static_cast<double>(recorded.size()) / static_cast<double>(n) / simulated_s, plain_s, recording_s, cost, limit, reading_s,
        reading_s / plain_s - 1.0, cost <= limit ? "true" : "false");
    return cost <= limit ? 0 : 1;
} catch (const std::exception& e) {
    std::fprintf(stderr, "bench_spikes: %s\n", e.what());
    return 1;
}
