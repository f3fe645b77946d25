#pragma once
// Resolving neuron references (`a`, `pop`, `pop[i]`, `pop[i:j]`) against a network's
// neurons and populations, shared by the checker, the expander and the planner.
// Numbering: explicit neurons in document order, then each population's members.
#include "dnnc/protocol/model.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>

namespace dnnc::protocol {

struct neuron_range {
    std::uint64_t first = 0;
    std::uint64_t size = 0;
};

class symbol_table {
public:
    // The first of duplicate ids wins; the checker reports the duplicates.
    explicit symbol_table(const network& net);

    // A group of neurons, or the reason there is none ("no neuron 'x'", ...).
    std::variant<neuron_range, std::string> group(std::string_view ref) const;
    // Exactly one neuron: an explicit neuron or `pop[i]`.
    std::variant<std::uint64_t, std::string> single(std::string_view ref) const;

    // A group that must exist: config_error at `where`, saying why, when there is none.
    neuron_range range(std::string_view ref, const source_location& where) const;

    std::uint64_t neuron_count() const { return total_; }

private:
    struct entry {
        std::uint64_t first, size;
        bool is_population;
    };
    std::unordered_map<std::string_view, entry> names_;
    std::uint64_t total_ = 0;
};

}  // namespace dnnc::protocol
