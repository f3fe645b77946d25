// The draws behind the connection rules and the distributions: binomial and hypergeometric
// samples against their exact moments and probabilities, in every regime of their methods;
// the distributions' values drawn in batches against the same drawn one by one.
#include "dnnc/model/draws.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

using namespace dnnc;
using namespace dnnc::model;

namespace {
struct sample_moments {
    double mean = 0, variance = 0;
};
// Moments of draws about `center` (near their mean, so that the sums keep their precision).
template <class Draw>
sample_moments moments_of(int draws, double center, Draw draw) {
    double sum = 0, squares = 0;
    for (int i = 0; i < draws; ++i) {
        const auto x = static_cast<double>(draw()) - center;
        sum += x;
        squares += x * x;
    }
    const double mean = sum / draws;
    return {center + mean, squares / draws - mean * mean};
}
}  // namespace

TEST_CASE("binomial draws have the binomial's mean and variance, by inversion and by BTPE") {
    struct param {
        std::uint64_t n;
        double p;
    };
    for (const auto [n, p] : {param{10, 0.3}, param{50, 0.5}, param{1000, 0.01}, param{1000, 0.2}, param{1000000, 0.5},
                              param{3000000000ULL, 0.999}, param{100, 0.9}}) {
        INFO("n " << n << " p " << p);
        splitmix64 rng(n * 7 + 1);
        const auto m = moments_of(200000, std::floor(static_cast<double>(n) * p), [&] {
            const auto x = binomial(rng, n, p);
            REQUIRE(x <= n);
            return x;
        });
        const double mean = static_cast<double>(n) * p, variance = mean * (1 - p);
        const double sd_of_mean = std::sqrt(variance / 200000);
        CHECK(std::abs(m.mean - mean) < 5 * sd_of_mean + 1e-12);
        CHECK(m.variance == Approx(variance).epsilon(0.03));
    }
    splitmix64 rng(1);
    CHECK(binomial(rng, 17, 0) == 0);
    CHECK(binomial(rng, 17, 1) == 17);
    CHECK(binomial(rng, 0, 0.5) == 0);
}

TEST_CASE("binomial draws follow the exact probabilities where BTPE takes over (n p = 40)") {
    // Frequencies of every value against the exact probabilities (chi-square, 99.9% level).
    const std::uint64_t n = 100;
    const double p = 0.4;
    const int draws = 400000;
    std::vector<double> seen(n + 1, 0);
    splitmix64 rng(42);
    for (int i = 0; i < draws; ++i) ++seen[binomial(rng, n, p)];
    double chi2 = 0;
    int cells = 0;
    for (std::uint64_t k = 0; k <= n; ++k) {
        const double log_f = std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0) +
                             static_cast<double>(k) * std::log(p) + static_cast<double>(n - k) * std::log(1 - p);
        const double expected = draws * std::exp(log_f);
        if (expected < 5) continue;
        chi2 += (seen[k] - expected) * (seen[k] - expected) / expected;
        ++cells;
    }
    CHECK(cells > 30);
    CHECK(chi2 < cells + 4.5 * std::sqrt(2.0 * cells));
}

TEST_CASE("hypergeometric draws have the hypergeometric's mean and variance, exact and approximated") {
    struct param {
        std::uint64_t draws, marked, others;
    };
    for (const auto [d, m, o] : {param{10, 5, 20}, param{42, 21, 21}, param{300, 1000, 50}, param{500000, 1000000, 3000000}}) {
        INFO("draws " << d << " marked " << m << " others " << o);
        splitmix64 rng(d + m);
        const auto s = moments_of(100000, 0, [&] {
            const auto x = hypergeometric(rng, d, m, o);
            REQUIRE(x <= std::min(d, m));
            REQUIRE(d - x <= o);
            return x;
        });
        const double t = static_cast<double>(m + o), mean = static_cast<double>(d) * static_cast<double>(m) / t;
        const double variance = mean * (static_cast<double>(o) / t) * (t - static_cast<double>(d)) / (t - 1);
        CHECK(std::abs(s.mean - mean) < 5 * std::sqrt(variance / 100000) + 1e-12);
        CHECK(s.variance == Approx(variance).epsilon(0.03));
    }
    splitmix64 rng(3);
    CHECK(hypergeometric(rng, 42, 21, 21) <= 21);
    CHECK(hypergeometric(rng, 10, 10, 0) == 10);
    CHECK(hypergeometric(rng, 0, 10, 10) == 0);
}

