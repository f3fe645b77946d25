// bench_roofline: what this machine can do for the microcircuit's tick, measured in the same
// run as the full-scale microcircuit itself, and dnnc's rates as fractions of it (issue 33).
//
// 1. The network (--document, default examples/microcircuit/microcircuit.xml) built as a
//    node builds its share, every neuron on the one engine, then --ms of simulated time on
//    TBB's threads: the wall time of compute() alone (set-up excluded), the calling
//    thread's CPU time in it, and the spikes each tick lists.
// 2. The roofline for synaptic events: the network's own fan-out, read back from the engine
//    (every synapse's source, target, weight and delay), stored per source as the sparse
//    path stores synapses with their own weight and delay (sim/src/fan_out.cpp): 12-byte
//    entries (synapse, target word, weight) ordered by delay, ascending target within one
//    delay, and a directory of where each delay's entries end. The run's spikes are replayed
//    through it: at tick t, for each delay d, each source that spiked at t - d adds its
//    weight into the excitatory or inhibitory sum of each target (two floats per neuron),
//    its ranges prefetched first as the engine does. The replay reads exactly the entries
//    the engine reads in the run, so its count is dnnc's synaptic events. It leaves out
//    what the engine adds to the bare accumulation (the search of each segment's delay
//    directory, a range per target population rather than one per delay, the canonical
//    order of sums with several terms in a tick), so it bounds the engine from above. The
//    targets are split into one part per thread, each with its own table and sums (as nodes
//    split them), so no two threads add into one sum; with one thread the parts run in turn.
// 3. Stream bandwidth: a STREAM triad over float arrays of --stream-mib in all (far beyond
//    the last-level cache).
// 4. The update cost: the same neurons with their Poisson drive and no synapses, through
//    engine::compute() (model step, Poisson draws, spike scan), the calling thread's CPU time
//    per neuron and tick, best of --repeats runs of --update-ticks ticks. Without synapses to
//    scan, the engine steps a network of this size on one thread (engine.cpp: threads from
//    512 x 512 neurons, or after a tick whose scan ran on threads), so the all-thread limit
//    is that rate times the threads, not measured.
// Limits 2 and 3 are measured on one thread and on all of TBB's threads (--threads).
//
// Options: --document FILE --ms M (200) --threads T (0: all cores) --repeats R (3)
//          --update-ticks K (500) --stream-mib M (2048)
// Prints one JSON object.
#include "sim_bench.hpp"

#include "dnnc/sim/engine.hpp"

#include <sys/resource.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace {

using dnnc::sim::global_index;
using spike_train = std::vector<std::vector<std::uint32_t>>;  // per tick, the sources that spiked

constexpr int stream_passes = 5;

// The sparse path's entry for a synapse with its own weight and delay (fan_out.hpp).
struct fan_entry {
    std::uint32_t synapse;  // canonical index, ascending with the target
    std::uint32_t to;       // target << 1 | inhibitory
    float weight;
};
static_assert(sizeof(fan_entry) == 12, "the engine's three-word entry");

// The fan-out of the sources into the targets [first, last): source s's entries are
// entries[begin[s], begin[s + 1]), those of delays up to d ending delay_end[s * (max_delay + 1) + d]
// after begin[s].
struct fan_table {
    global_index first = 0, last = 0;
    std::vector<std::uint64_t> begin;
    std::vector<std::uint32_t> delay_end;
    std::vector<fan_entry> entries;
    std::vector<float> excitatory, inhibitory;
};

