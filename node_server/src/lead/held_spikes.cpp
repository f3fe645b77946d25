#include "lead/held_spikes.hpp"

#include "lead/state_samples.hpp"

#include <algorithm>

namespace dnnc::node_server {

using json = nlohmann::json;

held_spikes::held_spikes(const model::expanded_network& net)
    : recording_(!net.recorded.empty()), in_raster_(net.group_of.size(), false), groups_(json::array()) {
    // `recorded` is ascending, so each group's recorded neurons are a run of it.
    for (std::size_t k = 0; k < net.recorded.size();) {
        const auto& g = net.groups[net.group_of[net.recorded[k]]];
        auto end = k;
        while (end < net.recorded.size() && net.recorded[end] < g.first + g.size) ++end;
        const auto every = std::max<std::size_t>(1, (end - k + raster_per_group - 1) / raster_per_group);
        std::vector<std::uint32_t> sample;
        for (auto i = k; i < end; i += every) {
            in_raster_[net.recorded[i]] = true;
            sample.push_back(static_cast<std::uint32_t>(net.recorded[i]));
        }
        groups_.push_back({{"id", g.id}, {"first", g.first}, {"size", g.size}, {"member", g.member}, {"recorded", end - k},
                           {"every", every}, {"sampled", sample.size()}, {"sample", std::move(sample)}});
        k = end;
    }
}

void held_spikes::keep(std::int64_t tick, std::vector<std::uint32_t> neurons) {
    std::sort(neurons.begin(), neurons.end());
    held_ += neurons.size();
    add_recent(tick, neurons);
    ticks_.push_back({tick, std::move(neurons)});
    // Bounded: what no client reads in time is dropped, oldest first, and counted.
    while (held_ > max_held) {
        held_ -= ticks_.front().neurons.size();
        lost_ += static_cast<std::int64_t>(ticks_.front().neurons.size());
        ticks_.pop_front();
    }
}

void held_spikes::add_recent(std::int64_t tick, const std::vector<std::uint32_t>& spiked) {
    const auto before = recent_neurons_.size();
    for (auto n : spiked)
        if (in_raster_[n]) recent_neurons_.push_back(n);
    if (recent_neurons_.size() == before) return;
    recent_ticks_.push_back(tick);
    recent_ends_.push_back(recent_neurons_.size());
    while (first_ < recent_ticks_.size() &&
           (recent_ticks_[first_] <= tick - max_peek_ticks || recent_neurons_.size() - begin_of(first_) > max_peek_spikes))
        ++first_;
    if (first_ > 4096 && first_ * 2 > recent_ticks_.size()) {
        const auto dropped = begin_of(first_);
        recent_neurons_.erase(recent_neurons_.begin(), recent_neurons_.begin() + static_cast<std::ptrdiff_t>(dropped));
        recent_ticks_.erase(recent_ticks_.begin(), recent_ticks_.begin() + static_cast<std::ptrdiff_t>(first_));
        recent_ends_.erase(recent_ends_.begin(), recent_ends_.begin() + static_cast<std::ptrdiff_t>(first_));
        for (auto& e : recent_ends_) e -= dropped;
        first_ = 0;
    }
}

void held_spikes::forget_before(std::int64_t tick) {
    while (!ticks_.empty() && ticks_.front().tick < tick) {
        held_ -= ticks_.front().neurons.size();
        ticks_.pop_front();
    }
}

json held_spikes::answer(std::int64_t& through) const {
    json ticks = json::array();
    std::size_t count = 0;
    for (const auto& s : ticks_) {
        if (s.tick > through) break;
        if (count > 0 && count + s.neurons.size() > max_per_reply) {
            through = s.tick - 1;
            break;
        }
        ticks.push_back(json::array({s.tick, s.neurons}));
        count += s.neurons.size();
    }
    return ticks;
}

std::deque<tick_spikes> held_spikes::before(std::int64_t tick) const {
    std::deque<tick_spikes> earlier;
    for (const auto& s : ticks_)
        if (s.tick < tick) earlier.push_back(s);
    return earlier;
}

void held_spikes::adopt(const std::deque<tick_spikes>& earlier, std::int64_t first_tick) {
    for (auto s = earlier.rbegin(); s != earlier.rend(); ++s) {
        if (s->tick >= first_tick || (!ticks_.empty() && s->tick >= ticks_.front().tick)) continue;
        held_ += s->neurons.size();
        ticks_.push_front(*s);
    }
}

held_spikes::recent_slice held_spikes::recent_from(std::int64_t from) const {
    std::size_t begin = recent_ticks_.size();
    while (begin > first_ && recent_ticks_[begin - 1] >= from && recent_neurons_.size() - begin_of(begin - 1) <= max_peek_spikes)
        --begin;
    recent_slice slice;
    const auto offset = begin_of(begin);
    slice.ticks.assign(recent_ticks_.begin() + static_cast<std::ptrdiff_t>(begin), recent_ticks_.end());
    slice.ends.assign(recent_ends_.begin() + static_cast<std::ptrdiff_t>(begin), recent_ends_.end());
    for (auto& e : slice.ends) e -= offset;
    slice.neurons.assign(recent_neurons_.begin() + static_cast<std::ptrdiff_t>(offset), recent_neurons_.end());
    return slice;
}

json held_spikes::recent_slice::to_json() const {
    json out = json::array();
    for (std::size_t i = 0; i < ticks.size(); ++i)
        out.push_back(json::array({ticks[i], std::vector<std::uint32_t>(neurons.begin() + static_cast<std::ptrdiff_t>(i ? ends[i - 1] : 0),
                                                                       neurons.begin() + static_cast<std::ptrdiff_t>(ends[i]))}));
    return out;
}

json read_recorded(held_spikes& spikes, state_samples& samples, const json& request, std::int64_t completed,
                   const std::string& state, double dt) {
    const auto from = request.value("from", std::int64_t{0});
    spikes.forget_before(from);
    samples.forget_before(from);
    const bool answer = !request.value("acknowledge", false);
    std::int64_t through = answer ? completed : from - 1;
    json ticks = answer ? spikes.answer(through) : json::array();
    std::size_t count = 0;
    for (const auto& t : ticks) count += t.at(1).size();
    json sampled = answer ? samples.answer(from, through, held_spikes::max_per_reply - std::min(count, held_spikes::max_per_reply))
                          : json::array();
    while (!ticks.empty() && ticks.back().at(0).get<std::int64_t>() > through) ticks.erase(ticks.size() - 1);
    json reply{{"recording", spikes.recording()}, {"spikes", std::move(ticks)}, {"through", std::max(through, from - 1)},
               {"completed", completed}, {"lost", spikes.lost()}, {"state", state}, {"dt", dt},
               {"sampling", samples.sampling()}, {"samples", std::move(sampled)}, {"samples_lost", samples.lost()}};
    if (request.value("groups", false)) {
        reply["groups"] = spikes.groups();
        reply["samplings"] = samples.layout();
    }
    return reply;
}

}  // namespace dnnc::node_server