TEST_CASE("a delay distribution's cap in ticks: its bound, or mean + 10 std, at most 65535") {
    distribution d;
    d.kind = distribution_kind::normal;
    d.mean = 1.5;
    d.std = 0.75;
    CHECK(delay_cap(d, 0.1) == 90);
    d.max = 3.0;
    CHECK(delay_cap(d, 0.1) == 30);
    d.max.reset();
    d.std = 1e6;
    CHECK(delay_cap(d, 0.1) == 65535);
    distribution u;
    u.kind = distribution_kind::uniform;
    u.min = 0.0;
    u.max = 0.01;
    CHECK(delay_cap(u, 0.1) == 1);  // below a tick: at least 1
}

TEST_CASE("the fast normals are within 2^-44 of Box-Muller's, over the whole range of both uniforms") {
    // Random states, and the uniforms' extremes (u1 near 0 and 1: radius 0 and 8.57; u2 at the
    // quarter turns, where the cos changes branch).
    double worst = 0;
    std::uint64_t state = 12345;
    constexpr std::size_t count = 16;
    double normal[count], uniforms[2 * count];
    for (int batch = 0; batch < 200000; ++batch, state += 97 * splitmix64::step) {
        detail::fast_normals(state, count, normal, uniforms);
        splitmix64 rng(state);
        for (std::size_t i = 0; i < count; ++i) {
            const double u1 = rng.uniform(), u2 = rng.uniform();
            CHECK((u1 == uniforms[2 * i] && u2 == uniforms[2 * i + 1]));
            worst = std::max(worst, std::abs(normal[i] - splitmix64::normal_of(u1, u2)));
        }
    }
    INFO("worst difference " << worst);
    CHECK(worst < 0x1p-44);
    CHECK(worst > 0);  // the two ways differ: the comparison is not of one function with itself
}

namespace {
// n draws one by one, and by draw_rounded, with rng's end states.
template <class T, class Round>
void check_rounded_draws(const distribution& d, std::uint64_t seed, std::size_t n, Round round) {
    const value_draw draw(d);
    splitmix64 one(seed), many(seed);
    std::vector<T> expected(n), got(n);
    for (auto& x : expected) x = round(draw(one));
    // In uneven pieces, as rows consume them.
    for (std::size_t done = 0, piece = 1; done < n; done += piece, piece = piece * 3 % 37 + 1)
        draw.draw_rounded(many, got.data() + done, std::min(piece, n - done), round);
    CHECK(std::memcmp(expected.data(), got.data(), n * sizeof(T)) == 0);
    CHECK(one.state() == many.state());
}
distribution normal(double mean, double std, double min) {
    distribution d;
    d.kind = distribution_kind::normal;
    d.mean = mean;
    d.std = std;
    d.min = min;
    return d;
}
}  // namespace

