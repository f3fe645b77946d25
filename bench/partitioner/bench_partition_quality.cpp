// bench_partition_quality: strategy `multilevel` against gpmetis (METIS 5) and scotch_gpart
// (Scotch 7), run in the same process on the same graphs: 4elt, a random geometric graph, a
// Delaunay-like triangulation and a stochastic block model, for k = 2..32 parts at 3%
// imbalance. Prints, per graph and k, each partitioner's cut, imbalance and time, and our
// cut and time as ratios to METIS's. With --large, partitions a graph of about a million
// edges and reports the time and the peak memory of a process that reads and partitions it.
// Peers are skipped when their paths are not given. Times are the best of --repeat runs, in
// CPU seconds of the process like the times METIS and Scotch report for their partitioning
// (file reading excluded), so that other load on the machine does not skew the ratios; all
// three run on one thread, where CPU time is the wall time of an idle machine.
// With --seeds N (default 1), ours and METIS's cuts are the means over seeds 1..N (METIS's
// -seed; ours partition_options::seed) and imbalances the largest: one seed's cut differs from
// another's by several percent, as much as the aims. Times stay the first seed's; Scotch runs
// once, with its default strategy.
#include "bench_graphs.hpp"
#include "dnnc/partitioner/generators.hpp"
#include "dnnc/partitioner/metis_io.hpp"
#include "dnnc/partitioner/metrics.hpp"
#include "dnnc/partitioner/multilevel.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace dp = dnnc::partitioner;

namespace {

constexpr double pi = 3.14159265358979323846;

struct bench_options {
    std::string data = DNNC_SOURCE_DIR "/../shared/data/4elt.graph";
    std::string work = "/tmp/dnnc-bench-partition";
    std::string gpmetis;
    std::string scotch;
    std::string gcv;
    std::vector<std::size_t> parts{2, 4, 8, 16, 32};
    int repeat = 3;
    std::uint64_t seeds = 1;  // --seeds: cuts averaged over seeds 1..seeds
    bool large = false;
    bool strong = true;  // --fast-only: the default quality alone
    double imbalance = 0.03;
};

struct named_graph {
    std::string name;
    dp::graph g;
    std::string file;  // METIS format, written to the work folder
};

struct run_result {
    bool ran = false;
    dp::weight_t cut = 0;
    double imbalance = 0;
    double seconds = 0;
};

// A splitmix64 stream for the one generator written here.
struct stream {
    std::uint64_t state;
    double uniform() {
        std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        return static_cast<double>(z >> 11) * 0x1.0p-53;
    }
};

// A Delaunay-like triangulation: a rows x cols grid of points, each moved by up to 0.35 of
// the spacing, every cell split by the diagonal that the empty-circle rule picks for its four
// corners. Planar, degree about 6, like the Delaunay graphs of the DIMACS collection.
dp::graph delaunay_like(std::size_t rows, std::size_t cols, std::uint64_t seed) {
    stream rng{seed};
    std::vector<double> x(rows * cols), y(rows * cols);
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t c = 0; c < cols; ++c) {
            x[r * cols + c] = static_cast<double>(c) + 0.7 * (rng.uniform() - 0.5);
            y[r * cols + c] = static_cast<double>(r) + 0.7 * (rng.uniform() - 0.5);
        }
    }
    // > 0 when d lies inside the circle through a, b, c (counter-clockwise).
    auto in_circle = [&](std::size_t a, std::size_t b, std::size_t c, std::size_t d) {
        const double adx = x[a] - x[d], ady = y[a] - y[d];
        const double bdx = x[b] - x[d], bdy = y[b] - y[d];
        const double cdx = x[c] - x[d], cdy = y[c] - y[d];
        return (adx * adx + ady * ady) * (bdx * cdy - cdx * bdy) -
               (bdx * bdx + bdy * bdy) * (adx * cdy - cdx * ady) +
               (cdx * cdx + cdy * cdy) * (adx * bdy - bdx * ady);
    };
    dp::graph_builder builder(rows * cols);
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t c = 0; c < cols; ++c) {
            const auto v = static_cast<dp::vertex_id>(r * cols + c);
            if (c + 1 < cols) builder.add_edge(v, v + 1);
            if (r + 1 < rows) builder.add_edge(v, static_cast<dp::vertex_id>(v + cols));
            if (c + 1 < cols && r + 1 < rows) {
                const std::size_t a = v, b = v + 1, cc = v + cols + 1, d = v + cols;
                if (in_circle(a, b, cc, d) > 0) builder.add_edge(static_cast<dp::vertex_id>(b), static_cast<dp::vertex_id>(d));
                else builder.add_edge(static_cast<dp::vertex_id>(a), static_cast<dp::vertex_id>(cc));
            }
        }
    }
    return std::move(builder).build();
}

double cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

std::string run_command(const std::string& command) {
    FILE* pipe = popen((command + " 2>&1").c_str(), "r");
    if (pipe == nullptr) throw std::runtime_error("cannot run " + command);
    std::string out;
    char buffer[4096];
    while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
    const int status = pclose(pipe);
    if (status != 0) throw std::runtime_error(command + " failed:\n" + out);
    return out;
}

// The number after `key` in `text`, e.g. "Partitioning:" -> 0.004.
std::optional<double> number_after(const std::string& text, const std::string& key) {
    const auto at = text.find(key);
    if (at == std::string::npos) return std::nullopt;
    std::istringstream in(text.substr(at + key.size()));
    double value = 0;
    if (!(in >> value)) return std::nullopt;
    return value;
}

run_result measure(const dp::graph& g, const dp::partition& p, double seconds) {
    const dp::quality q = dp::evaluate(g, p);
    return {true, q.edge_cut, q.max_imbalance, seconds};
}

// run(seed) for seeds 1..o.seeds: the first seed's result with the mean cut and the largest
// imbalance of all.
template <typename F>
run_result over_seeds(const bench_options& o, F run) {
    run_result first = run(std::uint64_t{1});
    if (!first.ran) return first;
    double cut_sum = static_cast<double>(first.cut);
    for (std::uint64_t seed = 2; seed <= o.seeds; ++seed) {
        const run_result r = run(seed);
        cut_sum += static_cast<double>(r.cut);
        first.imbalance = std::max(first.imbalance, r.imbalance);
    }
    first.cut = static_cast<dp::weight_t>(std::llround(cut_sum / static_cast<double>(o.seeds)));
    return first;
}

// Timed over --repeat runs for seed 1, once for the others.
run_result run_ours(const dp::graph& g, std::size_t k, const bench_options& o, dp::partition_quality quality,
                    std::uint64_t seed) {
    dp::partition_options options;
    options.imbalance = o.imbalance;
    options.quality = quality;
    options.seed = seed;
    double best = std::numeric_limits<double>::max();
    dp::partition p;
    for (int r = 0; r < (seed == 1 ? o.repeat : 1); ++r) {
        const double start = cpu_seconds();
        p = dp::multilevel_partition(g, k, options);
        best = std::min(best, cpu_seconds() - start);
    }
    return measure(g, p, best);
}

// METIS's own default seed with one seed (--seeds 1), else -seed=seed.
run_result run_metis(const named_graph& ng, std::size_t k, const bench_options& o, std::uint64_t seed) {
    if (o.gpmetis.empty()) return {};
    const auto ufactor = static_cast<int>(std::lround(o.imbalance * 1000));
    const std::string seed_option = o.seeds > 1 ? " -seed=" + std::to_string(seed) : "";
    double best = std::numeric_limits<double>::max();
    for (int r = 0; r < (seed == 1 ? o.repeat : 1); ++r) {
        const std::string out = run_command(o.gpmetis + seed_option + " -ufactor=" + std::to_string(ufactor) + " '" +
                                            ng.file + "' " + std::to_string(k));
        const auto t = number_after(out, "Partitioning:");
        if (!t) throw std::runtime_error("no partitioning time in gpmetis's output:\n" + out);
        best = std::min(best, *t);
    }
    dp::partition p;
    p.parts = k;
    std::ifstream in(ng.file + ".part." + std::to_string(k));
    for (std::uint32_t part = 0; in >> part;) p.part_of.push_back(part);
    if (p.part_of.size() != ng.g.vertex_count()) throw std::runtime_error("short gpmetis partition file");
    return measure(ng.g, p, best);
}

