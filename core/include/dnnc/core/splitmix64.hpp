#pragma once
// splitmix64 (Steele, Lea and Flood): the one random generator of dnnc. Its output is fixed
// by its definition, so a seed gives the same network, partition and initial state on every
// platform and library; the standard library's distributions are implementation-defined and
// are not used.
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace dnnc {

class splitmix64 {
public:
    explicit splitmix64(std::uint64_t seed) : state_(seed) {}
    // What each draw adds to the state (the golden ratio's 64-bit fraction).
    static constexpr std::uint64_t step = 0x9E3779B97F4A7C15ULL;

    std::uint64_t next() {
        std::uint64_t z = (state_ += step);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    // Uniform in [0, 1).
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    // Standard normal (Box-Muller); 1 - uniform() lies in (0, 1], so the log is finite.
    double normal() {
        const double u1 = uniform();
        return normal_of(u1, uniform());
    }
    // The normal that the uniforms u1 and u2, drawn in that order, give.
    static double normal_of(double u1, double u2) {
        const double r = std::sqrt(-2.0 * std::log(1.0 - u1));
        return r * std::cos(6.283185307179586 * u2);
    }
    // Uniform in [0, bound), bound > 0; the modulo bias is below 2^-40 for bounds under 2^24.
    std::uint64_t below(std::uint64_t bound) { return next() % bound; }
    template <typename T>
    void shuffle(std::vector<T>& items) {
        for (std::size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[static_cast<std::size_t>(below(i))]);
    }

    // Where the stream stands: splitmix64(state()) draws what this one draws next.
    std::uint64_t state() const { return state_; }
    // Passes over the next `draws` draws.
    void skip(std::uint64_t draws) { state_ += step * draws; }

    // The stream whose first draw is the index-th of `seed`'s: a value keyed by (seed, index),
    // the same wherever it is drawn.
    static splitmix64 at(std::uint64_t seed, std::uint64_t index) { return splitmix64(seed + step * index); }

private:
    std::uint64_t state_;
};

}  // namespace dnnc
