#pragma once
// A small seeded generator (Steele, Lea and Flood's splitmix64). The partitioner draws every
// random choice from it so that a seed gives the same partition on every platform; standard
// library distributions are implementation-defined and are not used.
#include <cstdint>
#include <utility>
#include <vector>

namespace dnnc::partitioner::detail {

class splitmix64 {
public:
    explicit splitmix64(std::uint64_t seed) : state_(seed) {}

    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }

    // Uniform in [0, bound), bound > 0; the modulo bias is below 2^-40 for the bounds used here.
    std::uint64_t below(std::uint64_t bound) { return next() % bound; }

    template <typename T>
    void shuffle(std::vector<T>& items) {
        for (std::size_t i = items.size(); i > 1; --i) {
            std::swap(items[i - 1], items[static_cast<std::size_t>(below(i))]);
        }
    }

private:
    std::uint64_t state_;
};

}  // namespace dnnc::partitioner::detail
