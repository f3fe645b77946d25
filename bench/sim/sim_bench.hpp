#pragma once
// What the simulation benchmarks share: command-line options, loading a DNNC document
// into an expanded network, a cap on TBB's threads, clocks and the STREAM triad.
#include "dnnc/model/expand.hpp"
#include "dnnc/protocol/xml.hpp"
#include "dnnc/sim/engine.hpp"

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <sstream>
#include <string>
#include <vector>

namespace dnnc::bench {

// `--name value` pairs; anything else is an error.
class options {
public:
    options(int argc, char** argv) {
        for (int i = 1; i < argc; i += 2) {
            const std::string key = argv[i];
            if (key.rfind("--", 0) != 0 || i + 1 >= argc) throw std::invalid_argument("expected --name value, got " + key);
            values_[key.substr(2)] = argv[i + 1];
        }
    }
    std::string text(const std::string& name, const std::string& fallback) const {
        const auto it = values_.find(name);
        return it == values_.end() ? fallback : it->second;
    }
    double number(const std::string& name, double fallback) const {
        const auto it = values_.find(name);
        return it == values_.end() ? fallback : std::stod(it->second);
    }
    long integer(const std::string& name, long fallback) const {
        const auto it = values_.find(name);
        return it == values_.end() ? fallback : std::stol(it->second);
    }

private:
    std::map<std::string, std::string> values_;
};

// The network of examples/cuba/cuba.xml (CUBA) with `neurons` members and probability `p`.
inline std::string cuba_document(long neurons, double p) {
    const long excitatory = neurons * 4 / 5;
    std::ostringstream x;
    x.precision(17);
    x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<dnnc xmlns=\"urn:dnnc:1\">\n"
      << "  <network name=\"cuba\">\n"
      << "    <population id=\"P\" size=\"" << neurons << "\" model=\"lif\" seed=\"42\"\n"
      << "                tau-m=\"20\" v-rest=\"-49\" v-reset=\"-60\" v-th=\"-50\" refractory=\"50\"\n"
      << "                tau-e=\"5\" tau-i=\"10\" dt=\"0.1\" v-init=\"-60\" v-init-max=\"-50\"/>\n"
      << "    <projection from=\"P[0:" << excitatory << "]\" to=\"P\" kind=\"random\" p=\"" << p
      << "\" weight=\"1.62\" delay=\"1\" seed=\"1\"/>\n"
      << "    <projection from=\"P[" << excitatory << ":" << neurons << "]\" to=\"P\" kind=\"random\" p=\"" << p
      << "\" weight=\"-9\" delay=\"1\" seed=\"2\"/>\n"
      << "  </network>\n"
      << "</dnnc>\n";
    return x.str();
}

inline model::expanded_network load_network(const std::string& path) {
    const model::document doc = protocol::load_document(path);
    if (!doc.net) throw std::invalid_argument(path + " has no network");
    return model::expand(*doc.net, path);
}

// Writes `text` to a file in a fresh temporary folder and returns its path.
inline std::string write_temp_document(const std::string& name, const std::string& text) {
    const auto folder = std::filesystem::temp_directory_path() / "dnnc-bench-sim";
    std::filesystem::create_directories(folder);
    const auto path = folder / name;
    std::ofstream(path) << text;
    return path.string();
}

// Caps TBB at `threads` (0: TBB's default, all cores) for the life of the object.
class thread_cap {
public:
    explicit thread_cap(long threads)
        : threads_(threads > 0 ? static_cast<int>(threads) : tbb::info::default_concurrency()),
          control_(std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                         static_cast<std::size_t>(threads_))) {}
    int threads() const { return threads_; }

private:
    int threads_;
    std::unique_ptr<tbb::global_control> control_;
};

inline double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// This thread's CPU time, which the machine's other work inflates less than the wall time.
inline double thread_cpu_s() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// `ticks` ticks of `e`, timed by this thread's CPU time in compute() alone, and the spikes
// they listed.
struct timed_ticks {
    double cpu_s = 0;
    std::size_t spikes = 0;
};
inline timed_ticks run_ticks_cpu(sim::engine& e, long ticks) {
    timed_ticks run;
    for (long t = 0; t < ticks; ++t) {
        const double start = thread_cpu_s();
        e.compute();
        run.cpu_s += thread_cpu_s() - start;
        run.spikes += e.spiked().size();
    }
    return run;
}

// Best of `passes` STREAM triads a = b + s * c over float arrays of `elements`, on TBB's
// threads, in bytes per second counted as STREAM does (three arrays moved).
inline double triad_bandwidth(std::size_t elements, int passes) {
    std::vector<float> a(elements, 0.0f), b(elements, 1.0f), c(elements, 2.0f);
    double best = std::numeric_limits<double>::max();
    for (int pass = 0; pass < passes; ++pass) {
        const auto start = std::chrono::steady_clock::now();
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, elements, std::size_t{1} << 16),
                          [&](const tbb::blocked_range<std::size_t>& r) {
                              for (std::size_t i = r.begin(); i < r.end(); ++i) a[i] = b[i] + 3.0f * c[i];
                          });
        best = std::min(best, seconds_since(start));
    }
    return static_cast<double>(3 * elements * sizeof(float)) / best;
}

}  // namespace dnnc::bench
