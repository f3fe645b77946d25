#pragma once
// The random draws of the connection rules and of the weight and delay distributions, from
// splitmix64 streams and defined here (no std:: distributions), so that every platform and
// every partition draws the same values.
#include "dnnc/core/splitmix64.hpp"
#include "dnnc/protocol/model.hpp"

#include <cstdint>

namespace dnnc::protocol {

// Binomial(n, p): inversion for n·min(p, 1 − p) < 30, BTPE (Kachitvichyanukul and
// Schmeiser 1988) above; both exact up to rounding.
std::uint64_t binomial(splitmix64& rng, std::uint64_t n, double p);

// How many of `draws` items drawn without replacement from `marked + others` items are
// marked. Exact (inversion from the mode) while the variance is below 10^4; above it, the
// normal approximation with continuity correction, clamped to the possible values (its
// error is then below about 1% of a standard deviation).
std::uint64_t hypergeometric(splitmix64& rng, std::uint64_t draws, std::uint64_t marked, std::uint64_t others);

// A <noise> generator's N(0, 1) draw for one target neuron in interval k (its intervals
// counted from tick 0), keyed by (seed, neuron, k): the same in every process that draws it.
// noise_key(seed, neuron) is the neuron's key, which a caller may keep.
inline std::uint64_t noise_key(std::uint64_t seed, std::uint64_t neuron) { return splitmix64::at(seed, neuron).next(); }
inline double noise_normal(std::uint64_t key, std::int64_t interval) {
    return splitmix64::at(key, 2 * static_cast<std::uint64_t>(interval)).normal();
}

// The most redraws of a bounded normal or lognormal value before it is clipped to its bounds.
inline constexpr int max_redraws = 1000;

// A checked distribution, ready to draw values from.
class value_draw {
public:
    explicit value_draw(const distribution& d);
    double operator()(splitmix64& rng) const;
    // The largest value a draw can take, or for an unbounded normal (lognormal) distribution
    // mean + 10 std (exp(mu + 10 sigma)): the bound a drawn delay is clipped to.
    double upper() const;

private:
    distribution_kind kind_;
    double a_ = 0, b_ = 0;  // value; mean, std; min, max; or mu, sigma
    double low_, high_;     // the bounds a normal or lognormal value is redrawn into
};

// Delays drawn from `d` (in ms) are ticks of `dt`, rounded by ticks_of_ms, at least 1 and at
// most this cap: value_draw::upper() in ticks, at most 65535.
std::uint16_t delay_cap(const distribution& d, double dt);

}  // namespace dnnc::protocol
