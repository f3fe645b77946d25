#include "dnnc/model/draws.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace dnnc::model {
namespace {

constexpr double log_sqrt_2pi = 0.91893853320467274178;

// log(n!), exact summation below 32, Stirling's series above (relative error below 1e-16).
double log_factorial(std::uint64_t n) {
    if (n < 32) {
        double s = 0;
        for (std::uint64_t k = 2; k <= n; ++k) s += std::log(static_cast<double>(k));
        return s;
    }
    const double x = static_cast<double>(n) + 1, x2 = x * x;
    return (x - 0.5) * std::log(x) - x + log_sqrt_2pi + (1.0 / 12 - (1.0 / 360 - 1.0 / (1260 * x2)) / x2) / x;
}

// Inversion, counting up from 0: for n·p < 30 with p <= 1/2 (numpy's method).
std::uint64_t binomial_inversion(splitmix64& rng, std::uint64_t n, double p) {
    const double q = 1 - p, nd = static_cast<double>(n);
    const double qn = std::exp(nd * std::log1p(-p)), np = nd * p;
    const double bound = std::min(nd, np + 10.0 * std::sqrt(np * q + 1));
    std::uint64_t x = 0;
    double px = qn, u = rng.uniform();
    while (u > px) {
        ++x;
        if (static_cast<double>(x) > bound) {
            x = 0;
            px = qn;
            u = rng.uniform();
        } else {
            u -= px;
            px = ((nd - static_cast<double>(x) + 1) * p * px) / (static_cast<double>(x) * q);
        }
    }
    return x;
}

// BTPE for n·p >= 30 with p <= 1/2: a triangle, two parallelograms and two exponential
// tails over the distribution, accepted by the exact ratio or Stirling-based bounds.
std::uint64_t binomial_btpe(splitmix64& rng, std::uint64_t n_, double r) {
    const double n = static_cast<double>(n_), q = 1 - r;
    const double fm = n * r + r;
    const double m = std::floor(fm);
    const double p1 = std::floor(2.195 * std::sqrt(n * r * q) - 4.6 * q) + 0.5;
    const double xm = m + 0.5, xl = xm - p1, xr = xm + p1;
    const double c = 0.134 + 20.5 / (15.3 + m);
    double a = (fm - xl) / (fm - xl * r);
    const double laml = a * (1 + a / 2);
    a = (xr - fm) / (xr * q);
    const double lamr = a * (1 + a / 2);
    const double p2 = p1 * (1 + 2 * c), p3 = p2 + c / laml, p4 = p3 + c / lamr;
    const double nrq = n * r * q;
    for (;;) {
        const double u = rng.uniform() * p4;
        double v = rng.uniform();
        double y;
        if (u <= p1) return static_cast<std::uint64_t>(std::floor(xm - p1 * v + u));  // the triangle
        if (u <= p2) {  // the parallelograms
            const double x = xl + (u - p1) / c;
            v = v * c + 1 - std::fabs(m - x + 0.5) / p1;
            if (v > 1) continue;
            y = std::floor(x);
        } else if (u <= p3) {  // the left tail
            y = std::floor(xl + std::log(v) / laml);
            if (y < 0 || v == 0) continue;
            v = v * (u - p2) * laml;
        } else {  // the right tail
            y = std::floor(xr - std::log(v) / lamr);
            if (y > n || v == 0) continue;
            v = v * (u - p3) * lamr;
        }
        const double k = std::fabs(y - m);
        if (k <= 20 || k >= nrq / 2 - 1) {
            // The ratio f(y) / f(m) by recursion.
            const double s = r / q, aa = s * (n + 1);
            double f = 1;
            if (m < y)
                for (double i = m + 1; i <= y; ++i) f *= aa / i - s;
            else if (m > y)
                for (double i = y + 1; i <= m; ++i) f /= aa / i - s;
            if (v > f) continue;
            return static_cast<std::uint64_t>(y);
        }
        // Squeeze, then the bound from Stirling's formula.
        const double rho = (k / nrq) * ((k * (k / 3 + 0.625) + 1.0 / 6) / nrq + 0.5);
        const double t = -k * k / (2 * nrq);
        const double la = std::log(v);
        if (la < t - rho) return static_cast<std::uint64_t>(y);
        if (la > t + rho) continue;
        const double x1 = y + 1, f1 = m + 1, z = n + 1 - m, w = n - y + 1;
        const auto corr = [](double x) {
            const double x2 = x * x;
            return (13860 - (462 - (132 - (99 - 140 / x2) / x2) / x2) / x2) / x / 166320;
        };
        if (la > xm * std::log(f1 / x1) + (n - m + 0.5) * std::log(z / w) + (y - m) * std::log(w * r / (x1 * q)) + corr(f1) +
                     corr(z) + corr(x1) + corr(w))
            continue;
        return static_cast<std::uint64_t>(y);
    }
}

// Written without integer conversions or branches, so that the loop over a batch becomes
// vector code. The value of an integer field of at most 52 bits, as a double.
inline double integer_value(std::uint64_t field) {
    constexpr std::uint64_t two_52 = 0x4330000000000000ULL;  // the bits of 2^52
    const std::uint64_t bits = field | two_52;
    double x;
    std::memcpy(&x, &bits, sizeof x);
    return x - 0x1p52;
}

// ln v for v in (0, 1], v >= 2^-53 (1 - a uniform): v = 2^k m with m in [sqrt(1/2), sqrt(2)),
// ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716, by its series up to s^19 (the
// rest below 1e-17 of ln m). m - 1 is exact; the error is a few units in the last place.
inline double fast_log(double v) {
    constexpr std::uint64_t sqrt_half = 0x3FE6A09E667F3BCDULL;  // the bits of sqrt(1/2)
    constexpr std::uint64_t bias = std::uint64_t{1023} << 52;
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof v);
    const std::uint64_t k_biased = (bits - sqrt_half + bias) >> 52;  // k + 1023, in [969, 1023]
    const std::uint64_t m_bits = bits - (k_biased << 52) + bias;
    double m;
    std::memcpy(&m, &m_bits, sizeof m);
    const double s = (m - 1) / (m + 1), z = s * s;
    const double series =
        z * (1.0 / 3 + z * (1.0 / 5 + z * (1.0 / 7 + z * (1.0 / 9 + z * (1.0 / 11 + z * (1.0 / 13 + z * (1.0 / 15 + z * (1.0 / 17 + z * (1.0 / 19)))))))));
    constexpr double ln2_hi = 0x1.62e42fefa3800p-1, ln2_lo = 0x1.ef35793c76730p-45;  // ln2_hi * k is exact
    const double k = integer_value(k_biased) - 1023;
    return k * ln2_hi + (2 * s + (2 * s * series + k * ln2_lo));
}

