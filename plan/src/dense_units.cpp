#include "dense_units.hpp"

#include <algorithm>
#include <numeric>
#include <unordered_map>

namespace dnnc::plan::detail {

namespace {
// Union-find over items, for the targets of unsplit dense projections.
class target_groups {
public:
    explicit target_groups(std::size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), std::size_t{0}); }
    std::size_t root(std::size_t v) {
        while (parent_[v] != v) v = parent_[v] = parent_[parent_[v]];
        return v;
    }
    void join(std::size_t a, std::size_t b) { parent_[root(a)] = root(b); }

private:
    std::vector<std::size_t> parent_;
};
}  // namespace

item_units group_units(const std::vector<partitioner::weight_t>& weight, const std::vector<dense_targets>& dense,
                       const partitioner::physical_cluster& cluster) {
    const std::size_t n = weight.size();
    const double total = static_cast<double>(std::accumulate(weight.begin(), weight.end(), partitioner::weight_t{0}));
    const double capacity = std::accumulate(cluster.capacity.begin(), cluster.capacity.end(), 0.0);
    const double whole_limit = total * *std::max_element(cluster.capacity.begin(), cluster.capacity.end()) / capacity;
    const double block_limit =
        std::max(1.0, total * *std::min_element(cluster.capacity.begin(), cluster.capacity.end()) / capacity / 16);

    // A key per item names its unit: the group root (< n) for a whole dense unit, n + k for
    // row block k, `single` for a unit of its own.
    constexpr std::uint64_t single = ~std::uint64_t{0};
    std::vector<std::uint64_t> key(n, single);
    target_groups groups(n);
    std::vector<bool> in_group(n, false);
    for (const auto& d : dense) {
        if (d.split_rows || d.items.empty()) continue;
        for (auto t : d.items) {
            in_group[t] = true;
            groups.join(t, d.items.front());
        }
    }
    std::vector<double> group_weight(n, 0);
    for (std::size_t v = 0; v < n; ++v)
        if (in_group[v]) group_weight[groups.root(v)] += static_cast<double>(weight[v]);
    for (std::size_t v = 0; v < n; ++v)
        if (in_group[v] && group_weight[groups.root(v)] <= whole_limit) key[v] = groups.root(v);
    std::uint64_t next_block = n;
    for (const auto& d : dense) {
        double filled = 0;
        bool open = false;
        for (auto t : d.items) {
            if (key[t] != single) continue;  // in a whole unit, or in an earlier block's rows
            if (open && filled + static_cast<double>(weight[t]) > block_limit) open = false;
            if (!open) {
                ++next_block;
                filled = 0;
                open = true;
            }
            key[t] = next_block;
            filled += static_cast<double>(weight[t]);
        }
    }

    item_units out;
    out.unit_of_item.resize(n);
    std::unordered_map<std::uint64_t, partitioner::vertex_id> unit_of_key;
    for (std::size_t v = 0; v < n; ++v) {
        auto unit = static_cast<partitioner::vertex_id>(out.first_item.size());
        if (key[v] != single) unit = unit_of_key.emplace(key[v], unit).first->second;
        if (unit == out.first_item.size()) out.first_item.push_back(v);
        out.unit_of_item[v] = unit;
    }
    return out;
}

}  // namespace dnnc::plan::detail
