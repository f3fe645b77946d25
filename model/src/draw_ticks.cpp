// detail::ticks_of_ends (draws.hpp): a batch of delays' interval ends in ticks, as vector
// code. Compiled with -ffp-contract=off (CMakeLists.txt): the ticks must be ticks_of_ms's bit
// for bit, and a fused multiply-add rounds once where ticks_of_ms rounds twice.
#include "dnnc/model/draws.hpp"

namespace dnnc::model::detail {

// ticks_of_ms floors t = ms / dt (1 + 1e-12) + 0.5 (NaN: 0), and the result is clamped to
// [1, cap]; so t may be clamped to [0, cap] first (NaN to 0), where truncation floors, and
// the loop becomes vector code. The same operations in the same order as ticks_of_ms.
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
void ticks_of_ends(const double* low, const double* high, std::size_t n, double dt, std::uint16_t cap, std::uint16_t* below,
                   std::uint16_t* above) {
    const double top = cap;
    auto ticks = [&](double ms) {
        const double t = ms / dt * (1 + 1e-12) + 0.5;
        const double clamped = t > 0 ? (t < top ? t : top) : 0;
        const auto k = static_cast<std::int32_t>(clamped);
        return static_cast<std::uint16_t>(k < 1 ? 1 : k);
    };
    for (std::size_t i = 0; i < n; ++i) {
        below[i] = ticks(low[i]);
        above[i] = ticks(high[i]);
    }
}

}  // namespace dnnc::model::detail
