// Weights in 16 bits (<run weight-precision="half">): binary16 to nearest, ties to even, for
// every half and at both sides of every rounding boundary; exact decoding; the range.
#include "dnnc/core/half_weight.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace dnnc;

namespace {

// The finite non-negative halves, ascending, by their bits (0x0000 .. 0x7bff).
constexpr std::uint16_t largest_bits = 0x7bff;

// A half's value computed from its fields in double, apart from decode().
double value_of(std::uint16_t h) {
    const int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    const double magnitude = exponent == 0 ? std::ldexp(mantissa, -24) : std::ldexp(1024 + mantissa, exponent - 25);
    return h & 0x8000 ? -magnitude : magnitude;
}

}  // namespace

TEST_CASE("a half decodes to its exact value and encodes back to itself") {
    for (std::uint32_t magnitude = 0; magnitude <= largest_bits; ++magnitude)
        for (const std::uint32_t sign : {0u, 0x8000u}) {
            const auto h = static_cast<std::uint16_t>(sign | magnitude);
            const float w = half_weight::decode(h);
            REQUIRE(static_cast<double>(w) == value_of(h));
            REQUIRE(std::signbit(w) == (sign != 0));
            REQUIRE(half_weight::encode(w) == h);
        }
}

TEST_CASE("a float between two halves goes to the nearer, a tie to the even one") {
    for (std::uint16_t h = 0; h < largest_bits; ++h) {
        const double low = value_of(h), high = value_of(static_cast<std::uint16_t>(h + 1));
        const auto mid = static_cast<float>((low + high) / 2);  // exact: 12 significant bits
        REQUIRE(static_cast<double>(mid) == (low + high) / 2);
        const std::uint16_t even = h % 2 == 0 ? h : static_cast<std::uint16_t>(h + 1);
        for (const float sign : {1.0f, -1.0f}) {
            const std::uint16_t s = sign < 0 ? 0x8000 : 0;
            INFO("between halves " << h << " and " << h + 1 << ", sign " << sign);
            REQUIRE(half_weight::encode(sign * mid) == (s | even));
            REQUIRE(half_weight::encode(sign * std::nextafter(mid, 0.0f)) == (s | h));
            REQUIRE(half_weight::encode(sign * std::nextafter(mid, 1e9f)) == (s | (h + 1)));
        }
    }
}

TEST_CASE("any float in range goes to the half nearest to it") {
    std::vector<double> values;
    for (std::uint16_t h = 0; h <= largest_bits; ++h) values.push_back(value_of(h));
    std::mt19937 random(7);
    std::uniform_int_distribution<std::uint32_t> bits(0, 0x477fefffu);  // [0, 65519.996]
    for (int i = 0; i < 1000000; ++i) {
        float w;
        const std::uint32_t b = bits(random);
        std::memcpy(&w, &b, sizeof w);
        const auto x = static_cast<double>(w);
        const auto above = std::lower_bound(values.begin(), values.end(), x);
        const auto h = static_cast<std::uint16_t>(above - values.begin());
        std::uint16_t nearest = h;  // w is a half, or lies above the largest or below the smallest
        if (above == values.end())
            nearest = largest_bits;
        else if (*above != x && h > 0)
            nearest = x - above[-1] < *above - x   ? static_cast<std::uint16_t>(h - 1)
                      : x - above[-1] > *above - x ? h
                                                   : static_cast<std::uint16_t>(h % 2 == 0 ? h : h - 1);
        INFO("float bits " << b);
        REQUIRE(half_weight::encode(w) == nearest);
        REQUIRE(half_weight::encode(-w) == (0x8000 | nearest));
    }
}

TEST_CASE("weights from 65520 up, infinities and NaN have no half") {
    CHECK(half_weight::fits(0.0f));
    CHECK(half_weight::fits(-half_weight::largest));
    CHECK(half_weight::fits(std::nextafter(65520.0f, 0.0f)));
    CHECK(half_weight::encode(std::nextafter(65520.0f, 0.0f)) == largest_bits);
    CHECK_FALSE(half_weight::fits(65520.0f));
    CHECK_FALSE(half_weight::fits(-65520.0f));
    CHECK_FALSE(half_weight::fits(std::numeric_limits<float>::infinity()));
    CHECK_FALSE(half_weight::fits(std::numeric_limits<float>::quiet_NaN()));
    CHECK(half_weight::rounded(87.81f) == 87.8125f);
    CHECK(half_weight::rounded(-351.24f) == -351.25f);
    CHECK(half_weight::rounded(1e-9f) == 0.0f);
    CHECK(half_weight::as_kept(87.81f) == 87.8125f);
    CHECK(half_weight::as_kept(-70000.0f) == -70000.0f);  // no half: shown as given
}
