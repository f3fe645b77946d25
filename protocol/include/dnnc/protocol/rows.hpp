#pragma once
// The incoming synapses of single target neurons, drawn from the compact network: the one
// implementation of the connection rules. expand() stores, for each neuron, exactly what
// synapse_rows::for_each gives it; a node builds only its own rows from its share.
//
// Canonical order of a row: connection elements in document order (net.connection_order),
// and within a projection its sources in index order. Rows are independent: a random
// projection draws each target row from its own stream (the projection's seed mixed with
// the row), so rows may be generated in any order and in parallel from one const object.
#include "dnnc/core/splitmix64.hpp"
#include "dnnc/protocol/model.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace dnnc::protocol {

using neuron_index = std::uint32_t;


// The weight and delay that every synapse of a connection element has.
struct uniform_synapse {
    float weight = 1;
    std::uint16_t delay = 1;
};

class synapse_rows {
public:
    // O(elements + explicit synapses); throws config_error (located) on a reference to no neuron.
    explicit synapse_rows(const network& net);

    std::size_t neuron_count() const { return neurons_; }
    // net.connection_order.size().
    std::size_t element_count() const { return elements_.size(); }

    // f(neuron_index source, float weight, std::uint16_t delay, std::size_t element) for every
    // incoming synapse of `target`, in canonical order. Dense projections are skipped.
    template <class F>
    void for_each(neuron_index target, F&& f) const {
        elements_of(target, [&](std::size_t e) { each_of(elements_[e], target, e, f); });
    }

    // How many synapses for_each would give (random projections draw their skips only).
    std::uint64_t count(neuron_index target) const {
        std::uint64_t n = 0;
        elements_of(target, [&](std::size_t e) { n += count_of(elements_[e], target); });
        return n;
    }
    // How many of them come from connection element `element`.
    std::uint64_t count(neuron_index target, std::size_t element) const;

    // f(std::size_t element, std::uint64_t synapses) for each element that gives `target` at
    // least one synapse, in canonical order.
    template <class F>
    void for_each_element(neuron_index target, F&& f) const {
        elements_of(target, [&](std::size_t e) {
            if (const auto n = count_of(elements_[e], target)) f(e, n);
        });
    }

    // The weight and delay of every synapse of connection element `element`, when they are
    // the same for all (every projection and explicit synapse today; an explicit synapse is
    // an element of one synapse); nullopt for elements whose synapses differ, and for dense
    // projections (which give no synapses here).
    std::optional<uniform_synapse> uniform(std::size_t element) const;
    // Whether the element is a dense projection.
    bool is_dense(std::size_t element) const { return elements_[element].kind == rule::dense; }
    // Where the element stands in its document.
    const source_location& where(std::size_t element) const { return *elements_[element].where; }

private:
    enum class rule : std::uint8_t { synapse, all, one_to_one, random, fixed_indegree, dense };
    struct compiled {
        rule kind = rule::synapse;
        bool autapses = true;
        std::uint16_t delay = 1;
        float weight = 1;
        std::uint64_t from_first = 0, from_size = 0, to_first = 0, to_size = 0;
        std::uint64_t seed = 0;
        double p = 0, log_q = 0;  // random: probability and log(1 - p)
        std::uint64_t indegree = 0;  // fixed_indegree
        bool multapses = true;
        const source_location* where = nullptr;
    };

    // g(element) for every element with `target` in its target range, in element order:
    // the projections covering its interval merged with its explicit synapses.
    template <class G>
    void elements_of(neuron_index target, G&& g) const {
        const auto [cover, cover_end] = covering(target);
        auto [own, own_end] = explicit_of(target);
        for (auto c = cover; c != cover_end; ++c) {
            for (; own != own_end && own->second < *c; ++own) g(own->second);
            g(*c);
        }
        for (; own != own_end; ++own) g(own->second);
    }
    std::pair<const std::uint32_t*, const std::uint32_t*> covering(neuron_index target) const;
    using explicit_entry = std::pair<neuron_index, std::uint32_t>;  // (target, element)
    std::pair<const explicit_entry*, const explicit_entry*> explicit_of(neuron_index target) const;

    static std::uint64_t count_of(const compiled& r, neuron_index target);

    // A random projection's row: the positions k of its sources, ascending, drawn with
    // geometric skips from the row's own stream.
    class random_row {
    public:
        random_row(const compiled& r, neuron_index target)
            : rng_(splitmix64(r.seed ^ (0xD1B54A32D192ED03ULL * (target - r.to_first + 1))).next()),
              size_(r.from_size), p_(r.p), log_q_(r.log_q) {}
        // The next source position, or false when the row is done.
        bool next(std::uint64_t& k) {
            if (started_) ++k_;
            started_ = true;
            if (p_ < 1) {
                const double skip = std::floor(std::log1p(-rng_.uniform()) / log_q_);
                if (skip >= static_cast<double>(size_ - k_)) return false;
                k_ += static_cast<std::uint64_t>(skip);
            }
            if (k_ >= size_) return false;
            k = k_;
            return true;
        }

    private:
        splitmix64 rng_;
        std::uint64_t size_, k_ = 0;
        double p_, log_q_;
        bool started_ = false;
    };

    // A fixed in-degree row: the positions of its sources in the source group, ascending,
    // drawn from the row's own stream (see rows.cpp).
    static void fixed_indegree_row(const compiled& r, neuron_index target, std::vector<std::uint64_t>& positions);

    template <class F>
    static void each_of(const compiled& r, neuron_index target, std::size_t e, F& f) {
        switch (r.kind) {
        case rule::synapse: f(static_cast<neuron_index>(r.from_first), r.weight, r.delay, e); break;
        case rule::all:
            for (std::uint64_t s = 0; s < r.from_size; ++s)
                if (r.autapses || r.from_first + s != target) f(static_cast<neuron_index>(r.from_first + s), r.weight, r.delay, e);
            break;
        case rule::one_to_one:
            if (r.autapses || r.from_first != r.to_first)
                f(static_cast<neuron_index>(r.from_first + (target - r.to_first)), r.weight, r.delay, e);
            break;
        case rule::random: {
            if (r.p <= 0 || r.from_size == 0) break;
            random_row row(r, target);
            for (std::uint64_t k = 0; row.next(k);)
                if (r.autapses || r.from_first + k != target) f(static_cast<neuron_index>(r.from_first + k), r.weight, r.delay, e);
            break;
        }
        case rule::fixed_indegree: {
            thread_local std::vector<std::uint64_t> positions;
            fixed_indegree_row(r, target, positions);
            for (const auto k : positions) f(static_cast<neuron_index>(r.from_first + k), r.weight, r.delay, e);
            break;
        }
        case rule::dense: break;
        }
    }

    std::size_t neurons_ = 0;
    std::vector<compiled> elements_;
    // Projections by target interval: interval i is [bounds_[i], bounds_[i + 1]) and is
    // covered by cover_[cover_begin_[i] ... cover_begin_[i + 1]), ascending.
    std::vector<std::uint64_t> bounds_;
    std::vector<std::size_t> cover_begin_;
    std::vector<std::uint32_t> cover_;
    std::vector<explicit_entry> explicit_;  // sorted by target, then element
};

}  // namespace dnnc::protocol
