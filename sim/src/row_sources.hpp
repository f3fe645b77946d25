#pragma once
// Where a synapse store's rows come from (private to dnnc_sim). A row source answers, for
// local neuron k:
//   shape(k) -> {synapses, runs} of its row (a run: consecutive synapses of one class);
//   fill(k, f) calls f(source, class, weight, delay) for each, in canonical order;
//   classes() the (weight, delay) of each class; varies() whether some synapse has none;
//   by_model(): whether classes are instead synapse models (static_synapse, then one per
//   plastic connection element), whose synapses all keep their own weight and delay;
//   models() then lists them.
#include "dnnc/core/error.hpp"
#include "dnnc/model/rows.hpp"
#include "dnnc/sim/engine.hpp"

#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace dnnc::sim {

class slot_layout;
class synapse_store;

// A weight and a delay shared by synapses.
struct weight_delay {
    float weight;
    std::uint16_t delay;
};

// The rows an engine_spec lists (spec.in), their classes found by value.
class listed_rows {
public:
    // spec.in_begin is empty (no synapses) or holds an offset per neuron and one past the last.
    explicit listed_rows(const engine_spec& spec) : spec_(spec) {
        const bool listed = !spec.in_begin.empty();
        bool matches = listed ? spec.in_begin.size() == spec.neurons.size() + 1 && spec.in_begin.front() == 0 &&
                                    spec.in_begin.back() == spec.in.size()
                              : spec.in.empty();
        for (std::size_t k = 0; listed && matches && k < spec.neurons.size(); ++k) matches = spec.in_begin[k] <= spec.in_begin[k + 1];
        if (!matches) throw usage_error("engine spec: in_begin does not match the synapses");
        std::unordered_map<std::uint64_t, std::uint32_t> index;
        class_of_.reserve(spec.in.size());
        for (const auto& s : spec.in) {
            if (s.delay < 1) throw usage_error("engine spec: delay must be at least 1");
            if (varies_) continue;
            std::uint32_t bits;
            std::memcpy(&bits, &s.weight, sizeof bits);
            const auto [it, fresh] = index.emplace(std::uint64_t{bits} << 16 | s.delay, static_cast<std::uint32_t>(classes_.size()));
            if (fresh) classes_.push_back({s.weight, s.delay});
            class_of_.push_back(it->second);
            // So many that most synapses would be runs of their own: per-synapse values.
            if (classes_.size() > 65536) {
                varies_ = true;
                class_of_ = {};
                classes_ = {};
            }
        }
    }
    const std::vector<weight_delay>& classes() const { return classes_; }
    bool varies() const { return varies_; }
    bool by_model() const { return false; }  // listed synapses are static
    const std::vector<model::resolved_synapse_model>& models() const {
        static const std::vector<model::resolved_synapse_model> none;
        return none;
    }
    const std::vector<std::size_t>& plastic_elements() const {
        static const std::vector<std::size_t> none;
        return none;
    }
    const std::vector<std::vector<model::member_extent>>& plastic_sources() const {
        static const std::vector<std::vector<model::member_extent>> none;
        return none;
    }
    std::pair<std::uint64_t, std::uint64_t> shape(std::size_t k) const {
        if (spec_.in_begin.empty()) return {0, 0};
        const auto first = spec_.in_begin[k], last = spec_.in_begin[k + 1];
        std::uint64_t runs = 0;
        for (auto s = first; s < last && !varies_; ++s) runs += s == first || class_of_[s] != class_of_[s - 1];
        return {last - first, runs};
    }
    template <class F>
    void fill(std::size_t k, F&& f) const {
        if (spec_.in_begin.empty()) return;
        for (auto s = spec_.in_begin[k]; s < spec_.in_begin[k + 1]; ++s)
            f(spec_.in[s].source, varies_ ? 0 : class_of_[s], spec_.in[s].weight, spec_.in[s].delay);
    }

private:
    const engine_spec& spec_;
    std::vector<std::uint32_t> class_of_;  // per synapse
    std::vector<weight_delay> classes_;
    bool varies_ = false;
};

// The own weights of a store built from a share without them (synapse_store::build's
// keep_own_weights), drawn again from the rows' streams when asked for: a store of one
// class whose synapses all keep their own weight and delay, row k the row of neurons[k].
// Holds the rows it draws from; the share (which a list projection's weights stay in) and
// `neurons` must outlive it.
class redrawn_weights {
public:
    redrawn_weights(model::synapse_rows rows, const std::vector<neuron_spec>& neurons);
    const model::synapse_rows& rows() const { return rows_; }
    // f(element, synapses) for each connection element that gives neuron k's row synapses,
    // in canonical order: the counts drawn once, for the store's build and the redraw.
    template <class F>
    void each_part(std::size_t k, F&& f) const {
        for (auto p = row_part_[k]; p < row_part_[k + 1]; ++p) f(std::size_t{parts_[p].element}, parts_[p + 1].first - parts_[p].first);
    }

    // Reads synapses' weights in ascending synapse order, skipping any: each row's stream
    // passes over the weights not read (without drawing them where each takes a fixed number
    // of draws, as the microcircuit's do: model::synapse_rows::row_weights::skip), and a
    // stream none of whose weights is read is not drawn at all.
    class reader {
    public:
        explicit reader(const redrawn_weights& from) : from_(from) {}
        // Synapse s's weight; s above the last one read.
        float weight(std::uint64_t s);