TEST_CASE("rounded draws in batches are the values and stream of draws one by one") {
    auto as_float = [](double x) { return static_cast<float>(x); };
    auto as_ticks = [](double ms) { return tick_rounding{0.1, 90}(ms); };  // one value at a time: the generic path
    distribution weight = normal(87.808494, 8.780849, 0.0);
    check_rounded_draws<float>(weight, 1, 1000000, as_float);
    SECTION("bounds that redraw a third of the values, and both ends") {
        weight.min = 87.808494 - 0.5 * 8.780849;
        weight.max = 87.808494 + 2 * 8.780849;
        check_rounded_draws<float>(weight, 2, 300000, as_float);
    }
    SECTION("a bound between a draw's fast and exact values: the exact one tells whether it is redrawn") {
        // Streams whose first normal differs in the two ways; the bound at the larger of the
        // two values (min) or the smaller (max), so that exactly one of them is redrawn.
        int found = 0;
        for (std::uint64_t seed = 1; found < 20; ++seed) {
            double fast[1], uniforms[2];
            detail::fast_normals(seed, 1, fast, uniforms);
            const double exact = splitmix64::normal_of(uniforms[0], uniforms[1]);
            if (fast[0] == exact) continue;
            ++found;
            distribution bounded = normal(0.0, 1.0, std::max(fast[0], exact));
            check_rounded_draws<double>(bounded, seed, 3, [](double x) { return x; });
            bounded.min.reset();
            bounded.max = std::min(fast[0], exact);
            check_rounded_draws<double>(bounded, seed, 3, [](double x) { return x; });
        }
    }
    SECTION("bounds no value can meet: every draw clipped after its redraws") {
        weight.min = 1e6;
        check_rounded_draws<float>(weight, 3, 200, as_float);
    }
    SECTION("values near 0, where the sign of a zero counts") {
        weight.mean = 0.0;
        weight.std = 1e-30;
        weight.min.reset();
        check_rounded_draws<float>(weight, 4, 100000, as_float);
    }
    SECTION("a std of 0") {
        weight.std = 0.0;
        check_rounded_draws<float>(weight, 5, 1000, as_float);
    }
    SECTION("delays in ticks, many on a step of the rounding: by tick_rounding's ends, and one by one") {
        distribution delay = normal(1.5, 0.75, 0.05);
        check_rounded_draws<std::uint16_t>(delay, 6, 1000000, tick_rounding{0.1, 90});
        check_rounded_draws<std::uint16_t>(delay, 6, 100000, as_ticks);
        delay.std = 1e-13;  // every value within the fast bound of the step at 1.45 ms
        delay.mean = 1.45;
        check_rounded_draws<std::uint16_t>(delay, 7, 10000, tick_rounding{0.1, 90});
        check_rounded_draws<std::uint16_t>(delay, 7, 10000, as_ticks);
    }
    SECTION("other kinds draw one by one") {
        distribution lognormal;
        lognormal.kind = distribution_kind::lognormal;
        lognormal.mu = 0.0;
        lognormal.sigma = 1.0;
        lognormal.max = 3.0;
        check_rounded_draws<float>(lognormal, 8, 10000, as_float);
    }
}

TEST_CASE("a value takes a fixed number of draws only where none can be redrawn, and values are then passed over exactly") {
    distribution lognormal;
    lognormal.kind = distribution_kind::lognormal;
    lognormal.mu = 0.5;
    lognormal.sigma = 0.4;
    distribution uniform;
    uniform.kind = distribution_kind::uniform;
    uniform.min = -2.0;
    uniform.max = 3.0;
    distribution constant;
    constant.kind = distribution_kind::constant;
    constant.value = 1.5;
    auto unbounded = normal(1.0, 2.0, 0.0);
    unbounded.min.reset();
    auto near_bound = normal(1.0, 2.0, 1.0 - 8.5 * 2.0);  // a normal of the stream may pass it
    auto bounded_lognormal = lognormal;
    bounded_lognormal.max = std::exp(0.5 + 8.5 * 0.4);
    const std::vector<std::pair<distribution, std::optional<std::uint64_t>>> cases{
        {normal(87.808494, 8.780849, 0.0), 2},  // the microcircuit's: 10 std to the bound
        {unbounded, 2}, {lognormal, 2}, {uniform, 1}, {constant, 0},
        {near_bound, std::nullopt}, {bounded_lognormal, std::nullopt}, {normal(87.808494, 8.780849, 87.0), std::nullopt}};
    for (std::size_t c = 0; c < cases.size(); ++c) {
        INFO("case " << c);
        const value_draw draw(cases[c].first);
        REQUIRE(draw.draws_per_value() == cases[c].second);
        if (!cases[c].second) continue;
        splitmix64 one(c + 1);
        std::vector<float> values(5000);
        draw.draw_rounded(one, values.data(), values.size(), [](double x) { return static_cast<float>(x); });
        // Value n is the first drawn after passing over n values' draws.
        for (std::size_t n = 0; n < values.size(); n += 1 + n % 97) {
            splitmix64 from(c + 1);
            from.skip(n * *cases[c].second);
            float x;
            draw.draw_rounded(from, &x, 1, [](double v) { return static_cast<float>(v); });
            REQUIRE(std::memcmp(&x, &values[n], sizeof x) == 0);
        }
    }
}

