// bench_neuron_cost: what a conductance-based neuron costs per tick, in µs per neuron and
// tick, hh_cond_exp_traub at two operating points against iaf_cond_exp in the same run.
//
// Each case is a population of --neurons unconnected neurons at dt = 0.1 ms with NEST's
// defaults:
//   iaf_cond_exp, fed the Poisson trains below (it stays silent);
//   hh_cond_exp_traub, every neuron fed its own Poisson trains, excitatory 500 Hz of 1 nS
//   and inhibitory 250 Hz of 4 nS (about 14 Hz);
//   hh_cond_exp_traub with I_e = 600 pA and no input (about 94 Hz).
// The time is the thread's CPU time in engine::compute() over --ticks ticks on one thread (the Poisson draws and the
// spike scan included, alike in every case), the fastest of --repeats passes, the cases in
// turn within each pass (the least disturbed by the machine's other work); the rate counts
// the spikes of the last pass.
// Options: --neurons N (1000) --ticks K (2000) --repeats R (3)
// Prints one JSON object.
#include "sim_bench.hpp"

#include "dnnc/sim/engine.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace {

struct neuron_case {
    std::string name, attributes;
    bool driven;  // fed the Poisson trains
    double best_s = 1e300, rate_hz = 0;
};

std::string population_document(long neurons, const neuron_case& c) {
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<dnnc xmlns=\"urn:dnnc:1\">\n  <network name=\"cost\" dt=\"0.1\">\n"
           "    <population id=\"P\" size=\"" +
           std::to_string(neurons) + "\" " + c.attributes +
           "/>\n" +
           (c.driven ? "    <poisson to=\"P\" rate=\"500\" weight=\"1\" seed=\"1\"/>\n"
                       "    <poisson to=\"P\" rate=\"250\" weight=\"-4\" seed=\"2\"/>\n"
                     : "") +
           "  </network>\n</dnnc>\n";
}

}  // namespace

int main(int argc, char** argv) try {
    const dnnc::bench::options opt(argc, argv);
    const long neurons = opt.integer("neurons", 1000);
    const long ticks = opt.integer("ticks", 2000);
    const long repeats = opt.integer("repeats", 3);
    const dnnc::bench::thread_cap cap(1);

    std::vector<neuron_case> cases = {{"iaf_cond_exp", "model=\"iaf_cond_exp\"", true},
                                      {"hh_cond_exp_traub", "model=\"hh_cond_exp_traub\"", true},
                                      {"hh_cond_exp_traub_i_e_600", "model=\"hh_cond_exp_traub\" I_e=\"600\"", false}};
    std::vector<dnnc::sim::engine_spec> specs;
    for (const auto& c : cases) {
        const auto path = dnnc::bench::write_temp_document("cost-" + c.name + ".xml", population_document(neurons, c));
        specs.push_back(dnnc::sim::whole_network(dnnc::bench::load_network(path)));
    }
    for (long r = 0; r < repeats; ++r) {
        for (std::size_t k = 0; k < cases.size(); ++k) {
            dnnc::sim::engine e(specs[k]);
            const auto run = dnnc::bench::run_ticks_cpu(e, ticks);
            cases[k].best_s = std::min(cases[k].best_s, run.cpu_s);
            cases[k].rate_hz = static_cast<double>(run.spikes) / static_cast<double>(neurons) / (static_cast<double>(ticks) * 1e-4);
        }
    }
    const double per = 1e6 / static_cast<double>(neurons) / static_cast<double>(ticks);
    std::printf("{\"neurons\": %ld, \"ticks\": %ld, \"dt_ms\": 0.1, \"threads\": 1, \"repeats\": %ld", neurons, ticks, repeats);
    for (const auto& c : cases)
        std::printf(", \"%s\": {\"us_per_neuron_tick\": %.4f, \"rate_hz\": %.2f, \"to_iaf_cond_exp\": %.2f}", c.name.c_str(),
                    c.best_s * per, c.rate_hz, c.best_s / cases[0].best_s);
    std::printf("}\n");
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "bench_neuron_cost: %s\n", e.what());
    return 1;
}
