#include "dnnc/protocol/draws.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dnnc::protocol {
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

}  // namespace

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
    switch (d.kind) {
    case distribution_kind::constant: a_ = d.value.value_or(0); break;
    case distribution_kind::normal: a_ = d.mean.value_or(0), b_ = d.std.value_or(0); break;
    case distribution_kind::uniform: a_ = d.min.value_or(0), b_ = d.max.value_or(0); break;
    case distribution_kind::lognormal: a_ = d.mu.value_or(0), b_ = d.sigma.value_or(0); break;
    }
}

double value_draw::operator()(splitmix64& rng) const {
    switch (kind_) {
    case distribution_kind::constant: return a_;
    case distribution_kind::uniform: return a_ + (b_ - a_) * rng.uniform();
    case distribution_kind::normal:
    case distribution_kind::lognormal: {
        // Redrawn until it lies in [min, max] (NEST's redraw), then clipped.
        double x = 0;
        for (int attempt = 0; attempt < max_redraws; ++attempt) {
            x = a_ + b_ * rng.normal();
            if (kind_ == distribution_kind::lognormal) x = std::exp(x);
            if (x >= low_ && x <= high_) return x;
        }
        return std::clamp(x, low_, high_);
    }
    }
    return a_;
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

}  // namespace dnnc::protocol