// cos(2 pi u) for u in [0, 1): u = q / 4 + r exactly, q in 0..4, |r| <= 1/8, so cos(2 pi u)
// is +-cos or +-sin of phi = 2 pi r, |phi| <= pi / 4, by their Taylor series up to phi^16 and
// phi^17 (the rest below 1e-17).
inline double fast_cos_2pi(double u) {
    const double q_field = 4 * u + 0x1p52;  // 2^52 + q, q the nearest integer to 4 u
    const double q = q_field - 0x1p52;
    const double phi = (u - q * 0.25) * 6.283185307179586476925;
    const double p = phi * phi;
    const double c =
        1 + p * (-1.0 / 2 + p * (1.0 / 24 + p * (-1.0 / 720 + p * (1.0 / 40320 + p * (-1.0 / 3628800 + p * (1.0 / 479001600 + p * (-1.0 / 87178291200 + p * (1.0 / 20922789888000))))))));
    const double s =
        phi * (1 + p * (-1.0 / 6 + p * (1.0 / 120 + p * (-1.0 / 5040 + p * (1.0 / 362880 + p * (-1.0 / 39916800 + p * (1.0 / 6227020800 + p * (-1.0 / 1307674368000 + p * (1.0 / 355687428096000)))))))));
    // q = 0, 1, 2, 3, 4: cos, -sin, -cos, sin, cos; chosen by bits (q's are the low ones of q_field).
    std::uint64_t q_bits, c_bits, s_bits;
    std::memcpy(&q_bits, &q_field, sizeof q_bits);
    std::memcpy(&c_bits, &c, sizeof c_bits);
    std::memcpy(&s_bits, &s, sizeof s_bits);
    const std::uint64_t take_sin = 0 - (q_bits & 1);                      // q odd
    const std::uint64_t negate = ((q_bits + 1) & 2) << 62;                // q = 1 or 2: the sign bit
    const std::uint64_t value_bits = ((s_bits & take_sin) | (c_bits & ~take_sin)) ^ negate;
    double value;
    std::memcpy(&value, &value_bits, sizeof value);
    return value;
}

}  // namespace

namespace detail {

// Against splitmix64::normal_of: its glibc log and cos are within an ulp of the true values;
// these within a few ulps, and its cos reads 2 pi u2 rounded once (off by up to 7e-16 at
// u2 near 1). So the radius sqrt(-2 ln v) (at most 8.6) agrees to about 1e-15 relative, the
// cos to about 2e-15, and the normals to about 3e-14 < 2^-44 (tests/model/test_draws.cpp
// measures it). value_draw::draw_rounded allows 2^-40.
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
void fast_normals(std::uint64_t state, std::size_t count, double* normal, double* uniforms) {
    for (std::size_t j = 0; j < 2 * count; ++j) uniforms[j] = splitmix64::at(state, j).uniform();
    for (std::size_t i = 0; i < count; ++i)
        normal[i] = std::sqrt(-2.0 * fast_log(1.0 - uniforms[2 * i])) * fast_cos_2pi(uniforms[2 * i + 1]);
}

}  // namespace detail