fan_table read_fan_out(const dnnc::sim::engine& e, global_index first, global_index last, std::size_t sources, int max_delay) {
    const std::size_t stride = static_cast<std::size_t>(max_delay) + 1;
    fan_table f;
    f.first = first;
    f.last = last;
    // Counts per (source, delay), then their running sums: delay_end, begin.
    f.delay_end.assign(sources * stride, 0);
    for (global_index k = first; k < last; ++k)
        for (const auto& s : e.incoming(k)) ++f.delay_end[static_cast<std::size_t>(s.source) * stride + s.delay];
    f.begin.assign(sources + 1, 0);
    for (std::size_t s = 0; s < sources; ++s) {
        std::uint32_t* const ends = f.delay_end.data() + s * stride;
        for (std::size_t d = 1; d < stride; ++d) ends[d] += ends[d - 1];
        f.begin[s + 1] = f.begin[s] + ends[max_delay];
    }
    // Targets in ascending order, so each (source, delay) range ascends by target.
    std::vector<std::uint32_t> cursor(sources * stride, 0);
    for (std::size_t s = 0; s < sources; ++s)
        for (std::size_t d = 1; d < stride; ++d) cursor[s * stride + d] = f.delay_end[s * stride + d - 1];
    f.entries.resize(f.begin[sources]);
    std::uint32_t synapse = 0;
    for (global_index k = first; k < last; ++k)
        for (const auto& s : e.incoming(k)) {
            const auto source = static_cast<std::size_t>(s.source);
            const auto to = static_cast<std::uint32_t>(k - first) << 1 | (s.weight < 0.0f);
            f.entries[f.begin[source] + cursor[source * stride + s.delay]++] = {synapse++, to, s.weight};
        }
    f.excitatory.assign(static_cast<std::size_t>(last - first), 0.0f);
    f.inhibitory.assign(f.excitatory.size(), 0.0f);
    return f;
}

// The run's spikes through one part's table, tick by tick; the entries read.
std::uint64_t replay(fan_table& f, const spike_train& spikes, int max_delay) {
    const std::size_t stride = static_cast<std::size_t>(max_delay) + 1;
    float* const into[] = {f.excitatory.data(), f.inhibitory.data()};
    std::vector<std::pair<const fan_entry*, const fan_entry*>> ranges;
    std::uint64_t events = 0;
    const auto ticks = static_cast<long>(spikes.size());
    for (long t = 0; t < ticks; ++t) {
        ranges.clear();
        for (int d = 1; d <= max_delay && d <= t; ++d)
            for (const auto s : spikes[static_cast<std::size_t>(t - d)]) {
                const fan_entry* const block = f.entries.data() + f.begin[s];
                const std::uint32_t* const ends = f.delay_end.data() + s * stride;
                if (ends[d] > ends[d - 1]) ranges.emplace_back(block + ends[d - 1], block + ends[d]);
            }
        for (const auto& [b, e] : ranges)
            for (const char* p = reinterpret_cast<const char*>(b); p < reinterpret_cast<const char*>(e); p += 64) __builtin_prefetch(p);
        for (const auto& [b, e] : ranges) {
            for (const fan_entry* p = b; p < e; ++p) into[p->to & 1][p->to >> 1] += p->weight;
            events += static_cast<std::uint64_t>(e - b);
        }
    }
    return events;
}

// Best of `repeats` replays over every part on at most `threads` threads: (events, seconds).
std::pair<std::uint64_t, double> replay_rate(std::vector<fan_table>& parts, const spike_train& spikes, int max_delay, int threads,
                                             long repeats) {
    const dnnc::bench::thread_cap cap(threads);
    std::uint64_t events = 0;
    double best = std::numeric_limits<double>::max();
    for (long r = 0; r < repeats; ++r) {
        std::vector<std::uint64_t> counted(parts.size(), 0);
        const auto start = std::chrono::steady_clock::now();
        tbb::parallel_for(std::size_t{0}, parts.size(), [&](std::size_t p) { counted[p] = replay(parts[p], spikes, max_delay); });
        best = std::min(best, dnnc::bench::seconds_since(start));
        events = 0;
        for (const auto c : counted) events += c;
    }
    return {events, best};
}

// The CPU time of every thread of this process so far.
double process_cpu_s() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double peak_resident_gb() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) / (1024.0 * 1024.0);
}

std::string load_average() {
    std::string one, five, fifteen;
    std::ifstream("/proc/loadavg") >> one >> five >> fifteen;
    return one + " " + five + " " + fifteen;
}

}  // namespace

