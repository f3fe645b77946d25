// The draws behind the connection rules and the distributions: binomial and hypergeometric
// samples against their exact moments and probabilities, in every regime of their methods.
#include "dnnc/protocol/draws.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace dnnc;
using namespace dnnc::protocol;

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
