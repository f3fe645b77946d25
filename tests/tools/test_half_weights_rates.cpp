// Weights in 16 bits (<run weight-precision="half">) leave both reference networks' rates and
// irregularity as they were, within their noise: Brunel's network (its shared weights rounded)
// and the scaled Potjans-Diesmann microcircuit (every synapse its own drawn weight), each run
// through `dnnc run` N times with 32-bit weights and N times with half weights, run k of
// each with the populations' and the Poisson generators' seeds moved by 1000 k (other initial
// values and drive: a run of a chaotic network with other weights is another such draw). Per
// population, the mean rate and the mean CV of inter-spike intervals
// (bench/models/spike_stats.py) of the half runs must lie within 4 standard errors of the
// 32-bit runs' (and 0.5% of them, for populations whose runs barely differ). The runs are
// deterministic, so the verdict is the same on every run of the test. About 70 s.
#include "cluster_fixture.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

using namespace dnnc::test;

namespace {

struct population_stats {
    double rate = 0, cv = 0;
};
using run_stats = std::map<std::string, population_stats>;

// The document with every population's and Poisson generator's seed moved by `shift`, and
// with half weights.
std::string variant(std::string text, int shift, bool half) {
    const std::regex seed(R"re((<(?:population|poisson) [^>]*seed=")(\d+)")re");
    std::string out;
    auto at = text.cbegin();
    for (std::sregex_iterator m(text.begin(), text.end(), seed), end; m != end; ++m) {
        out.append(at, (*m)[2].first);
        out += std::to_string(std::stoll((*m)[2].str()) + shift);
        at = (*m)[2].second;
    }
    out.append(at, text.cend());
    if (half) out = std::regex_replace(out, std::regex("<run "), "<run weight-precision=\"half\" ");
    return out;
}

run_stats run(const std::filesystem::path& dir, const std::string& name, const std::string& document, long ticks, double from_ms) {
    const auto doc = (dir / (name + ".xml")).string(), spikes = (dir / (name + ".csv")).string();
    std::ofstream(doc) << document;
    const auto r = run_command(dnnc_binary() + " run " + doc + " --nodes 1 --ticks " + std::to_string(ticks) + " --spikes " + spikes);
    INFO(name << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    const auto s = run_command("/usr/bin/python3 " + source_path("bench/models/spike_stats.py") + " " + spikes + " " + doc +
                               " --from-ms " + std::to_string(from_ms) + " --to-ms " + std::to_string(static_cast<double>(ticks) / 10) + " --json");
    INFO(s.err);
    REQUIRE(s.exit_code == 0);
    run_stats out;
    const auto stats = nlohmann::json::parse(s.out);
    for (const auto& [population, values] : stats.items())
        out[population] = {values.at("rate_hz").get<double>(), values.at("cv_isi").get<double>()};
    return out;
}

void check_unchanged(const std::string& example, int runs, long ticks, double from_ms) {
    scratch_dir dir;
    const std::string text = slurp(source_path(example));
    REQUIRE(text.find("<run ") != std::string::npos);
    std::vector<run_stats> single, half;
    for (int k = 0; k < runs; ++k) {
        single.push_back(run(dir.path, "single" + std::to_string(k), variant(text, 1000 * k, false), ticks, from_ms));
        half.push_back(run(dir.path, "half" + std::to_string(k), variant(text, 1000 * k, true), ticks, from_ms));
    }
    const auto n = static_cast<double>(runs);
    for (const auto& [population, ignored] : single.front()) {
        auto check = [&, population = population](const char* what, double population_stats::*value) {
            auto mean_and_variance = [&](const std::vector<run_stats>& all) {
                double mean = 0, squares = 0;
                for (const auto& s : all) mean += s.at(population).*value / n;
                for (const auto& s : all) squares += std::pow(s.at(population).*value - mean, 2);
                return std::pair{mean, squares / (n - 1)};
            };
            const auto [single_mean, single_variance] = mean_and_variance(single);
            const auto [half_mean, half_variance] = mean_and_variance(half);
            const double error = std::sqrt(single_variance / n + half_variance / n);
            INFO(example << ", " << population << ", " << what << ": 32-bit " << single_mean << " (sd " << std::sqrt(single_variance)
                         << "), half " << half_mean << " (sd " << std::sqrt(half_variance) << "), standard error " << error);
            CHECK(std::abs(half_mean - single_mean) <= 4 * error + 0.005 * single_mean);
        };
        check("rate Hz", &population_stats::rate);
        check("CV ISI", &population_stats::cv);
    }
    CHECK(half.front().size() == single.front().size());
}

}  // namespace

TEST_CASE("half weights leave Brunel's network's rates and CVs within their noise") {
    check_unchanged("examples/brunel/brunel.xml", 4, 10000, 200);
}

TEST_CASE("half weights leave the scaled microcircuit's rates and CVs within their noise") {
    check_unchanged("examples/microcircuit/microcircuit_scaled.xml", 6, 15000, 200);
}
