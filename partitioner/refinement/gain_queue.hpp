#pragma once
// An addressable binary max-heap of vertices keyed by gain: the priority queue of FM
// refinement. Gains of coarse levels span too wide a range for bucket arrays, so a heap with
// a position index gives the same O(log n) updates without that limit.
#include "dnnc/partitioner/graph.hpp"

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace dnnc::partitioner::detail {

class gain_queue {
public:
    explicit gain_queue(std::size_t vertices) : position_(vertices, absent) { heap_.reserve(vertices); }

    bool empty() const { return heap_.empty(); }
    bool contains(vertex_id v) const { return position_[v] != absent; }
    vertex_id top() const { return heap_.front().second; }
    weight_t top_gain() const { return heap_.front().first; }

    void push(vertex_id v, weight_t gain) {
        position_[v] = static_cast<std::uint32_t>(heap_.size());
        heap_.emplace_back(gain, v);
        sift_up(heap_.size() - 1);
    }

    void update(vertex_id v, weight_t gain) {
        const std::size_t i = position_[v];
        const weight_t old = heap_[i].first;
        heap_[i].first = gain;
        if (gain > old) sift_up(i);
        else sift_down(i);
    }

    void push_or_update(vertex_id v, weight_t gain) {
        if (contains(v)) update(v, gain);
        else push(v, gain);
    }

    void remove(vertex_id v) {
        const std::size_t i = position_[v];
        position_[v] = absent;
        if (i + 1 == heap_.size()) {
            heap_.pop_back();
            return;
        }
        const vertex_id moved = heap_.back().second;
        place(i, heap_.back());
        heap_.pop_back();
        sift_up(i);
        if (position_[moved] == i) sift_down(i);
    }

    vertex_id pop() {
        const vertex_id v = top();
        remove(v);
        return v;
    }

    void clear() {
        for (const auto& entry : heap_) position_[entry.second] = absent;
        heap_.clear();
    }

private:
    // Positions fit 32 bits since vertex ids do; the smaller index stays in cache longer.
    static constexpr std::uint32_t absent = ~std::uint32_t{0};

    void place(std::size_t i, std::pair<weight_t, vertex_id> entry) {
        heap_[i] = entry;
        position_[entry.second] = static_cast<std::uint32_t>(i);
    }

    void sift_up(std::size_t i) {
        const auto entry = heap_[i];
        while (i > 0) {
            const std::size_t parent = (i - 1) / 2;
            if (heap_[parent].first >= entry.first) break;
            place(i, heap_[parent]);
            i = parent;
        }
        place(i, entry);
    }

    void sift_down(std::size_t i) {
        const auto entry = heap_[i];
        const std::size_t n = heap_.size();
        while (true) {
            std::size_t child = 2 * i + 1;
            if (child >= n) break;
            if (child + 1 < n && heap_[child + 1].first > heap_[child].first) ++child;
            if (heap_[child].first <= entry.first) break;
            place(i, heap_[child]);
            i = child;
        }
        place(i, entry);
    }

    std::vector<std::pair<weight_t, vertex_id>> heap_;
    std::vector<std::uint32_t> position_;
};

}  // namespace dnnc::partitioner::detail