std::uint64_t binomial(splitmix64& rng, std::uint64_t n, double p) {
    if (n == 0 || !(p > 0)) return 0;
    if (p >= 1) return n;
    const double r = std::min(p, 1 - p);
    const std::uint64_t x = static_cast<double>(n) * r < 30 ? binomial_inversion(rng, n, r) : binomial_btpe(rng, n, r);
    return p > 0.5 ? n - x : x;
}

std::uint64_t hypergeometric(splitmix64& rng, std::uint64_t draws, std::uint64_t marked, std::uint64_t others) {
    const std::uint64_t total = marked + others;
    draws = std::min(draws, total);
    const std::uint64_t low = draws > others ? draws - others : 0, high = std::min(draws, marked);
    if (low == high) return low;
    const double d = static_cast<double>(draws), m = static_cast<double>(marked), o = static_cast<double>(others),
                 t = static_cast<double>(total);
    const double variance = d * (m / t) * (o / t) * (t - d) / (t - 1);
    if (variance >= 1e4) {
        const double x = std::floor(d * m / t + std::sqrt(variance) * rng.normal() + 0.5);
        return static_cast<std::uint64_t>(std::clamp(x, static_cast<double>(low), static_cast<double>(high)));
    }
    // Inversion from the mode outwards, the probabilities by their ratios.
    const auto mode = std::clamp(static_cast<std::uint64_t>((d + 1) * (m + 1) / (t + 2)), low, high);
    const auto ratio = [&](std::uint64_t k) {  // f(k + 1) / f(k)
        const double kk = static_cast<double>(k);
        return (m - kk) * (d - kk) / ((kk + 1) * (o - d + kk + 1));
    };
    const double f_mode = std::exp(log_factorial(marked) - log_factorial(mode) - log_factorial(marked - mode) +
                                   log_factorial(others) - log_factorial(draws - mode) - log_factorial(others - draws + mode) -
                                   log_factorial(total) + log_factorial(draws) + log_factorial(total - draws));
    double u = rng.uniform() - f_mode;
    if (u < 0) return mode;
    std::uint64_t up = mode, down = mode;
    double f_up = f_mode, f_down = f_mode;
    while (up < high || down > low) {
        if (up < high) {
            f_up *= ratio(up++);
            if ((u -= f_up) < 0) return up;
        }
        if (down > low) {
            f_down /= ratio(--down);
            if ((u -= f_down) < 0) return down;
        }
    }
    return mode;  // what rounding left over
}

value_draw::value_draw(const distribution& d)
    : kind_(d.kind), low_(d.min.value_or(-std::numeric_limits<double>::infinity())),
      high_(d.max.value_or(std::numeric_limits<double>::infinity())) {
    // draws_per_value: a normal's values are never redrawn where its bounds lie beyond 9 std.
    switch (d.kind) {
    case distribution_kind::constant:
        a_ = d.value.value_or(0);
        per_value_ = 0;
        break;
    case distribution_kind::normal:
        a_ = d.mean.value_or(0), b_ = d.std.value_or(0);
        if (a_ - 9 * std::abs(b_) > low_ && a_ + 9 * std::abs(b_) < high_) per_value_ = 2;
        break;
    case distribution_kind::uniform:
        a_ = d.min.value_or(0), b_ = d.max.value_or(0);
        per_value_ = 1;
        break;
    case distribution_kind::lognormal:
        a_ = d.mu.value_or(0), b_ = d.sigma.value_or(0);
        if (std::exp(a_ - 9 * std::abs(b_)) > low_ && std::exp(a_ + 9 * std::abs(b_)) < high_) per_value_ = 2;
        break;
    }
}

double value_draw::operator()(splitmix64& rng) const {
    switch (kind_) {
    case distribution_kind::constant: return a_;
    case distribution_kind::uniform: return a_ + (b_ - a_) * rng.uniform();
    case distribution_kind::normal:
    case distribution_kind::lognormal: break;
    }
    // Redrawn until it lies in [min, max] (NEST's redraw), then clipped.
    double x = 0;
    for (int attempt = 0; attempt < max_redraws; ++attempt) {
        x = a_ + b_ * rng.normal();
        if (kind_ == distribution_kind::lognormal) x = std::exp(x);
        if (x >= low_ && x <= high_) return x;
    }
    return std::clamp(x, low_, high_);
}

double value_draw::upper() const {
    switch (kind_) {
    case distribution_kind::constant: return a_;
    case distribution_kind::uniform: return b_;
    case distribution_kind::normal: return std::min(high_, a_ + 10 * b_);
    case distribution_kind::lognormal: return std::min(high_, std::exp(a_ + 10 * b_));
    }
    return a_;
}

std::uint16_t delay_cap(const distribution& d, double dt) {
    return static_cast<std::uint16_t>(std::clamp<std::int64_t>(ticks_of_ms(value_draw(d).upper(), dt), 1, 65535));
}

}  // namespace dnnc::model