int main(int argc, char** argv) try {
    const dnnc::bench::options opt(argc, argv);
    const std::string document = opt.text("document", DNNC_SOURCE_DIR "/examples/microcircuit/microcircuit.xml");
    const double ms = opt.number("ms", 200);
    const long repeats = opt.integer("repeats", 3);
    const long update_ticks = opt.integer("update-ticks", 500);
    const auto stream_bytes = static_cast<std::size_t>(opt.integer("stream-mib", 2048)) << 20;
    const dnnc::bench::thread_cap cap(opt.integer("threads", 0));  // a cap inside lowers it, never raises it
    const int threads = cap.threads();
    const std::string load_before = load_average();

    // 1. The network, as a node builds its share.
    const auto setup_start = std::chrono::steady_clock::now();
    const auto doc = dnnc::protocol::load_document(document);
    if (!doc.net) throw std::invalid_argument(document + " has no network");
    const auto neurons_only = dnnc::model::expand_neurons(*doc.net);
    const int max_delay = dnnc::model::longest_delay(*doc.net);
    auto spec = dnnc::sim::whole_network(neurons_only);
    const double dt_ms = spec.dt;
    const auto ticks = static_cast<long>(std::llround(ms / dt_ms));
    std::vector<fan_table> parts;
    spike_train spikes;
    std::uint64_t synapses = 0;
    double setup_s = 0, tick_s = 0, tick_cpu_s = 0, tick_process_cpu_s = 0;
    {
        spec.history = static_cast<std::uint16_t>(max_delay);
        spec.in_begin.assign(spec.neurons.size() + 1, 0);
        dnnc::sim::engine network(spec, *doc.net);
        setup_s = dnnc::bench::seconds_since(setup_start);
        synapses = network.synapse_count();
        const double process_cpu = process_cpu_s();
        for (long t = 0; t < ticks; ++t) {
            const double cpu = dnnc::bench::thread_cpu_s();
            const auto start = std::chrono::steady_clock::now();
            network.compute();
            tick_s += dnnc::bench::seconds_since(start);
            tick_cpu_s += dnnc::bench::thread_cpu_s() - cpu;
            spikes.emplace_back(network.spiked().begin(), network.spiked().end());
        }
        tick_process_cpu_s = process_cpu_s() - process_cpu;
        // 2. Its fan-out, one part of the targets per thread.
        const auto n = static_cast<global_index>(network.neuron_count());
        parts.resize(static_cast<std::size_t>(threads));
        tbb::parallel_for(std::size_t{0}, parts.size(), [&](std::size_t p) {
            const auto part = static_cast<global_index>(p);
            parts[p] = read_fan_out(network, n * part / threads, n * (part + 1) / threads, static_cast<std::size_t>(n), max_delay);
        });
    }
    const double neurons = static_cast<double>(spec.neurons.size());
    std::uint64_t spike_count = 0;
    for (const auto& s : spikes) spike_count += s.size();
    const auto [events, replay_1_s] = replay_rate(parts, spikes, max_delay, 1, repeats);
    const double replay_all_s = replay_rate(parts, spikes, max_delay, threads, repeats).second;
    std::uint64_t table_bytes = 0;
    for (const auto& p : parts) table_bytes += p.entries.size() * sizeof(fan_entry) + p.delay_end.size() * sizeof(std::uint32_t);
    parts = {};

    // 3. Stream bandwidth.
    const std::size_t stream_elements = stream_bytes / 3 / sizeof(float);
    const double triad_1 = [&] {
        const dnnc::bench::thread_cap one(1);
        return dnnc::bench::triad_bandwidth(stream_elements, stream_passes);
    }();
    const double triad_all = dnnc::bench::triad_bandwidth(stream_elements, stream_passes);

    // 4. The update cost: the same neurons and drive, no synapses.
    double update_cpu_s = std::numeric_limits<double>::max();
    std::size_t update_spikes = 0;
    for (long r = 0; r < repeats; ++r) {
        dnnc::sim::engine e(dnnc::sim::whole_network(neurons_only));
        const auto run = dnnc::bench::run_ticks_cpu(e, update_ticks);
        update_cpu_s = std::min(update_cpu_s, run.cpu_s);
        update_spikes = run.spikes;
    }

    // dnnc's rates against the limits.
    const double simulated_s = static_cast<double>(ticks) * dt_ms / 1000.0;
    const double updates = neurons * static_cast<double>(ticks);
    const double scatter_1 = static_cast<double>(events) / replay_1_s;
    const double scatter_all = static_cast<double>(events) / replay_all_s;
    const double update_1 = neurons * static_cast<double>(update_ticks) / update_cpu_s;
    const double update_all = update_1 * threads;
    // A tick can go no faster than its events at the scatter limit plus its updates at the
    // update limit: that sum's time over the run's ticks.
    const double bound_1_s = static_cast<double>(events) / scatter_1 + updates / update_1;
    const double bound_all_s = static_cast<double>(events) / scatter_all + updates / update_all;
    // dnnc's rates and fractions for the ticks' time `seconds`: their wall time, or their CPU
    // time in the process (what they would take on cores of their own).
    auto fractions = [&](const char* name, double seconds, const char* end) {
        const double events_per_s = static_cast<double>(events) / seconds, updates_per_s = updates / seconds;
        std::printf("  \"%s\": {\"seconds\": %.3f, \"s_per_simulated_s\": %.2f, \"events_per_s\": %.4g, \"neuron_updates_per_s\": %.4g, "
                    "\"events_of_scatter_1_thread\": %.4f, \"events_of_scatter_all_threads\": %.4f, "
                    "\"updates_of_update_1_thread\": %.4f, \"updates_of_update_all_threads\": %.4f, "
                    "\"bound_of_tick_1_thread\": %.4f, \"bound_of_tick_all_threads\": %.4f}%s\n",
                    name, seconds, seconds / simulated_s, events_per_s, updates_per_s, events_per_s / scatter_1,
                    events_per_s / scatter_all, updates_per_s / update_1, updates_per_s / update_all, bound_1_s / seconds,
                    bound_all_s / seconds, end);
    };
    std::printf("{\n  \"document\": \"%s\", \"neurons\": %.0f, \"synapses\": %llu, \"threads\": %d, \"dt_ms\": %g,\n", document.c_str(),
                neurons, static_cast<unsigned long long>(synapses), threads, dt_ms);
    std::printf("  \"load_before\": \"%s\", \"load_after\": \"%s\", \"peak_resident_gb\": %.2f,\n", load_before.c_str(),
                load_average().c_str(), peak_resident_gb());
    std::printf("  \"run\": {\"ms\": %g, \"ticks\": %ld, \"setup_s\": %.1f, \"tick_cpu_s_calling_thread\": %.3f, \"spikes\": %llu, "
                "\"rate_hz\": %.3f, \"synaptic_events\": %llu},\n",
                ms, ticks, setup_s, tick_cpu_s, static_cast<unsigned long long>(spike_count),
                static_cast<double>(spike_count) / neurons / simulated_s, static_cast<unsigned long long>(events));
    std::printf("  \"stream_triad_gb_s\": {\"1_thread\": %.2f, \"all_threads\": %.2f, \"mib\": %zu},\n", triad_1 / 1e9,
                triad_all / 1e9, stream_bytes >> 20);
    std::printf("  \"scatter_events_per_s\": {\"1_thread\": %.4g, \"all_threads\": %.4g, \"table_gb\": %.2f, \"ns_per_event_1_thread\": %.2f},\n",
                scatter_1, scatter_all, static_cast<double>(table_bytes) / 1e9, 1e9 / scatter_1);
    std::printf("  \"update_per_s\": {\"1_thread\": %.4g, \"all_threads_ideal\": %.4g, \"ns_per_neuron_tick\": %.2f, "
                "\"ticks\": %ld, \"rate_hz_unconnected\": %.3f},\n",
                update_1, update_all, 1e9 / update_1, update_ticks,
                static_cast<double>(update_spikes) / neurons / (static_cast<double>(update_ticks) * dt_ms / 1000.0));
    std::printf("  \"bound_s_per_simulated_s\": {\"1_thread\": %.2f, \"all_threads\": %.2f},\n", bound_1_s / simulated_s,
                bound_all_s / simulated_s);
    fractions("dnnc_wall", tick_s, ",");
    fractions("dnnc_cpu", tick_process_cpu_s, "\n}");
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "bench_roofline: %s\n", e.what());
    return 1;
}
