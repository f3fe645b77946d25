#include "row_sources.hpp"

#include "slots.hpp"
#include "synapse_store.hpp"

#include "dnnc/core/half_weight.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <limits>

namespace dnnc::sim {

redrawn_weights::redrawn_weights(model::synapse_rows rows, const std::vector<neuron_spec>& neurons)
    : rows_(std::move(rows)), neurons_(neurons) {
    // Each row's parts, a block of rows at a time in parallel, then joined in row order.
    constexpr std::size_t block = 1024;
    std::vector<std::vector<part>> blocks((neurons.size() + block - 1) / block);
    tbb::parallel_for(std::size_t{0}, blocks.size(), [&](std::size_t b) {
        for (auto k = b * block; k < std::min(neurons.size(), (b + 1) * block); ++k)
            rows_.for_each_element(static_cast<model::neuron_index>(neurons[k].index), [&](std::size_t e, std::uint64_t n) {
                blocks[b].push_back({n, static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(e)});
            });
    });
    std::uint64_t first = 0;
    for (auto& parts : blocks) {
        for (auto p : parts) {
            parts_.push_back({first, p.row, p.element});
            first += p.first;  // its synapses, for now
        }
        parts = {};
    }
    parts_.push_back({first, static_cast<std::uint32_t>(neurons.size()), 0});
    row_part_.assign(neurons.size() + 1, 0);
    for (std::size_t p = 0; p + 1 < parts_.size(); ++p) ++row_part_[parts_[p].row + 1];
    for (std::size_t k = 0; k < neurons.size(); ++k) row_part_[k + 1] += row_part_[k];
}

model::synapse_rows::row_weights redrawn_weights::stream(const part& p) const {
    return {rows_, static_cast<model::neuron_index>(neurons_[p.row].index), p.element};
}

float redrawn_weights::reader::weight(std::uint64_t s) {
    const auto& parts = from_.parts_;
    if (!stream_ || s >= parts[part_ + 1].first) {
        // The next few parts are looked at in turn (a range of slots reads most rows' parts
        // a few apart), farther ones found by a binary search.
        std::size_t ahead = stream_ ? part_ + 1 : parts.size();
        for (const auto stop = std::min(ahead + 8, parts.size() - 1); ahead < stop && s >= parts[ahead + 1].first;) ++ahead;
        if (ahead >= parts.size() - 1 || s >= parts[ahead + 1].first)
            ahead = static_cast<std::size_t>(std::upper_bound(parts.begin(), parts.end(), s, [](std::uint64_t at, const part& p) { return at < p.first; }) -
                                             parts.begin()) - 1;
        part_ = ahead;
        stream_.emplace(from_.stream(parts[part_]));
        next_ = parts[part_].first;
    }
    stream_->skip(s - next_);
    next_ = s + 1;
    return stream_->next();
}

template <class T, class Convert>
void redrawn_weights::write(T* weights, Convert&& convert) const {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, parts_.size() - 1, 64), [&](const tbb::blocked_range<std::size_t>& r) {
        for (auto p = r.begin(); p < r.end(); ++p) {
            auto drawn = stream(parts_[p]);
            for (auto s = parts_[p].first; s < parts_[p + 1].first; ++s) weights[s] = convert(drawn.next());
        }
    });
}

void redrawn_weights::write(float* weights) const {
    write(weights, [](float w) { return w; });
}

void redrawn_weights::write(std::uint16_t* weights) const {
    write(weights, [](float w) { return half_weight::encode(w); });
}

void build_from_share(synapse_store& store, const model::network& share, const std::vector<neuron_spec>& neurons,
                      const slot_layout& slots, const std::string& node, bool half_weights, std::optional<redrawn_weights>* redraw) {
    for (const auto& n : neurons)
        if (n.index < 0 || n.index > std::numeric_limits<model::neuron_index>::max())
            throw protocol_error("neuron " + std::to_string(n.index) + " lies outside any network");
    std::vector<model::neuron_index> targets;
    targets.reserve(neurons.size());
    for (const auto& n : neurons) targets.push_back(static_cast<model::neuron_index>(n.index));
    // Only this node's rows are drawn (fixed-outdegree rows come from every source's draws).
    model::synapse_rows rows(share, std::move(targets));
    for (std::size_t e = 0; e < rows.element_count(); ++e)
        if (rows.is_dense(e))
            throw protocol_error(format_located(rows.where(e), "a node's share of a network carries no dense projections"));
    for (const auto& n : neurons)
        if (n.index < 0 || static_cast<std::uint64_t>(n.index) >= rows.neuron_count())
            throw protocol_error("neuron " + std::to_string(n.index) + " lies outside the share's " +
                                 std::to_string(rows.neuron_count()) + " neurons");
    // Own weights to draw again: some element's weights or delays are drawn or listed, and no
    // synapse is plastic (plastic synapses keep theirs in the rows).
    bool own = false;
    for (std::size_t e = 0; e < rows.element_count(); ++e) own = own || !rows.uniform(e);
    if (redraw == nullptr || !own || rows.synapse_models().size() > 1) {
        store.build(share_rows(rows, neurons), neurons, slots, node, half_weights);
        return;
    }
    // The rows' counts, drawn once for the build and the redraw. A weight beyond 16 bits is
    // found while the rows are built, so half weights are drawn then.
    const auto& counted = redraw->emplace(std::move(rows), neurons);
    store.build(share_rows(counted.rows(), neurons, half_weights, &counted), neurons, slots, node, half_weights, false);
    if (!store.weights_released()) redraw->reset();
}

}  // namespace dnnc::sim
