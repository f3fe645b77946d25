#include "drive.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace dnnc::sim {

poisson_sampler::poisson_sampler(double mean) {
    parts_ = mean > max_part_mean ? static_cast<std::uint32_t>(std::ceil(mean / max_part_mean)) : 1;
    const double part = mean / parts_;
    double p = std::exp(-part), cdf = p;
    cdf_.push_back(cdf);
    // Past the last entry lies less than the double rounding of 1.
    for (std::uint32_t k = 1; cdf < 1 && p > 0; ++k) {
        p *= part / k;
        cdf += p;
        cdf_.push_back(cdf);
    }
}

std::uint32_t poisson_sampler::operator()(splitmix64& stream) const {
    std::uint32_t count = 0;
    for (std::uint32_t part = 0; part < parts_; ++part) {
        const double u = stream.uniform();
        std::uint32_t k = 0;
        while (k < cdf_.size() && u >= cdf_[k]) ++k;
        count += k;
    }
    return count;
}

namespace {
constexpr std::size_t grain = 4096;

// The stream of neuron `index` at tick t of the generator seeded `seed`.
splitmix64 stream_of(std::uint64_t seed, std::int64_t index, std::int64_t t) {
    return splitmix64::at(splitmix64::at(seed, static_cast<std::uint64_t>(index)).next(), static_cast<std::uint64_t>(t));
}
}  // namespace

drive::drive(const protocol::generators& generators, const std::function<std::int64_t(std::int64_t)>& local_slot,
             std::size_t local, double dt)
    : dt_(dt), is_driven_(local, 0) {
    auto runs_of = [&](const std::vector<protocol::neuron_span>& targets) {
        std::vector<run> runs;
        for (const auto& span : targets)
            for (std::int64_t g = span.first; g < std::int64_t{span.first} + span.size; ++g) {
                const auto slot = local_slot(g);
                if (slot < 0) continue;
                if (!runs.empty() && runs.back().slot + runs.back().count == slot &&
                    runs.back().index + runs.back().count == g)
                    ++runs.back().count;
                else
                    runs.push_back({static_cast<std::uint32_t>(slot), g, 1});
            }
        return runs;
    };
    for (const auto& p : generators.poisson) {
        auto runs = runs_of(p.targets);
        if (runs.empty()) continue;
        for (const auto& r : runs) std::fill_n(is_driven_.begin() + r.slot, r.count, std::uint8_t{1});
        poisson_.push_back({std::move(runs), poisson_sampler(p.rate * dt / 1000.0), static_cast<float>(p.weight), p.seed});
    }
    for (const auto& d : generators.dc) {
        auto runs = runs_of(d.targets);
        if (runs.empty()) continue;
        dc_.push_back({std::move(runs), static_cast<float>(d.amplitude), d.start,
                       d.stop.value_or(std::numeric_limits<double>::infinity())});
    }
    for (const auto& spike : generators.spikes)
        if (const auto slot = local_slot(spike.neuron); slot >= 0) spikes_.push_back({spike.tick, static_cast<std::uint32_t>(slot)});
    for (std::size_t k = 0; k < local; ++k)
        if (is_driven_[k]) driven_.push_back(static_cast<std::uint32_t>(k));
    if (has_poisson()) {
        excitatory_.assign(local, 0.0f);
        inhibitory_.assign(local, 0.0f);
    }
}

void drive::draw(std::int64_t t) {
    // Generators one after another (their document order is the order they add in); the
    // neurons of one run in parallel when there are many.
    for (const auto& g : poisson_) {
        float* const into = g.weight >= 0 ? excitatory_.data() : inhibitory_.data();
        auto draw_run = [&](const run& r, std::uint32_t from, std::uint32_t to) {
            for (std::uint32_t j = from; j < to; ++j) {
                auto stream = stream_of(g.seed, r.index + j, t);
                const std::uint32_t k = g.sample(stream);
                if (k != 0) into[r.slot + j] += static_cast<float>(k) * g.weight;
            }
        };
        for (const auto& r : g.runs) {
            if (r.count < 2 * grain) {
                draw_run(r, 0, r.count);
                continue;
            }
            tbb::parallel_for(tbb::blocked_range<std::uint32_t>(0, r.count, grain),
                              [&](const tbb::blocked_range<std::uint32_t>& part) { draw_run(r, part.begin(), part.end()); });
        }
    }
}

void drive::clear_poisson() {
    for (const auto k : driven_) excitatory_[k] = inhibitory_[k] = 0.0f;
}

bool drive::active(const dc_source& d, std::int64_t t) const {
    const double time = static_cast<double>(t) * dt_;
    return d.start <= time && time < d.stop;
}

std::pair<std::vector<drive::local_spike>::const_iterator, std::vector<drive::local_spike>::const_iterator> drive::spikes_at(
    std::int64_t t) const {
    return std::equal_range(spikes_.begin(), spikes_.end(), local_spike{t, 0},
                            [](const local_spike& a, const local_spike& b) { return a.tick < b.tick; });
}

bool drive::add_external(std::int64_t t, std::vector<float>& ext, std::size_t lanes) const {
    bool any = false;
    for (const auto& d : dc_) {
        if (!active(d, t)) continue;
        any = true;
        for (const auto& r : d.runs)
            for (std::size_t v = std::size_t{r.slot} * lanes; v < (std::size_t{r.slot} + r.count) * lanes; ++v) ext[v] += d.amplitude;
    }
    const auto [first, last] = spikes_at(t);
    for (auto s = first; s != last; ++s)
        for (std::size_t v = std::size_t{s->slot} * lanes; v < (std::size_t{s->slot} + 1) * lanes; ++v) ext[v] += 1.0f;
    return any || first != last;
}

void drive::clear_external(std::int64_t t, std::vector<float>& ext, std::size_t lanes) const {
    auto clear = [&](std::size_t slot, std::size_t count) {
        std::fill(ext.begin() + static_cast<std::ptrdiff_t>(slot * lanes), ext.begin() + static_cast<std::ptrdiff_t>((slot + count) * lanes),
                  0.0f);
    };
    for (const auto& d : dc_)
        if (active(d, t))
            for (const auto& r : d.runs) clear(r.slot, r.count);
    const auto [first, last] = spikes_at(t);
    for (auto s = first; s != last; ++s) clear(s->slot, 1);
}

}  // namespace dnnc::sim
