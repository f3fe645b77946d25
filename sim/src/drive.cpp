#include "drive.hpp"

#include "dnnc/model/draws.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace dnnc::sim {

poisson_sampler::poisson_sampler(double mean) {
    parts_ = mean > max_part_mean ? static_cast<std::uint32_t>(std::ceil(mean / max_part_mean)) : 1;
    const double part = mean / parts_;
    double p = std::exp(-part), cdf = p;
    // u = m * 2^-53 >= cdf  <=>  m >= cdf * 2^53 (both scalings exact)  <=>  m >= ceil(cdf * 2^53).
    auto add = [&] { at_least_.push_back(static_cast<std::uint64_t>(std::ceil(std::ldexp(cdf, 53)))); };
    add();
    // Past the last entry lies less than the double rounding of 1.
    for (std::uint32_t k = 1; cdf < 1 && p > 0; ++k) {
        p *= part / k;
        cdf += p;
        add();
    }
}

namespace {
constexpr std::size_t grain = 4096;
constexpr std::uint64_t golden = 0x9E3779B97F4A7C15ULL;  // splitmix64's step

// splitmix64's output for the state z (splitmix64::next after its step).
inline std::uint64_t mixed(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

// into[j] += k_j * weight for the neurons j of [0, n) whose count k_j (parts draws from the
// stream keyed keys[j], the first at state keys[j] + first) is not zero, as
// `if (k) into[j] += k * weight` would: a count of zero adds +0, which changes no sum here
// (a sum that starts at +0 and adds non-zero terms is never -0). Blocks of 64 neurons: draws
// and comparisons are loops over the block that vectorise; a table entry no neuron of the
// block reaches ends its comparisons (the entries do not decrease).
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
void add_counts(const std::uint64_t* __restrict keys, std::size_t n, std::uint64_t first, std::uint32_t parts,
                const std::uint64_t* __restrict at_least, std::size_t levels, float weight, float* __restrict into) {
    constexpr std::size_t block = 64;
    for (std::size_t b = 0; b < n; b += block) {
        const std::size_t len = std::min(block, n - b);
        std::uint32_t count[block] = {};
        std::uint64_t m[block];
        for (std::uint32_t p = 0; p < parts; ++p) {
            const std::uint64_t state = first + golden * p;
            for (std::size_t j = 0; j < len; ++j) m[j] = mixed(keys[b + j] + state) >> 11;
            for (std::size_t l = 0; l < levels; ++l) {
                const std::uint64_t threshold = at_least[l];
                std::uint32_t any = 0;
                for (std::size_t j = 0; j < len; ++j) {
                    const std::uint32_t reached = m[j] >= threshold;
                    count[j] += reached;
                    any |= reached;
                }
                if (any == 0) break;
            }
        }
        for (std::size_t j = 0; j < len; ++j) into[b + j] += count[j] != 0 ? static_cast<float>(count[j]) * weight : 0.0f;
    }
}
}  // namespace

namespace {
// Appends neuron (slot, index) to runs, extending the last run when both continue it.
template <typename Run>
void append(std::vector<Run>& runs, std::uint32_t slot, std::int64_t index) {
    if (!runs.empty() && runs.back().slot + runs.back().count == slot && runs.back().index + runs.back().count == index)
        ++runs.back().count;
    else
        runs.push_back({slot, index, 1});
}
}  // namespace

drive::drive(const model::generators& generators, const std::function<std::int64_t(std::int64_t)>& local_slot,
             std::size_t local, double dt)
    : dt_(dt), is_driven_(local, 0) {
    auto runs_of = [&](const std::vector<model::neuron_span>& targets) {
        std::vector<run> runs;
        for (const auto& span : targets)
            for (std::int64_t g = span.first; g < std::int64_t{span.first} + span.size; ++g)
                if (const auto slot = local_slot(g); slot >= 0) append(runs, static_cast<std::uint32_t>(slot), g);
        return runs;
    };
    auto window_of = [](double start, const std::optional<double>& stop) {
        return window{start, stop.value_or(std::numeric_limits<double>::infinity())};
    };
    for (const auto& p : generators.poisson) {
        auto runs = runs_of(p.targets);
        if (runs.empty()) continue;
        std::vector<std::uint64_t> keys;
        for (const auto& r : runs) {
            std::fill_n(is_driven_.begin() + r.slot, r.count, std::uint8_t{1});
            for (std::int64_t g = r.index; g < r.index + r.count; ++g)
                keys.push_back(splitmix64::at(p.seed, static_cast<std::uint64_t>(g)).next());
        }
        poisson_.push_back({std::move(runs), poisson_sampler(p.rate * dt / 1000.0), static_cast<float>(p.weight), std::move(keys)});
    }
    for (const auto& resolved : generators.currents) {
        auto runs = runs_of(resolved.targets);
        if (runs.empty()) continue;
        const auto& g = resolved.spec;
        current_source c;
        c.runs = std::move(runs);
        c.shape = g.shape;
        c.active = window_of(g.start, g.stop);
        c.amplitude = g.amplitude;
        c.offset = g.offset;
        c.radians_per_tick = 2 * M_PI * g.frequency * dt / 1000.0;
        c.phase = g.phase * M_PI / 180.0;
        c.mean = g.mean;
        c.std = g.std;
        if (g.shape == model::current_shape::noise) {
            if (g.interval_ms) c.interval = std::max<std::int64_t>(1, std::llround(*g.interval_ms / dt));
            for (const auto& r : c.runs)
                for (std::int64_t i = r.index; i < r.index + r.count; ++i)
                    c.keys.push_back(model::noise_key(g.seed, static_cast<std::uint64_t>(i)));
            c.values.resize(c.keys.size());
        }
        currents_.push_back(std::move(c));
    }
    for (const auto& train : generators.trains) {
        // The local members, grouped by rate (one group when every member has the same).
        std::map<double, std::vector<run>> by_rate;
        for (std::int64_t k = 0; k < train.members.size; ++k)
            if (const auto slot = local_slot(train.members.first + k); slot >= 0)
                append(by_rate[train.rates.size() == 1 ? train.rates[0] : train.rates[static_cast<std::size_t>(k)]],
                       static_cast<std::uint32_t>(slot), train.members.first + k);
        for (auto& [rate, runs] : by_rate) {
            std::vector<std::uint64_t> keys;
            for (const auto& r : runs)
                for (std::int64_t g = r.index; g < r.index + r.count; ++g)
                    keys.push_back(splitmix64::at(train.seed, static_cast<std::uint64_t>(g - train.members.first)).next());
            trains_.push_back({std::move(runs), poisson_sampler(rate * dt / 1000.0), window_of(train.start, train.stop), std::move(keys)});
        }
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
    // neurons of one run in parallel when there are many. Neuron i's stream at tick t is
    // splitmix64::at(key_i, t): its part p draws at state key_i + golden * (t + p + 1).
    const std::uint64_t first = golden * (static_cast<std::uint64_t>(t) + 1);
    for (const auto& g : poisson_) {
        float* const into = g.weight >= 0 ? excitatory_.data() : inhibitory_.data();
        const auto& at_least = g.sample.at_least();
        std::size_t key = 0;
        for (const auto& r : g.runs) {
            auto draw_run = [&](std::uint32_t from, std::uint32_t to) {
                add_counts(g.keys.data() + key + from, to - from, first, g.sample.parts(), at_least.data(), at_least.size(),
                           g.weight, into + r.slot + from);
            };
            if (r.count < 2 * grain)
                draw_run(0, r.count);
            else
                tbb::parallel_for(tbb::blocked_range<std::uint32_t>(0, r.count, grain),
                                  [&](const tbb::blocked_range<std::uint32_t>& part) { draw_run(part.begin(), part.end()); });
            key += r.count;
        }
    }
}

void drive::clear_poisson() {
    for (const auto k : driven_) excitatory_[k] = inhibitory_[k] = 0.0f;
}

bool drive::window::holds(std::int64_t t, double dt) const {
    const double time = static_cast<double>(t) * dt;
    return start <= time && time < stop;
}

std::pair<std::vector<drive::local_spike>::const_iterator, std::vector<drive::local_spike>::const_iterator> drive::spikes_at(
    std::int64_t t) const {
    return std::equal_range(spikes_.begin(), spikes_.end(), local_spike{t, 0},
                            [](const local_spike& a, const local_spike& b) { return a.tick < b.tick; });
}

void drive::add_current(std::int64_t t, current_source& c, std::vector<float>& ext, std::size_t lanes) {
    auto add = [&](const run& r, std::uint32_t k, float value) {
        for (std::size_t v = std::size_t{r.slot + k} * lanes; v < (std::size_t{r.slot + k} + 1) * lanes; ++v) ext[v] += value;
    };
    if (c.shape == model::current_shape::noise) {
        // A fresh draw per neuron at each interval: mean + std * N(0, 1) from the neuron's
        // stream at the interval's two steps.
        const std::int64_t interval = t / c.interval;
        if (interval != c.drawn) {
            for (std::size_t j = 0; j < c.keys.size(); ++j) c.values[j] = static_cast<float>(c.mean + c.std * model::noise_normal(c.keys[j], interval));
            c.drawn = interval;
        }
        std::size_t j = 0;
        for (const auto& r : c.runs)
            for (std::uint32_t k = 0; k < r.count; ++k) add(r, k, c.values[j++]);
        return;
    }
    const float value = c.shape == model::current_shape::dc
                            ? static_cast<float>(c.amplitude)
                            : static_cast<float>(c.offset + c.amplitude * std::sin(c.radians_per_tick * static_cast<double>(t) + c.phase));
    for (const auto& r : c.runs)
        for (std::uint32_t k = 0; k < r.count; ++k) add(r, k, value);
}

bool drive::add_external(std::int64_t t, std::vector<float>& ext, std::size_t lanes) {
    bool any = false;
    for (auto& c : currents_) {
        if (!c.active.holds(t, dt_)) continue;
        any = true;
        add_current(t, c, ext, lanes);
    }
    const auto [first, last] = spikes_at(t);
    for (auto s = first; s != last; ++s)
        for (std::size_t v = std::size_t{s->slot} * lanes; v < (std::size_t{s->slot} + 1) * lanes; ++v) ext[v] += 1.0f;
    const std::uint64_t state = golden * (static_cast<std::uint64_t>(t) + 1);  // as draw's
    for (const auto& train : trains_) {
        if (!train.active.holds(t, dt_)) continue;
        any = true;
        std::size_t key = 0;
        for (const auto& r : train.runs) {
            counts_.assign(r.count, 0.0f);
            const auto& at_least = train.sample.at_least();
            add_counts(train.keys.data() + key, r.count, state, train.sample.parts(), at_least.data(), at_least.size(), 1.0f,
                       counts_.data());
            for (std::uint32_t k = 0; k < r.count; ++k)
                for (std::size_t v = std::size_t{r.slot + k} * lanes; v < (std::size_t{r.slot + k} + 1) * lanes; ++v) ext[v] += counts_[k];
            key += r.count;
        }
    }
    return any || first != last;
}

void drive::clear_external(std::int64_t t, std::vector<float>& ext, std::size_t lanes) const {
    auto clear = [&](std::size_t slot, std::size_t count) {
        std::fill(ext.begin() + static_cast<std::ptrdiff_t>(slot * lanes), ext.begin() + static_cast<std::ptrdiff_t>((slot + count) * lanes),
                  0.0f);
    };
    for (const auto& c : currents_)
        if (c.active.holds(t, dt_))
            for (const auto& r : c.runs) clear(r.slot, r.count);
    for (const auto& train : trains_)
        if (train.active.holds(t, dt_))
            for (const auto& r : train.runs) clear(r.slot, r.count);
    const auto [first, last] = spikes_at(t);
    for (auto s = first; s != last; ++s) clear(s->slot, 1);
}

}  // namespace dnnc::sim
