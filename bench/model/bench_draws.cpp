// Drawn weights and delays: value_draw::draw_rounded (normal values in batches, by
// polynomials with an exact fallback) against its peer, the same draws one by one through
// operator() (glibc's log and cos), measured in the same run on the full-scale
// microcircuit's distributions: excitatory weights as floats, delays as ticks of 0.1 ms.
// Prints ns a draw for both, the ratio, and whether every value and the stream's end agree
// (exit 1 if not).
//   bench_draws [--draws N]   (default 20,000,000 of each; anything else exits 2)
#include "dnnc/model/draws.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace dnnc;
using namespace dnnc::model;

struct timed {
    double ns_one_by_one = 0, ns_batched = 0;
    bool same = false;
};

template <class T, class Round>
timed measure(const distribution& d, std::size_t draws, Round round) {
    const value_draw draw(d);
    std::vector<T> one(draws), batched(draws);
    splitmix64 a(1), b(1);
    const auto t0 = std::chrono::steady_clock::now();
    for (auto& x : one) x = round(draw(a));
    const auto t1 = std::chrono::steady_clock::now();
    constexpr std::size_t batch = 64;  // as synapse_rows draws along a row
    for (std::size_t i = 0; i < draws; i += batch) draw.draw_rounded(b, batched.data() + i, std::min(batch, draws - i), round);
    const auto t2 = std::chrono::steady_clock::now();
    const double n = static_cast<double>(draws);
    return {std::chrono::duration<double>(t1 - t0).count() / n * 1e9, std::chrono::duration<double>(t2 - t1).count() / n * 1e9,
            std::memcmp(one.data(), batched.data(), draws * sizeof(T)) == 0 && a.state() == b.state()};
}

}  // namespace

int main(int argc, char** argv) {
    std::size_t draws = 20000000;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        char* end = nullptr;
        if (arg == "--draws" && i + 1 < argc && (draws = std::strtoull(argv[i + 1], &end, 10)) > 0 && *end == '\0' &&
            argv[i + 1][0] != '-') {
            ++i;
        } else {
            std::fprintf(stderr, "usage: bench_draws [--draws N]\n");
            return 2;
        }
    }
    distribution weight;
    weight.kind = distribution_kind::normal;
    weight.mean = 87.808494;
    weight.std = 8.780849;
    weight.min = 0.0;
    distribution delay;
    delay.kind = distribution_kind::normal;
    delay.mean = 1.5;
    delay.std = 0.75;
    delay.min = 0.05;
    const auto w = measure<float>(weight, draws, [](double x) { return static_cast<float>(x); });
    const auto d = measure<std::uint16_t>(delay, draws, tick_rounding{0.1, 90});
    std::printf("| draws | one by one, ns a draw | batched, ns a draw | one by one / batched | the same values |\n|---|---|---|---|---|\n");
    std::printf("| weight, normal(87.8, 8.78), min 0, as float | %.1f | %.1f | %.2f | %s |\n", w.ns_one_by_one, w.ns_batched,
                w.ns_one_by_one / w.ns_batched, w.same ? "yes" : "NO");
    std::printf("| delay, normal(1.5, 0.75) ms, min 0.05, in ticks of 0.1 ms | %.1f | %.1f | %.2f | %s |\n", d.ns_one_by_one,
                d.ns_batched, d.ns_one_by_one / d.ns_batched, d.same ? "yes" : "NO");
    return w.same && d.same ? 0 : 1;
}