TEST_CASE("tick_rounding rounds a batch of ends as it rounds each value") {
    // Magnitudes from 1e-3 to 1e21 ms, both signs, multiples of half a tick (the steps), the
    // cap's neighbours, infinities and NaN; in batches of every length up to 70.
    splitmix64 rng(12);
    std::vector<double> ms;
    for (int i = 0; i < 200000; ++i)
        ms.push_back((rng.uniform() < 0.5 ? -1 : 1) *
                     (i % 2 ? std::pow(10.0, -3 + 24 * rng.uniform()) : 0.05 * static_cast<double>(rng.below(20000))));
    for (const double x : {0.0, -0.0, 0.05, 0.15, 8.95, 9.0, 9.05, 6553.45, 6553.55, 1e300, -1e300})
        ms.push_back(x);
    ms.push_back(std::numeric_limits<double>::infinity());
    ms.push_back(-std::numeric_limits<double>::infinity());
    ms.push_back(std::nan(""));
    for (const double dt : {0.1, 0.025})
        for (const std::uint16_t cap : {std::uint16_t{1}, std::uint16_t{90}, std::uint16_t{65535}}) {
            const tick_rounding round{dt, cap};
            std::size_t wrong = 0;
            std::uint16_t below[70], above[70];
            for (std::size_t at = 0, n = 1; at < ms.size(); at += n, n = n % 70 + 1) {
                const std::size_t count = std::min(n, ms.size() - at);
                std::vector<double> high(ms.begin() + static_cast<std::ptrdiff_t>(at), ms.begin() + static_cast<std::ptrdiff_t>(at + count));
                for (auto& x : high) x = -x;  // the high ends: the values negated, to see both signs in each slot
                round.ends(ms.data() + at, high.data(), count, below, above);
                for (std::size_t i = 0; i < count; ++i) wrong += below[i] != round(ms[at + i]) || above[i] != round(high[i]);
            }
            INFO("dt " << dt << ", cap " << cap);
            CHECK(wrong == 0);
        }
}

TEST_CASE("a delay in ticks is floor(ms / dt (1 + 1e-12) + 0.5), saturated, at every magnitude and sign") {
    auto by_floor = [](double ms, double dt) -> std::int64_t {
        const double ticks = std::floor(ms / dt * (1 + 1e-12) + 0.5);
        if (std::isnan(ticks)) return 0;
        if (ticks >= 9.2e18) return std::numeric_limits<std::int64_t>::max();
        if (ticks <= -9.2e18) return std::numeric_limits<std::int64_t>::min();
        return static_cast<std::int64_t>(ticks);
    };
    CHECK(ticks_of_ms(0.15, 0.1) == 2);  // a decimal half rounds up
    CHECK(ticks_of_ms(0.05, 0.1) == 1);
    CHECK(ticks_of_ms(-0.14, 0.1) == -1);
    CHECK(ticks_of_ms(std::nan(""), 0.1) == 0);
    CHECK(ticks_of_ms(1e300, 0.1) == std::numeric_limits<std::int64_t>::max());
    CHECK(ticks_of_ms(-1e300, 0.1) == std::numeric_limits<std::int64_t>::min());
    splitmix64 rng(11);
    for (int i = 0; i < 1000000; ++i) {
        // Magnitudes from 1e-3 to 1e21 ms, both signs, and multiples of half a tick.
        const double ms = (rng.uniform() < 0.5 ? -1 : 1) *
                          (i % 2 ? std::pow(10.0, -3 + 24 * rng.uniform()) : 0.05 * static_cast<double>(rng.below(1000000)));
        const double dt = i % 3 ? 0.1 : 0.025;
        if (ticks_of_ms(ms, dt) != by_floor(ms, dt)) FAIL("ms " << ms << " dt " << dt);
    }
}
