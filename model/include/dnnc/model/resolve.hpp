#pragma once
// Resolving neuron references (`a`, `pop`, `pop[i]`, `pop[i:j]`) against a network's
// neurons and populations, shared by the checker, the expander and the planner.
// Numbering: explicit neurons in document order, then each population's members, then the
// members each applied <grow> adds, in document order (model.hpp, population_growth): a grown
// population's members are consecutive runs of indices, its extents.
#include "dnnc/model/model.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

namespace dnnc::model {

struct neuron_range {
    std::uint64_t first = 0;
    std::uint64_t size = 0;
};

// A run of a population's members with consecutive indices: members [member, member + size)
// are neurons [first, first + size). born: 0 for the members the population was written
// with, else 1 + the position among the applied grows of the one that added them (so
// extents born earlier have smaller numbers, across populations).
struct member_extent {
    std::uint64_t first = 0;
    std::uint64_t size = 0;
    std::uint64_t member = 0;
    std::uint32_t born = 0;
};

// The neuron at position k of a group of extents (positions count its members in member
// order); one past the last extent's end for k past the group's end. Inline: rows call it
// for every synapse they draw.
inline std::uint64_t neuron_at(const std::vector<member_extent>& x, std::uint64_t k) {
    for (const auto& e : x) {
        if (k < e.size) return e.first + k;
        k -= e.size;
    }
    return x.back().first + x.back().size;
}

// How many members a group of extents holds.
inline std::uint64_t members_in(const std::vector<member_extent>& x) {
    std::uint64_t n = 0;
    for (const auto& e : x) n += e.size;
    return n;
}
// Whether `neuron` is one of them.
inline bool holds(const std::vector<member_extent>& x, std::uint64_t neuron) {
    for (const auto& e : x)
        if (neuron >= e.first && neuron < e.first + e.size) return true;
    return false;
}

class symbol_table {
public:
    // The first of duplicate ids wins; the checker reports the duplicates.
    explicit symbol_table(const network& net);

    // A group of neurons, or the reason there is none ("no neuron 'x'", ...): its extents in
    // member order (one for a neuron, a population that never grew, or members within one
    // extent).
    std::variant<std::vector<member_extent>, std::string> group(std::string_view ref) const;
    // Exactly one neuron: an explicit neuron or `pop[i]`.
    std::variant<std::uint64_t, std::string> single(std::string_view ref) const;

    // A group that must exist: config_error at `where`, saying why, when there is none.
    std::vector<member_extent> extents(std::string_view ref, const source_location& where) const;
    // The same for a group of consecutive indices: config_error at `where` also for a grown
    // population's members in more than one extent, for what takes no grown population.
    neuron_range range(std::string_view ref, const source_location& where) const;

    std::uint64_t neuron_count() const { return total_; }

private:
    struct entry {
        bool is_population;
        std::vector<member_extent> extents;  // one, unless it grew
        std::uint64_t size() const { return extents.back().member + extents.back().size; }
    };
    // Members [lo, hi) of `e`, cut at its extents.
    static std::vector<member_extent> members(const entry& e, std::uint64_t lo, std::uint64_t hi);
    std::unordered_map<std::string_view, entry> names_;
    std::uint64_t total_ = 0;
};

}  // namespace dnnc::model
