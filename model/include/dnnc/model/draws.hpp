#pragma once
// The random draws of the connection rules and of the weight and delay distributions, from
// splitmix64 streams and defined here (no std:: distributions), so that every platform and
// every partition draws the same values.
#include "dnnc/core/splitmix64.hpp"
#include "dnnc/model/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>

namespace dnnc::model {

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

namespace detail {
// The standard normals of the next `count` Box–Muller draws of a splitmix64 at `state` (two
// uniforms each, u1 then u2, none redrawn), by polynomial log and cos: each within 2^-44 of
// splitmix64::normal_of(u1, u2). `uniforms` (2 count) is given u1 and u2 of each, in
// order. draws.cpp says why.
void fast_normals(std::uint64_t state, std::size_t count, double* normal, double* uniforms);
// below[i] and above[i] for i < n: low[i] and high[i] (ms) in ticks of dt by ticks_of_ms,
// clamped to [1, cap], as vector code.
void ticks_of_ends(const double* low, const double* high, std::size_t n, double dt, std::uint16_t cap, std::uint16_t* below,
                   std::uint16_t* above);
}  // namespace detail

// A delay in ms as ticks of dt, at least 1 and at most `cap`: one value, and the ends of a
// batch of intervals at a time (value_draw::draw_rounded uses those when a rounding has them).
struct tick_rounding {
    double dt;
    std::uint16_t cap;
    std::uint16_t operator()(double ms) const { return static_cast<std::uint16_t>(std::clamp<std::int64_t>(ticks_of_ms(ms, dt), 1, cap)); }
    void ends(const double* low, const double* high, std::size_t n, std::uint16_t* below, std::uint16_t* above) const {
        detail::ticks_of_ends(low, high, n, dt, cap, below, above);
    }
};

// Whether a rounding rounds a batch of intervals' ends at once (tick_rounding).
template <class R, class = void>
struct rounds_ends : std::false_type {};
template <class R>
struct rounds_ends<R, std::void_t<decltype(&R::ends)>> : std::true_type {};

// A checked distribution, ready to draw values from.
class value_draw {
public:
    explicit value_draw(const distribution& d);
    double operator()(splitmix64& rng) const;
    // out[i] = round(operator()(rng)) for i < n, in order, rng left where those n draws leave
    // it; `round` must be monotone (x <= y gives round(x) <= round(y)). Normal draws take a
    // faster way to the same values: each is computed from polynomials to within a bound, and
    // only where that interval holds a bound of the distribution or a step of `round` (a few
    // in a million for a float weight) is the value computed as operator() computes it.
    // `round` takes any double, and may round a batch of intervals' ends at once
    // (tick_rounding::ends).
    template <class T, class Round>
    void draw_rounded(splitmix64& rng, T* out, std::size_t n, Round&& round) const;
    // How many of the stream's draws each value takes, where that is fixed, so that values
    // can be passed over without drawing them: 0 for a constant, 1 for a uniform, 2 for a
    // normal or lognormal one whose bounds lie beyond 9 std of the (underlying) normal (a
    // stream's normal stays within 8.58 std: Box-Muller from 53-bit uniforms), so that no
    // value is ever redrawn; nullopt where one may be.
    std::optional<std::uint64_t> draws_per_value() const { return per_value_; }
    // The largest value a draw can take, or for an unbounded normal (lognormal) distribution
    // mean + 10 std (exp(mu + 10 sigma)): the bound a drawn delay is clipped to.
    double upper() const;

private:
    distribution_kind kind_;
    double a_ = 0, b_ = 0;  // value; mean, std; min, max; or mu, sigma
    double low_, high_;     // the bounds a normal or lognormal value is redrawn into
    std::optional<std::uint64_t> per_value_;
};

template <class T, class Round>
void value_draw::draw_rounded(splitmix64& rng, T* out, std::size_t n, Round&& round) const {
    if (kind_ != distribution_kind::normal) {
        for (std::size_t i = 0; i < n; ++i) out[i] = round((*this)(rng));
        return;
    }
    auto same = [](const T& x, const T& y) { return std::memcmp(&x, &y, sizeof(T)) == 0; };  // -0.0f is not 0.0f
    // A value is the first of the stream's normals from where it starts that lies in the
    // bounds (a redraw takes the next normal, as operator() does), so one batch of normals
    // serves values and redraws alike. A batch holds no more normals than values are still
    // to come, so the stream is never drawn past the last value's normal.
    constexpr std::size_t batch = 64;
    double normal[batch], uniforms[2 * batch];
    std::size_t done = 0;
    int attempt = 0;  // the normals out[done] has rejected
    while (done < n) {
        const std::size_t count = std::min(batch, n - done);
        detail::fast_normals(rng.state(), count, normal, uniforms);
        // The exact value lies within e of x (fast_normals' bound times the std, and a few
        // roundings of x): where the whole interval [low, high] is in bounds and rounds to one
        // value, that value is the exact one's; where it is wholly out of bounds, so is the exact.
        double low[batch], high[batch];
        for (std::size_t i = 0; i < count; ++i) {
            const double x = a_ + b_ * normal[i];
            const double e = std::abs(b_) * 0x1p-40 + std::abs(x) * 0x1p-50 + 0x1p-1000;
            low[i] = x - e;
            high[i] = x + e;
        }
        T below[batch], above[batch];
        if constexpr (rounds_ends<std::decay_t<Round>>::value) {
            round.ends(low, high, count, below, above);
        } else {
            for (std::size_t i = 0; i < count; ++i) {
                below[i] = round(low[i]);
                above[i] = round(high[i]);
            }
        }
        for (std::size_t i = 0; i < count; ++i) {
            const bool inside = low[i] >= low_ && high[i] <= high_;
            if (inside && same(below[i], above[i])) {
                out[done++] = above[i];
                attempt = 0;
                continue;
            }
            const bool outside = high[i] < low_ || low[i] > high_;
            if (outside && attempt + 1 < max_redraws) {  // redrawn; only a last attempt needs its value, to clip
                ++attempt;
                continue;
            }
            const double exact = a_ + b_ * splitmix64::normal_of(uniforms[2 * i], uniforms[2 * i + 1]);
            if (exact >= low_ && exact <= high_) {
                out[done++] = round(exact);
                attempt = 0;
            } else if (++attempt == max_redraws) {
                out[done++] = round(std::clamp(exact, low_, high_));  // as operator() clips its last draw
                attempt = 0;
            }
        }
        rng.skip(2 * count);
    }
}

// Delays drawn from `d` (in ms) are ticks of `dt`, rounded by ticks_of_ms, at least 1 and at
// most this cap: value_draw::upper() in ticks, at most 65535.
std::uint16_t delay_cap(const distribution& d, double dt);

}  // namespace dnnc::model
