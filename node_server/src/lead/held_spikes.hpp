#pragma once
// The recorded spikes the lead holds (private to dnnc_node_server): those of complete ticks
// that no client has read yet, bounded, the oldest dropped first and counted; and, for
// watchers (the live page), the recent spikes of a sample of the recorded neurons, kept
// whether anyone reads them or not. Not locked: lead_run calls it under its own lock.
#include "dnnc/model/expand.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace dnnc::node_server {

// The recorded spikes of one complete tick.
struct tick_spikes {
    std::int64_t tick;
    std::vector<std::uint32_t> neurons;  // ascending
};

class held_spikes {
public:
    // A reply holds at most about this many spikes.
    static constexpr std::size_t max_per_reply = 1000000;
    // Spikes not yet read beyond this drop the oldest ticks' (counted in lost()).
    static constexpr std::size_t max_held = std::size_t{1} << 24;
    // The raster's sample: every k-th recorded neuron of each group, at most this many; their
    // spikes of the newest max_peek_ticks ticks are kept, at most max_peek_spikes.
    static constexpr std::size_t raster_per_group = 50;
    static constexpr std::int64_t max_peek_ticks = 2000;
    static constexpr std::size_t max_peek_spikes = 100000;

    // The spikes of `net`'s recorded neurons (none when it records none).
    explicit held_spikes(const model::expanded_network& net);

    bool recording() const { return recording_; }
    // [{"id", "first", "size", "member", "recorded", "every", "sampled", "sample": [neuron...]}...]:
    // the groups with recorded neurons, how many each has, and the raster's sample of them.
    const nlohmann::json& groups() const { return groups_; }
    // Spikes dropped unread since the run began.
    std::int64_t lost() const { return lost_; }
    // The held ticks, oldest first.
    const std::deque<tick_spikes>& held() const { return ticks_; }

    // The spikes of complete tick `tick`, later than every tick kept so far.
    void keep(std::int64_t tick, std::vector<std::uint32_t> neurons);
    // A client has the spikes of the ticks before `tick`.
    void forget_before(std::int64_t tick);
    // [[tick, [neuron...]]...]: the held ticks up to `through`, at most about max_per_reply
    // spikes; `through` becomes the last tick answered when the bound stops it earlier.
    nlohmann::json answer(std::int64_t& through) const;
    // The held ticks before `tick`, and putting earlier ones (a run before this one) in front
    // of those held, those at `first_tick` or later left out.
    std::deque<tick_spikes> before(std::int64_t tick) const;
    void adopt(const std::deque<tick_spikes>& earlier, std::int64_t first_tick);

    // The raster sample's spikes of ticks >= `from`, newest first until a bound is reached,
    // as ticks and each tick's neurons [ends[i - 1], ends[i]).
    struct recent_slice {
        std::vector<std::int64_t> ticks;
        std::vector<std::size_t> ends;
        std::vector<std::uint32_t> neurons;
        nlohmann::json to_json() const;  // [[tick, [neuron...]]...]
    };
    recent_slice recent_from(std::int64_t from) const;

private:
    bool recording_;
    std::deque<tick_spikes> ticks_;
    std::size_t held_ = 0;  // spikes in ticks_
    std::int64_t lost_ = 0;
    std::vector<bool> in_raster_;  // per neuron
    nlohmann::json groups_;
    // The raster sample's recent spikes, flat, so that a tick costs an append and no
    // allocation. Tick i (from `first_` on) holds the neurons [begin_of(i), recent_ends_[i]);
    // the dropped prefix is compacted away now and then. Ticks without a spike in the sample
    // are left out.
    std::vector<std::int64_t> recent_ticks_;
    std::vector<std::size_t> recent_ends_;
    std::vector<std::uint32_t> recent_neurons_;
    std::size_t first_ = 0;
    std::size_t begin_of(std::size_t i) const { return i == 0 ? 0 : recent_ends_[i - 1]; }
    void add_recent(std::int64_t tick, const std::vector<std::uint32_t>& spiked);
};

class state_samples;
// A client's read of the recorded spikes and samples (lead_run::spikes documents the
// request and the reply): both forget the ticks before "from"; then, unless the request
// only acknowledges, those through `completed`, within held_spikes::max_per_reply together.
// `state`: the run's, `dt`: ms per tick.
nlohmann::json read_recorded(held_spikes& spikes, state_samples& samples, const nlohmann::json& request, std::int64_t completed,
                             const std::string& state, double dt);

}  // namespace dnnc::node_server