run_result run_scotch(const named_graph& ng, std::size_t k, const bench_options& o) {
    if (o.scotch.empty() || o.gcv.empty()) return {};
    const std::string grf = ng.file + ".grf";
    if (!std::filesystem::exists(grf)) run_command(o.gcv + " -ic '" + ng.file + "' '" + grf + "'");
    const std::string map = ng.file + ".map." + std::to_string(k);
    double best = std::numeric_limits<double>::max();
    for (int r = 0; r < o.repeat; ++r) {
        std::ostringstream b;
        b << o.imbalance;
        const std::string out = run_command(o.scotch + " " + std::to_string(k) + " '" + grf + "' '" + map +
                                            "' -b" + b.str() + " -vt");
        const auto t = number_after(out, "Mapping");
        if (!t) throw std::runtime_error("no mapping time in scotch_gpart's output:\n" + out);
        best = std::min(best, *t);
    }
    // The map file: a count, then `label part` lines; labels are 1-based like the source.
    std::ifstream in(map);
    std::size_t count = 0;
    in >> count;
    dp::partition p;
    p.parts = k;
    p.part_of.assign(ng.g.vertex_count(), 0);
    for (std::size_t i = 0; i < count; ++i) {
        std::size_t label = 0, part = 0;
        in >> label >> part;
        if (label == 0 || label > p.part_of.size()) throw std::runtime_error("bad label in " + map);
        p.part_of[label - 1] = static_cast<dp::part_id>(part);
    }
    return measure(ng.g, p, best);
}

std::vector<named_graph> bench_graphs(const bench_options& o) {
    std::vector<named_graph> graphs;
    if (std::filesystem::exists(o.data)) {
        graphs.push_back({"4elt", dp::read_metis(o.data), ""});
    } else {
        std::cerr << "note: " << o.data << " is absent, 4elt skipped\n";
    }
    const std::size_t n = 32768;
    // Expected degree 12: n * pi * r^2 = 12.
    graphs.push_back({"rgg-32k", dp::random_geometric(n, std::sqrt(12.0 / (static_cast<double>(n) * pi)), 1), ""});
    graphs.push_back({"delaunay-like-33k", delaunay_like(182, 182, 1), ""});
    // 8 blocks of 4096: about 16 neighbours inside the block and 4 outside.
    graphs.push_back({"sbm-8x4096", dp::stochastic_block_model(std::vector<std::size_t>(8, 4096), 16.0 / 4095,
                                                               4.0 / (7 * 4096), 1), ""});
    for (auto& ng : graphs) {
        ng.file = o.work + "/" + ng.name + ".graph";
        dp::write_metis(ng.g, ng.file);
    }
    return graphs;
}

std::string cell(const run_result& r, bool time_too) {
    if (!r.ran) return "| – | – " + std::string(time_too ? "| – " : "");
    char buffer[128];
    if (time_too) std::snprintf(buffer, sizeof buffer, "| %lld | %.3f | %.1f ", static_cast<long long>(r.cut), r.imbalance, 1000 * r.seconds);
    else std::snprintf(buffer, sizeof buffer, "| %lld | %.3f ", static_cast<long long>(r.cut), r.imbalance);
    return buffer;
}

// Cut and time ratios to METIS of one quality setting, each cell marked "(miss)" above its
// aim, and their geometric means.
struct ratio_summary {
    const char* name;
    double cut_aim;
    double time_aim;
    int cut_misses = 0, time_misses = 0, compared = 0;
    double log_cut = 0, log_time = 0;

