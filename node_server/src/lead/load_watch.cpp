#include "lead/load_watch.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace dnnc::node_server {

load_watch::load_watch(std::size_t nodes, double threshold, std::chrono::milliseconds after, std::chrono::milliseconds interval,
                       clock::time_point now)
    : threshold_(threshold), after_(after), interval_(interval), now_(nodes), at_start_(nodes), interval_start_(now) {}

void load_watch::report(std::size_t v, std::int64_t compute_ns, std::int64_t cpu_wait_ns, std::int64_t completed) {
    // Reports may come out of order: counts only grow.
    now_.at(v).compute_ns = std::max(now_[v].compute_ns, compute_ns);
    now_[v].cpu_wait_ns = std::max(now_[v].cpu_wait_ns, cpu_wait_ns);
    now_[v].completed = std::max(now_[v].completed, completed);
}

std::optional<tick_times> load_watch::due(clock::time_point now) {
    if (now - interval_start_ < interval_) return std::nullopt;
    std::vector<double> ms, waited;
    for (std::size_t v = 0; v < now_.size(); ++v) {
        const auto ticks = now_[v].completed - at_start_[v].completed;
        if (ticks <= 0) break;  // a node that did not tick (a freeze, a pause): no judgement
        const auto per_tick = [&](std::int64_t ns) { return static_cast<double>(ns) / 1e6 / static_cast<double>(ticks); };
        waited.push_back(per_tick(now_[v].cpu_wait_ns - at_start_[v].cpu_wait_ns));
        ms.push_back(per_tick(now_[v].compute_ns - at_start_[v].compute_ns) + waited.back());
    }
    const auto started = interval_start_;
    at_start_ = now_;
    interval_start_ = now;
    if (ms.size() != now_.size() || ms.empty()) {
        imbalanced_since_.reset();
        return std::nullopt;
    }
    ms_per_tick_ = ms;
    cpu_wait_ms_per_tick_ = waited;
    double sum = 0, slowest = 0;
    std::size_t judged = 0;
    for (std::size_t v = 0; v < ms.size(); ++v) {
        if (!judged_.empty() && !judged_.at(v)) continue;
        sum += ms[v];
        slowest = std::max(slowest, ms[v]);
        ++judged;
    }
    const double mean = judged > 0 ? sum / static_cast<double>(judged) : 0.0;
    if (!(mean > 0 && slowest > threshold_ * mean)) {
        imbalanced_since_.reset();
        return std::nullopt;
    }
    if (!imbalanced_since_) imbalanced_since_ = started;
    if (now - *imbalanced_since_ < after_) return std::nullopt;
    imbalanced_since_.reset();
    return tick_times{std::move(ms), std::move(waited)};
}

load_watch::clock::time_point next_load_move(load_watch::clock::time_point moved, double paused_ms, double share) {
    return moved + std::chrono::duration_cast<load_watch::clock::duration>(std::chrono::duration<double, std::milli>(paused_ms / share));
}

load_step next_load_step(const std::vector<node_load>& now, const std::vector<node_load>& at_last_move, std::size_t lead) {
    const auto measured = [](const node_load& n) { return n.neurons > 0 && n.ms_per_tick > 0; };
    std::optional<std::size_t> slowest;
    double mean_ms = 0;
    std::size_t count = 0;
    for (std::size_t v = 0; v < now.size(); ++v) {
        if (!measured(now[v])) continue;
        mean_ms += now[v].ms_per_tick;
        ++count;
        if (!slowest || now[v].ms_per_tick > now[*slowest].ms_per_tick) slowest = v;
    }
    if (!slowest) return {};
    mean_ms /= static_cast<double>(count);
    if (!at_last_move.empty()) {
        const auto then = std::find_if(at_last_move.begin(), at_last_move.end(),
                                       [&](const node_load& n) { return n.id == now[*slowest].id; });
        if (then != at_last_move.end() && now[*slowest].neurons < then->neurons &&
            now[*slowest].ms_per_tick >= 0.9 * then->ms_per_tick) {
            double others_wait = 0;
            for (std::size_t v = 0; v < now.size(); ++v)
                if (v != *slowest && measured(now[v])) others_wait += now[v].cpu_wait_ms_per_tick / static_cast<double>(count - 1);
            // Starved: a quarter of its time per tick at least is waiting for a CPU (nodes
            // with cores of their own hardly wait), and half as long again as the others.
            const auto& s = now[*slowest];
            const bool starved = count > 1 && s.cpu_wait_ms_per_tick > 1.5 * others_wait && s.cpu_wait_ms_per_tick >= 0.25 * s.ms_per_tick;
            if (*slowest == lead || !starved) return {};
            return {load_step::kind::drain, {}, *slowest};
        }
        double slowest_then = 0;
        for (const auto& n : at_last_move)
            if (measured(n)) slowest_then = std::max(slowest_then, n.ms_per_tick);
        if (now[*slowest].ms_per_tick >= 0.95 * slowest_then) return {};
    }
    load_step step{load_step::kind::rescale, std::vector<double>(now.size(), 0.0), 0};
    double before = 0, after = 0;
    for (std::size_t v = 0; v < now.size(); ++v) {
        step.capacity[v] = now[v].capacity;
        if (!measured(now[v])) continue;
        step.capacity[v] = now[v].capacity * std::clamp(std::sqrt(mean_ms / now[v].ms_per_tick), 0.5, 2.0);
        before += now[v].capacity;
        after += step.capacity[v];
    }
    for (std::size_t v = 0; v < now.size(); ++v)
        if (measured(now[v])) step.capacity[v] = std::max(1e-3, std::round(step.capacity[v] / after * before * 1000) / 1000);
    return step;
}

}  // namespace dnnc::node_server
