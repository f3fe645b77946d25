#pragma once
// Binary search over a range of indices (positions in a store, neurons), where the standard
// algorithms want iterators over values.
#include <type_traits>

namespace dnnc {

// The first i in [lo, hi) for which before(i) is false, hi if there is none; before must be
// true up to some i and false from there on.
template <class Index, class Before>
Index first_not_before(Index lo, Index hi, Before&& before) {
    static_assert(std::is_integral_v<Index>, "indices");
    while (lo < hi) {
        const Index mid = lo + (hi - lo) / 2;
        if (before(mid))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

}  // namespace dnnc