    std::string ratios(const run_result& ours, const run_result& metis) {
        if (!metis.ran || !ours.ran) return "| – | – ";
        const double cut_ratio = static_cast<double>(ours.cut) / static_cast<double>(std::max<dp::weight_t>(metis.cut, 1));
        // METIS reports milliseconds; a 0 reading counts as 1 ms.
        const double time_ratio = ours.seconds / std::max(metis.seconds, 0.001);
        cut_misses += cut_ratio > cut_aim;
        time_misses += time_ratio > time_aim;
        log_cut += std::log(cut_ratio);
        log_time += std::log(time_ratio);
        ++compared;
        char buffer[96];
        std::snprintf(buffer, sizeof buffer, "| %.3f%s | %.2f%s ", cut_ratio, cut_ratio > cut_aim ? " (miss)" : "",
                      time_ratio, time_ratio > time_aim ? " (miss)" : "");
        return buffer;
    }
    void print() const {
        if (compared == 0) return;
        std::printf("\n%s: %d runs compared with METIS: geometric mean cut ratio %.3f, time ratio %.2f; "
                    "cut above %.2fx METIS's in %d, time above %.0fx in %d.\n",
                    name, compared, std::exp(log_cut / compared), std::exp(log_time / compared), cut_aim, cut_misses,
                    time_aim, time_misses);
    }
};