    private:
        const redrawn_weights& from_;
        std::size_t part_ = 0;
        std::uint64_t next_ = 0;  // the synapse stream_ gives next
        std::optional<model::synapse_rows::row_weights> stream_;
    };

    // Every synapse's weight, into weights[s] (half weights: their 16 bits); rows in parallel.
    void write(float* weights) const;
    void write(std::uint16_t* weights) const;

private:
    // A row's synapses from one connection element, from synapse `first` on; a last part
    // marks the end.
    struct part {
        std::uint64_t first;
        std::uint32_t row, element;
    };
    model::synapse_rows::row_weights stream(const part& p) const;
    template <class T, class Convert>
    void write(T* weights, Convert&& convert) const;

    model::synapse_rows rows_;
    const std::vector<neuron_spec>& neurons_;
    std::vector<part> parts_;
    std::vector<std::size_t> row_part_;  // row k's parts are [row_part_[k], row_part_[k + 1])
};

// The rows of a node's neurons drawn from its share of the network: a class per distinct
// (weight, delay) of the connection elements, or per synapse model when one is plastic.
// Without `own_weights`, fill() gives 0 for a drawn weight unless classes are synapse
// models: for a store that keeps neither (synapse_store::build's keep_own_weights). Given
// `counted`, the rows' sizes are its counts rather than counted again.
class share_rows {
public:
    share_rows(const model::synapse_rows& rows, const std::vector<neuron_spec>& neurons, bool own_weights = true,
               const redrawn_weights* counted = nullptr)
        : rows_(rows), neurons_(neurons), counted_(counted), by_model_(rows.synapse_models().size() > 1),
          own_weights_(own_weights || by_model_) {
        std::map<std::pair<std::uint32_t, std::uint16_t>, std::uint32_t> index;
        class_of_.assign(rows.element_count(), 0);
        if (by_model_) models_ = {rows.synapse_models().front()};
        for (std::size_t e = 0; e < rows.element_count(); ++e) {
            if (rows.is_dense(e)) continue;
            if (by_model_) {
                // A class per plastic element, so that its synapses' runs name their projection.
                varies_ = true;
                if (rows.synapse_model(e) == 0) continue;
                class_of_[e] = static_cast<std::uint32_t>(models_.size());
                models_.push_back(rows.synapse_models()[rows.synapse_model(e)]);
                elements_.push_back(e);
                sources_.push_back(rows.sources(e));
                continue;
            }
            const auto u = rows.uniform(e);
            if (!u) {
                varies_ = true;
                continue;
            }
            std::uint32_t bits;
            std::memcpy(&bits, &u->weight, sizeof bits);
            const auto [it, fresh] = index.emplace(std::pair{bits, u->delay}, static_cast<std::uint32_t>(classes_.size()));
            if (fresh) classes_.push_back({u->weight, u->delay});
            class_of_[e] = it->second;
        }
    }
    const std::vector<weight_delay>& classes() const { return classes_; }
    bool varies() const { return varies_; }
    bool by_model() const { return by_model_; }
    // by_model(): each class's synapse model (static_synapse first), and the connection
    // element of each class after the first.
    const std::vector<model::resolved_synapse_model>& models() const { return models_; }
    const std::vector<std::size_t>& plastic_elements() const { return elements_; }
    // Their source neurons: the extents of each one's source group.
    const std::vector<std::vector<model::member_extent>>& plastic_sources() const { return sources_; }
    std::pair<std::uint64_t, std::uint64_t> shape(std::size_t k) const {
        std::uint64_t synapses = 0, runs = 0;
        std::uint32_t last = ~std::uint32_t{0};
        auto add = [&](std::size_t e, std::uint64_t n) {
            synapses += n;
            runs += class_of_[e] != last;
            last = class_of_[e];
        };
        if (counted_)
            counted_->each_part(k, add);
        else
            rows_.for_each_element(target(k), add);
        return {synapses, runs};
    }
    template <class F>
    void fill(std::size_t k, F&& f) const {
        auto give = [&](model::neuron_index source, float weight, std::uint16_t delay, std::size_t e) {
            f(static_cast<global_index>(source), class_of_[e], weight, delay);
        };
        if (own_weights_)
            rows_.for_each(target(k), give);
        else
            rows_.for_each<false>(target(k), give);
    }

private:
    model::neuron_index target(std::size_t k) const { return static_cast<model::neuron_index>(neurons_[k].index); }
    const model::synapse_rows& rows_;
    const std::vector<neuron_spec>& neurons_;
    const redrawn_weights* counted_;
    bool by_model_, own_weights_;
    std::vector<model::resolved_synapse_model> models_;
    std::vector<std::size_t> elements_;
    std::vector<std::vector<model::member_extent>> sources_;
    std::vector<std::uint32_t> class_of_;  // per connection element
    std::vector<weight_delay> classes_;
    bool varies_ = false;
};

// The rows of `neurons` drawn from `share` into `store` (sources found in `slots`): a node's
// engine, or its new weights and delays (engine::set_synapses); `half_weights` as
// synapse_store::build. protocol_error for a neuron outside the share or a share with dense
// projections. Given `redraw`, a store of one class whose synapses keep their own weights is
// built without them, and `redraw` is set to draw them again.
void build_from_share(synapse_store& store, const model::network& share, const std::vector<neuron_spec>& neurons,
                      const slot_layout& slots, const std::string& node, bool half_weights,
                      std::optional<redrawn_weights>* redraw = nullptr);

}  // namespace dnnc::sim
