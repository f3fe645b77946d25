// bench_structural_plasticity: what NEST's homeostatic structural plasticity costs a run. One
// network (default: examples/structural_plasticity/structural_plasticity.xml, NEST's example)
// runs --ticks ticks on --nodes engines in this process (joined by in-memory queues on a
// thread each, local_exchange): the wall time, and the share of it the structural updates
// took (pairing, deletion, decay of vacant elements: the most any node spent in them), and
// each population's mean calcium at the last update against its set point (eps).
// With --without 1 it also runs the same document without structural plasticity (no
// <structural-plasticity>, no synaptic elements) and prints the ratio of the two wall times.
//
// Limits (the aims): updates at most 20% of the wall time; with --without, at most
// 1.5x the time of the network without structural plasticity.
// Options: --document PATH --ticks K (2000000) --nodes N (1) --without 0|1 (0) --threads T (1)
// Prints one JSON object; exits 1 when a limit is missed.
#include "sim_bench.hpp"

#include "dnnc/sim/runner.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace {

struct outcome {
    double seconds = 0, update_seconds = 0;
    std::vector<dnnc::sim::structure_record> last;  // the last update's records
};

outcome run(const dnnc::model::expanded_network& net, long ticks, std::size_t nodes) {
    std::vector<std::uint32_t> node_of(net.neuron_count());
    for (std::size_t i = 0; i < node_of.size(); ++i) node_of[i] = static_cast<std::uint32_t>(i * nodes / node_of.size());
    dnnc::sim::local_exchange exchange(dnnc::sim::partition_specs(net, node_of, nodes));
    const auto start = std::chrono::steady_clock::now();
    exchange.run_until(ticks - 1);
    outcome o;
    o.seconds = dnnc::bench::seconds_since(start);
    for (std::size_t n = 0; n < nodes; ++n) o.update_seconds = std::max(o.update_seconds, exchange.node(n).structure_update_seconds());
    for (const auto& r : exchange.node(0).take_structure_records()) {
        if (!o.last.empty() && o.last.back().tick != r.tick) o.last.clear();
        o.last.push_back(r);
    }
    return o;
}

}  // namespace

int main(int argc, char** argv) try {
    const dnnc::bench::options opt(argc, argv);
    const auto document = opt.text("document", DNNC_SOURCE_DIR "/examples/structural_plasticity/structural_plasticity.xml");
    const long ticks = opt.integer("ticks", 2000000);
    const auto nodes = static_cast<std::size_t>(opt.integer("nodes", 1));
    const bool without = opt.integer("without", 0) != 0;
    const dnnc::bench::thread_cap cap(opt.integer("threads", 1));

    const auto doc = dnnc::protocol::load_document(document);
    const auto net = dnnc::model::expand(*doc.net, document);
    const auto with = run(net, ticks, nodes);
    const double share = with.update_seconds / with.seconds;
    bool met = share <= 0.20;
    std::printf("{\"document\": \"%s\", \"ticks\": %ld, \"nodes\": %zu, \"seconds\": %.3f, \"update_seconds\": %.3f, "
                "\"update_share\": %.4f",
                document.c_str(), ticks, nodes, with.seconds, with.update_seconds, share);
    std::printf(", \"mean_ca\": {");
    for (std::size_t k = 0; k < with.last.size(); ++k) {
        const auto& g = net.structure->groups[with.last[k].group];
        std::printf("%s\"%s\": [%.5f, %.3f]", k ? ", " : "", g.population.c_str(), with.last[k].mean_ca, g.curves.front().eps);
    }
    std::printf("}");
    if (without) {
        auto bare = *doc.net;
        bare.structural.reset();
        for (auto& p : bare.populations) p.synaptic_elements.clear();
        const auto plain = run(dnnc::model::expand(bare, document), ticks, nodes);
        const double ratio = with.seconds / plain.seconds;
        met = met && ratio <= 1.5;
        std::printf(", \"seconds_without\": %.3f, \"ratio\": %.3f", plain.seconds, ratio);
    }
    std::printf(", \"limits\": \"update share <= 0.20%s\", \"met\": %s}\n", without ? ", ratio <= 1.5" : "", met ? "true" : "false");
    return met ? 0 : 1;
} catch (const std::exception& e) {
    std::fprintf(stderr, "bench_structural_plasticity: %s\n", e.what());
    return 2;
}
