#include "load_watch.hpp"

#include <algorithm>
#include <numeric>

namespace dnnc::node_server {

load_watch::load_watch(std::size_t nodes, double threshold, std::chrono::milliseconds after, std::chrono::milliseconds interval,
                       clock::time_point now)
    : threshold_(threshold), after_(after), interval_(interval), now_(nodes), at_start_(nodes), interval_start_(now) {}

void load_watch::report(std::size_t v, std::int64_t compute_ns, std::int64_t completed) {
    // Reports may come out of order: counts only grow.
    now_.at(v).compute_ns = std::max(now_[v].compute_ns, compute_ns);
    now_[v].completed = std::max(now_[v].completed, completed);
}

std::optional<std::vector<double>> load_watch::due(clock::time_point now) {
    if (now - interval_start_ < interval_) return std::nullopt;
    std::vector<double> ms;
    for (std::size_t v = 0; v < now_.size(); ++v) {
        const auto ticks = now_[v].completed - at_start_[v].completed;
        if (ticks <= 0) break;  // a node that did not tick (a freeze, a pause): no judgement
        ms.push_back(static_cast<double>(now_[v].compute_ns - at_start_[v].compute_ns) / 1e6 / static_cast<double>(ticks));
    }
    const auto started = interval_start_;
    at_start_ = now_;
    interval_start_ = now;
    if (ms.size() != now_.size() || ms.empty()) {
        imbalanced_since_.reset();
        return std::nullopt;
    }
    ms_per_tick_ = ms;
    const double mean = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
    if (!(mean > 0 && *std::max_element(ms.begin(), ms.end()) > threshold_ * mean)) {
        imbalanced_since_.reset();
        return std::nullopt;
    }
    if (!imbalanced_since_) imbalanced_since_ = started;
    if (now - *imbalanced_since_ < after_) return std::nullopt;
    imbalanced_since_.reset();
    return ms;
}

}  // namespace dnnc::node_server
