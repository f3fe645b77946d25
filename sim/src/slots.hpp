#pragma once
// Where each neuron an engine reads lives in its arrays (private to dnnc_sim). Local neuron
// k has slot k; the neurons peers send come next (in the peers' receives order), then any
// other source an engine_spec names, in the order first named.
#include "dnnc/core/error.hpp"
#include "dnnc/sim/engine.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace dnnc::sim {

constexpr std::uint32_t no_slot = ~std::uint32_t{0};

class slot_layout {
public:
    // The local neurons, in slot order; throws usage_error for one listed twice.
    explicit slot_layout(const std::vector<neuron_spec>& neurons) : local_(neurons.size()) {
        for (std::size_t k = 0; k < local_; ++k)
            if (!slot_of_.emplace(neurons[k].index, static_cast<std::uint32_t>(k)).second)
                throw usage_error("engine spec: neuron " + std::to_string(neurons[k].index) + " is listed twice");
    }

    // A neuron's slot; a neuron not seen before gets the next one.
    std::uint32_t slot_for(global_index g) {
        const auto [it, fresh] = slot_of_.emplace(g, static_cast<std::uint32_t>(slot_of_.size()));
        return it->second;
    }
    std::uint32_t find(global_index g) const {
        const auto it = slot_of_.find(g);
        return it == slot_of_.end() ? no_slot : it->second;
    }
    std::uint32_t local_slot(global_index neuron) const {
        const auto slot = find(neuron);
        if (slot == no_slot || slot >= local_) throw usage_error("neuron " + std::to_string(neuron) + " is not on this node");
        return slot;
    }
    bool is_local(global_index neuron) const { return find(neuron) < local_; }
    std::size_t local() const { return local_; }
    std::size_t size() const { return slot_of_.size(); }
    const std::unordered_map<global_index, std::uint32_t>& map() const { return slot_of_; }
    // The global index of every slot.
    std::vector<global_index> global_indices() const {
        std::vector<global_index> global_of(slot_of_.size());
        for (const auto& [g, slot] : slot_of_) global_of[slot] = g;
        return global_of;
    }

    // Every slot's rank: its place in ascending global index. The sparse path visits the
    // active sources of one delay in this order: local neurons take the first slots and
    // remote ones the rest, so on a node that reads remote neurons the slot order is not the
    // index order, and a sum fed in canonical order by sources on several nodes would not be
    // in order. Slots added after ranking (a dense block's sources, which feed no synapse)
    // rank last.
    void rank_slots() {
        std::vector<std::pair<global_index, std::uint32_t>> by_index(slot_of_.begin(), slot_of_.end());
        std::sort(by_index.begin(), by_index.end());
        rank_.assign(by_index.size(), 0);
        for (std::size_t r = 0; r < by_index.size(); ++r) rank_[by_index[r].second] = static_cast<std::uint32_t>(r);
        ranked_by_slot_ = true;
        for (std::size_t slot = 0; slot < rank_.size() && ranked_by_slot_; ++slot) ranked_by_slot_ = rank_[slot] == slot;
    }
    void rank_new_slots() {
        for (auto slot = static_cast<std::uint32_t>(rank_.size()); slot < slot_of_.size(); ++slot) rank_.push_back(slot);
    }
    const std::vector<std::uint32_t>& rank() const { return rank_; }
    bool ranked_by_slot() const { return ranked_by_slot_; }  // rank[slot] == slot everywhere: nothing to sort

private:
    std::size_t local_;
    std::unordered_map<global_index, std::uint32_t> slot_of_;
    std::vector<std::uint32_t> rank_;
    bool ranked_by_slot_ = true;
};

// Global index -> slot, read-only while rows are filled in parallel: a table when the
// indices are few enough for one (a network's neuron count, as a rule), else the map.
class slot_lookup {
public:
    slot_lookup(const std::unordered_map<global_index, std::uint32_t>& slots, std::uint64_t table_limit) : map_(slots) {
        global_index low = 0, top = -1;
        for (const auto& [g, slot] : slots) {
            low = std::min(low, g);
            top = std::max(top, g);
        }
        if (low < 0 || top < 0 || static_cast<std::uint64_t>(top) >= table_limit) return;
        table_.assign(static_cast<std::size_t>(top) + 1, no_slot);
        for (const auto& [g, slot] : slots) table_[static_cast<std::size_t>(g)] = slot;
        tabled_ = true;
    }
    std::uint32_t find(global_index g) const {
        if (tabled_) return g >= 0 && static_cast<std::uint64_t>(g) < table_.size() ? table_[static_cast<std::size_t>(g)] : no_slot;
        const auto it = map_.find(g);
        return it == map_.end() ? no_slot : it->second;
    }

private:
    const std::unordered_map<global_index, std::uint32_t>& map_;
    std::vector<std::uint32_t> table_;
    bool tabled_ = false;
};

}  // namespace dnnc::sim
