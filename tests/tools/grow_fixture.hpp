#pragma once
// Helpers of the tests of a network that changes on real local clusters (test_cli_grow_run.cpp,
// test_cli_grow_plastic.cpp, test_cli_rebalance.cpp): a network on a cluster run in lockstep, the rows of spike
// CSVs, and the running network's clock and size.
#include "cluster_fixture.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace dnnc::test {

// The network with a cluster of `nodes` nodes on free ports, run in lockstep.
inline std::string on_cluster(const std::string& text, std::size_t nodes, std::vector<int>& ports) {
    return std::regex_replace(with_cluster_of(text, std::vector<double>(nodes, 1), ports), std::regex("<run probes=\"2\"/>"),
                              "<run probes=\"2\" sync=\"lockstep\" send=\"nonzero\"/>");
}

// The document `text` with `extra` at the end of its network (grows, more populations).
inline std::string with_in_network(const std::string& text, const std::string& extra) {
    const auto end = text.find("  </network>");
    return text.substr(0, end) + extra + text.substr(end);
}

struct spike {
    double t_ms;
    std::string population;
    long index;
};

// The rows of a spike CSV (t_ms,population,index), in file order.
inline std::vector<spike> spikes_in(const std::string& csv) {
    std::istringstream in(csv);
    std::string line;
    std::getline(in, line);
    std::vector<spike> rows;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string t, population, index;
        std::getline(fields, t, ',');
        std::getline(fields, population, ',');
        std::getline(fields, index, ',');
        rows.push_back({std::stod(t), population, std::stol(index)});
    }
    return rows;
}

// The CSV's header and the rows that `keep` keeps, as text.
template <class F>
std::string rows_where(const std::string& csv, F keep) {
    std::istringstream in(csv);
    std::string line, out;
    std::getline(in, line);
    out = line + "\n";
    for (const auto& s : spikes_in(csv)) {
        std::getline(in, line);
        if (keep(s)) out += line + "\n";
    }
    return out;
}

inline std::size_t rows_of(const std::string& csv) { return static_cast<std::size_t>(std::count(csv.begin(), csv.end(), '\n')) - 1; }

// How many spikes of population `p` with index >= `from` (and < `to`) the rows hold.
inline std::size_t spikes_of(const std::vector<spike>& rows, const std::string& p, long from, long to = 1L << 40) {
    return static_cast<std::size_t>(
        std::count_if(rows.begin(), rows.end(), [&](const spike& s) { return s.population == p && s.index >= from && s.index < to; }));
}

inline nlohmann::json json_of(const std::string& command) {
    const auto r = run_command(command);
    INFO(command << "\n" << r.err);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out);
}

// The ticks the running network has done and its neurons over all nodes (dnnc status).
inline std::pair<std::int64_t, std::size_t> tick_and_neurons(const std::vector<int>& ports) {
    const auto s = json_of(dnnc_binary() + " status --json" + lead_of(ports));
    std::size_t neurons = 0;
    for (const auto& n : s["nodes"]) neurons += n["neurons"].get<std::size_t>();
    return {s["tick"].get<std::int64_t>() + 1, neurons};  // status: the last complete tick
}

}  // namespace dnnc::test