int quality_table(const bench_options& o) {
    std::filesystem::create_directories(o.work);
    const std::vector<named_graph> graphs = bench_graphs(o);
    std::printf("| graph | n | m | k | cut | imbalance | ms | cut / METIS | time / METIS | strong cut | strong imb. "
                "| strong ms | strong cut / METIS | strong time / METIS | METIS cut | METIS imb. | METIS ms "
                "| Scotch cut | Scotch imb. | Scotch ms |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    ratio_summary fast{"fast", 1.00, 2.0};
    ratio_summary strong{"strong", 0.95, 10.0};
    for (const auto& ng : graphs) {
        for (std::size_t k : o.parts) {
            const run_result ours =
                over_seeds(o, [&](std::uint64_t seed) { return run_ours(ng.g, k, o, dp::partition_quality::fast, seed); });
            const run_result ours_strong = o.strong ? over_seeds(o, [&](std::uint64_t seed) {
                return run_ours(ng.g, k, o, dp::partition_quality::strong, seed);
            }) : run_result{};
            const run_result metis = over_seeds(o, [&](std::uint64_t seed) { return run_metis(ng, k, o, seed); });
            const run_result scotch = run_scotch(ng, k, o);
            std::printf("| %s | %zu | %zu | %zu %s%s%s%s%s%s|\n", ng.name.c_str(), ng.g.vertex_count(), ng.g.edge_count(),
                        k, cell(ours, true).c_str(), fast.ratios(ours, metis).c_str(), cell(ours_strong, true).c_str(),
                        strong.ratios(ours_strong, metis).c_str(), cell(metis, true).c_str(), cell(scotch, true).c_str());
            std::fflush(stdout);
        }
    }
    fast.print();
    strong.print();
    return 0;
}

// Million-edge graphs, each read and partitioned in a child process so that its peak
// resident memory is that of reading the file and partitioning alone: a random geometric
// graph (mesh-like) and an Erdos-Renyi graph (like randomly connected neurons, where every
// vertex is on the boundary and refinement does the most work).
int large_run(const bench_options& o) {
    std::filesystem::create_directories(o.work);
    struct large_graph {
        std::string name;
        dp::graph g;
    };
    std::vector<large_graph> graphs;
    const std::size_t rgg_n = 131072;
    graphs.push_back({"random geometric", dp::random_geometric(rgg_n, std::sqrt(15.3 / (static_cast<double>(rgg_n) * pi)), 2)});
    const std::size_t er_n = 100000;
    graphs.push_back({"Erdos-Renyi", dp::erdos_renyi(er_n, 20.0 / static_cast<double>(er_n - 1), 2)});
    std::printf("| graph | n | m | k | multilevel CPU s | cut | imbalance | peak MiB | METIS CPU s | METIS cut | time / METIS |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (std::size_t i = 0; i < graphs.size(); ++i) {
        const std::string file = o.work + "/large-" + std::to_string(i) + ".graph";
        dp::write_metis(graphs[i].g, file);
        for (std::size_t k : {std::size_t{8}, std::size_t{32}}) {
            int pipe_fd[2];
            if (pipe(pipe_fd) != 0) throw std::runtime_error("pipe failed");
            const pid_t child = fork();
            if (child == 0) {
                close(pipe_fd[0]);
                const dp::graph h = dp::read_metis(file);
                dp::partition_options options;
                options.imbalance = o.imbalance;
                const double start = cpu_seconds();
                const dp::partition p = dp::multilevel_partition(h, k, options);
                const double seconds = cpu_seconds() - start;
                const dp::quality q = dp::evaluate(h, p);
                char line[128];
                const int len = std::snprintf(line, sizeof line, "%.4f %lld %.4f", seconds,
                                              static_cast<long long>(q.edge_cut), q.max_imbalance);
                if (write(pipe_fd[1], line, static_cast<std::size_t>(len)) != len) _exit(1);
                _exit(0);
            }
            close(pipe_fd[1]);
            char line[128] = {};
            const ssize_t got = read(pipe_fd[0], line, sizeof line - 1);
            close(pipe_fd[0]);
            int status = 0;
            rusage usage{};
            wait4(child, &status, 0, &usage);
            if (got <= 0 || status != 0) throw std::runtime_error("the partitioning child failed");
            double seconds = 0, imbalance = 0;
            long long cut = 0;
            std::sscanf(line, "%lf %lld %lf", &seconds, &cut, &imbalance);
            std::string peer = "| – | – | – ";
            if (!o.gpmetis.empty()) {
                const named_graph ng{graphs[i].name, dp::read_metis(file), file};
                const run_result metis = run_metis(ng, k, o, 1);  // --large: one seed
                char buffer[128];
                std::snprintf(buffer, sizeof buffer, "| %.3f | %lld | %.2f ", metis.seconds,
                              static_cast<long long>(metis.cut), seconds / std::max(metis.seconds, 0.001));
                peer = buffer;
            }
            std::printf("| %s | %zu | %zu | %zu | %.3f%s | %lld | %.3f | %.0f%s %s|\n", graphs[i].name.c_str(),
                        graphs[i].g.vertex_count(), graphs[i].g.edge_count(), k, seconds, seconds > 2 ? " (miss)" : "",
                        cut, imbalance, static_cast<double>(usage.ru_maxrss) / 1024.0,
                        usage.ru_maxrss > 1024 * 1024 ? " (miss)" : "", peer.c_str());
            std::fflush(stdout);
        }
    }
    std::printf("\nlimits: 2 s and 1024 MiB for a graph of a million edges\n");
    return 0;
}

// A bad option or value: an exit status of 2.
struct usage_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

unsigned long long count(const std::string& flag, const std::string& text) {
    const auto n = dnnc::bench::positive_count(text);
    if (!n || *n > std::numeric_limits<int>::max()) throw usage_error(flag + " takes positive counts, not '" + text + "'");
    return *n;
}

std::vector<std::size_t> parse_list(const std::string& flag, const std::string& text) {
    std::vector<std::size_t> values;
    std::istringstream in(text);
    for (std::string item; std::getline(in, item, ',');) values.push_back(static_cast<std::size_t>(count(flag, item)));
    return values;
}

bench_options parse_options(int argc, char** argv) {
    bench_options o;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw usage_error(arg + " needs a value");
            return argv[++i];
        };
        if (arg == "--data") o.data = value();
        else if (arg == "--work") o.work = value();
        else if (arg == "--gpmetis") o.gpmetis = value();
        else if (arg == "--scotch") o.scotch = value();
        else if (arg == "--gcv") o.gcv = value();
        else if (arg == "--parts") o.parts = parse_list(arg, value());
        else if (arg == "--repeat") o.repeat = static_cast<int>(count(arg, value()));
        else if (arg == "--seeds") o.seeds = static_cast<std::uint64_t>(count(arg, value()));
        else if (arg == "--large") o.large = true;
        else if (arg == "--fast-only") o.strong = false;
        else
            throw usage_error("unknown option " + arg);
    }
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    bench_options o;
    try {
        o = parse_options(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "bench_partition_quality: " << e.what() << "\n"
                  << "usage: bench_partition_quality [--data 4elt.graph] [--work DIR] [--gpmetis PATH] "
                     "[--scotch PATH --gcv PATH] [--parts 2,4,8] [--repeat R] [--seeds N] [--fast-only] [--large]\n";
        return 2;
    }
    try {
        return o.large ? large_run(o) : quality_table(o);
    } catch (const std::exception& e) {
        std::cerr << "bench_partition_quality: " << e.what() << '\n';
        return 1;
    }
}
