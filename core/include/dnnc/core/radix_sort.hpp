#pragma once
// radix_sort: items sorted by an unsigned integer key, in time linear in the items. A
// least-significant-digit radix sort of `digit_bits` a pass over the digits below the
// largest key, skipping a pass whose digit every item shares; short vectors go to
// std::sort. Keys of equal value keep no particular order among short vectors, so the
// callers' keys are distinct or their items equal (drawn positions, synapse indices).
#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace dnnc {

// `scratch`: working space of the caller's (kept between calls to spare allocations).
template <unsigned digit_bits, class Items, class Key>
void radix_sort(Items& items, Items& scratch, std::uint64_t largest_key, Key key) {
    using T = typename Items::value_type;
    if (items.size() < 64) {
        std::sort(items.begin(), items.end(), [&](const T& a, const T& b) { return key(a) < key(b); });
        return;
    }
    constexpr std::uint64_t mask = (std::uint64_t{1} << digit_bits) - 1;
    std::array<std::uint32_t, mask + 1> at;  // on the stack: the sparse path sorts every tick
    scratch.resize(items.size());
    for (unsigned shift = 0; shift < 64 && (largest_key >> shift) != 0; shift += digit_bits) {
        at.fill(0);
        for (const auto& item : items) ++at[(key(item) >> shift) & mask];
        if (at[(key(items.front()) >> shift) & mask] == items.size()) continue;
        std::uint32_t first = 0;
        for (auto& n : at) first += std::exchange(n, first);
        for (const auto& item : items) scratch[at[(key(item) >> shift) & mask]++] = item;
        items.swap(scratch);
    }
}

}  // namespace dnnc
