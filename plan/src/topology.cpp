#include "dnnc/plan/topology.hpp"

#include <algorithm>
#include <queue>

namespace dnnc::plan {

topology::topology(const model::cluster& clu) {
    for (const auto& n : clu.nodes) ids_.push_back(n.id);
    adjacent_.resize(ids_.size());
    lead_ = index_of(clu.lead);
    for (const auto& l : clu.links) {
        const auto a = index_of(l.from), b = index_of(l.to);
        if (link_between(a, b)) continue;
        adjacent_[a].push_back({b, links_.size()});
        adjacent_[b].push_back({a, links_.size()});
        links_.push_back({a, b});
    }
}

std::size_t topology::index_of(const std::string& id) const {
    const auto it = std::find(ids_.begin(), ids_.end(), id);
    if (it == ids_.end()) throw usage_error("the cluster has no node '" + id + "'");
    return static_cast<std::size_t>(it - ids_.begin());
}

std::optional<std::size_t> topology::link_between(std::size_t a, std::size_t b) const {
    for (const auto& [node, l] : adjacent_[a])
        if (node == b) return l;
    return std::nullopt;
}

std::vector<std::size_t> topology::predecessors(std::size_t from, std::size_t until) const {
    std::vector<std::size_t> previous(ids_.size(), SIZE_MAX);
    std::queue<std::size_t> frontier;
    previous[from] = from;
    frontier.push(from);
    while (!frontier.empty() && (until == SIZE_MAX || previous[until] == SIZE_MAX)) {
        const auto v = frontier.front();
        frontier.pop();
        for (const auto& [w, l] : adjacent_[v]) {
            (void)l;
            if (previous[w] == SIZE_MAX) previous[w] = v, frontier.push(w);
        }
    }
    return previous;
}

bool topology::joined() const {
    const auto previous = predecessors(0, SIZE_MAX);
    return std::none_of(previous.begin(), previous.end(), [](std::size_t p) { return p == SIZE_MAX; });
}

std::vector<std::size_t> topology::route(std::size_t from, std::size_t to) const {
    const auto previous = predecessors(from, to);
    if (previous[to] == SIZE_MAX) throw usage_error("node '" + ids_[to] + "' cannot be reached from '" + ids_[from] + "'");
    std::vector<std::size_t> path{to};
    while (path.back() != from) path.push_back(previous[path.back()]);
    std::reverse(path.begin(), path.end());
    return path;
}

std::vector<probe_path> plan_probes(const topology& topo) {
    // BFS over the transition graph. The virtual link touches only the lead; a link is
    // entered at the node it shares with the link it was reached from, and the probe
    // continues to its other end.
    std::vector<probe_path> plan;
    std::vector<bool> planned(topo.link_count(), false);
    struct entry {
        std::size_t node;                   // where the probe stands
        std::vector<std::size_t> route;     // how it got there
        std::optional<std::size_t> parent;  // plan index of the link it came over
    };
    std::queue<entry> frontier;
    frontier.push({topo.lead(), {topo.lead()}, std::nullopt});
    while (!frontier.empty()) {
        entry e = std::move(frontier.front());
        frontier.pop();
        for (std::size_t l = 0; l < topo.link_count(); ++l) {
            if (planned[l]) continue;
            const auto [a, b] = topo.link(l);
            if (a != e.node && b != e.node) continue;
            planned[l] = true;
            const std::size_t far = a == e.node ? b : a;
            probe_path p{l, e.route, e.parent};
            p.route.push_back(far);
            plan.push_back(p);
            frontier.push({far, p.route, plan.size() - 1});
        }
    }
    return plan;
}

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    const auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
    std::nth_element(values.begin(), mid, values.end());
    if (values.size() % 2) return *mid;
    return (*mid + *std::max_element(values.begin(), mid)) / 2;
}

namespace {
double quantile(std::vector<double> values, double q) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    return values[static_cast<std::size_t>(q * static_cast<double>(values.size() - 1) + 0.5)];
}
}  // namespace

std::vector<link_time> link_times(const std::vector<probe_path>& plan, const std::vector<std::vector<double>>& samples_ms) {
    std::vector<link_time> times(plan.size());
    for (std::size_t p = 0; p < plan.size(); ++p) {
        const auto& samples = samples_ms.at(p);
        link_time& t = times[p];
        t.link = plan[p].link;
        t.round_trip_ms = median(samples);
        const double spread = quantile(samples, 0.75) - quantile(samples, 0.25);
        t.noisy = spread > 0.5 * t.round_trip_ms + 0.2;
        const double before = plan[p].parent ? times[*plan[p].parent].round_trip_ms : 0.0;
        t.latency_ms = (t.round_trip_ms - before) / 2;
        if (t.latency_ms < 0) {
            t.latency_ms = 0;
            t.clamped = true;
        }
    }
    return times;
}

bool throughput_settled(const throughput_samples& direction) {
    if (direction.loaded_ms.size() < 2) return false;
    auto loaded = direction.loaded_ms;
    std::partial_sort(loaded.begin(), loaded.begin() + 2, loaded.end());
    return loaded[1] <= 1.25 * loaded[0];
}

double link_throughput(std::size_t load_bytes, const throughput_samples& there, const throughput_samples& back) {
    const auto least = [](const std::vector<double>& v) { return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end()); };
    const auto load_ms = [&](const throughput_samples& s) { return least(s.loaded_ms) - least(s.unloaded_ms); };
    const double added = std::max(load_ms(there), load_ms(back));
    if (!(added > 0)) return 0;
    return 8.0 * static_cast<double>(load_bytes) / (added / 1000);
}

}  // namespace dnnc::plan
