#pragma once
// The synapse store (private to dnnc_sim): the only owner of a node's incoming synapses,
// their weights and delays (docs/simulation.md, "Memory layout").
//
// Row by row in canonical order, a source slot each (4 bytes). A row is cut into runs of
// consecutive synapses of one class; a class is a weight and a delay shared by its synapses
// (a projection's, or an explicit synapse's), or says that its synapses keep their own
// weight and delay (by synapse index), which are stored only then. A synapse's own delay
// shares its slot's word (delay << delay_shift_ | slot) where the node's slots leave room
// for it (at least delay_bits_at_least bits; 15 beside the full-scale microcircuit's 77,169
// slots); else it has two bytes of its own.
//
// A synapse's receptor: into a rate neuron, its one sum u; into a spiking neuron, the
// excitatory sum when its weight is >= 0, else the inhibitory one. A class's weight is its
// projection's, so its synapses share a receptor; a synapse with its own weight keeps the
// sign it was made with, so its receptor never changes either.
//
// With half weights (build's half_weights: <run weight-precision="half">) every weight, a
// class's and a synapse's own, is the nearest binary16 value of the one given (half_weight.hpp),
// and an own weight takes 2 bytes; no rule may change them.
#include "history.hpp"
#include "slots.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/core/half_weight.hpp"
#include "dnnc/core/uninitialized.hpp"
#include "dnnc/model/resolve.hpp"
#include "dnnc/model/synapse_models.hpp"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

namespace dnnc::sim {

class synapse_store {
public:
    enum : std::uint8_t { weight_varies = 1, delay_varies = 2, weight_changes = 4 };
    struct synapse_class {
        float weight;
        std::uint16_t delay;
        std::uint8_t varies;  // weight_varies | delay_varies: read them per synapse; weight_changes: a rule changes them
        std::uint8_t model;   // into models(): its synapse model (0: static_synapse)
    };
    struct synapse_run {
        std::uint32_t end;  // where the run ends, counted from its row's first synapse
        std::uint32_t cls;
    };
    static bool excitatory(float weight) { return weight >= 0; }

    // The rows of the `neurons.size()` local neurons from `rows` (row_sources.hpp), in three
    // steps: every row's size (in parallel), the offsets, then every row written in place (in
    // parallel). Sources are found in `slots`; one without a slot is neither local nor sent
    // by a peer: the rows and the peers disagree (protocol_error). `node` names this node in
    // messages. `half_weights`: weights in 16 bits (above; usage_error for one beyond them).
    // Not `keep_own_weights`: where all synapses are of one class that keeps own weights, the
    // store is built with them released (below), to be drawn again (row_sources.hpp).
    template <class Rows>
    void build(const Rows& rows, const std::vector<neuron_spec>& neurons, const slot_layout& slots, const std::string& node,
               bool half_weights, bool keep_own_weights = true);

    std::uint64_t size() const { return in_slot_.size(); }
    // How many synapses slot `slot` feeds, as build() counted them while writing the rows
    // (what the fan-out index needs of a store whose synapses are all of one class); 0 for a
    // slot added since. counted(): false where build() did not count (2^32 synapses or more).
    bool counted() const { return counted_; }
    std::uint32_t synapses_from(std::size_t slot) const { return slot < synapses_from_.size() ? synapses_from_[slot] : 0; }
    // The synapses build() set out to make, once it counted them (0 before).
    std::uint64_t planned() const { return planned_; }
    std::size_t bytes() const {
        auto of = [](const auto& v) { return v.size() * sizeof(v[0]); };
        return of(in_begin_) + of(in_slot_) + of(run_begin_) + of(runs_) + of(classes_) + of(weight_) + of(half_weight_) + of(delay_) +
               of(synapses_from_);
    }
    // The distinct delays the synapses use, ascending; the longest (1 without synapses); the
    // shortest delay of a synapse from a remote slot (65536: none).
    const std::vector<std::uint16_t>& delays() const { return delays_; }
    std::uint16_t max_delay() const { return delays_.empty() ? 1 : delays_.back(); }
    std::uint32_t remote_delay() const { return remote_delay_; }

    // Neuron k's synapses are [row_begin(k), row_begin(k + 1)), cut into runs
    // [run_begin(k), run_begin(k + 1)).
    std::uint64_t row_begin(std::size_t k) const { return in_begin_[k]; }
    std::uint64_t run_begin(std::size_t k) const { return run_begin_[k]; }
    const synapse_run& run(std::uint64_t r) const { return runs_[r]; }
    const std::vector<synapse_run>& runs() const { return runs_; }
    const std::vector<synapse_class>& classes() const { return classes_; }
    // The synapse models of the classes (empty: all static), and the connection element of
    // each class after the first (which holds the static synapses).
    const std::vector<model::resolved_synapse_model>& models() const { return models_; }
    std::size_t element_of(std::size_t cls) const { return elements_[cls - 1]; }
    // The source neurons of that element, its source group's extents: every neuron any
    // node's synapses of the class may read.
    const std::vector<model::member_extent>& sources_of(std::size_t cls) const { return sources_[cls - 1]; }
    std::uint32_t source(std::uint64_t s) const { return in_slot_[s] & slot_mask_; }
    // Not while own weights are released (below).
    float weight(const synapse_class& c, std::uint64_t s) const {
        return !(c.varies & weight_varies) ? c.weight : half_ ? half_weight::decode(half_weight_[s]) : weight_[s];
    }
    // The weight of synapse s of a class whose weights vary, which a rule may change (not
    // with half weights).
    float& own_weight(std::uint64_t s) { return weight_[s]; }
    float own_weight(std::uint64_t s) const { return weight_[s]; }
    // Own weights released: the store lets its copy go where the fan-out index holds every
    // one (fan_out_index::holds_weights), and takes it back, by `write(weights)` setting each
    // synapse's (a float*, or with half weights their 16 bits, a std::uint16_t*), before
    // anything reads weights row by row (engine.cpp). Nothing reads an own weight here in
    // between. A store built without them (build's keep_own_weights) starts released.
    bool weights_released() const { return released_; }
    void release_weights() {
        weight_ = decltype(weight_)();  // `= {}` would keep the capacity
        half_weight_ = decltype(half_weight_)();
        released_ = true;
    }
    template <class Write>
    void take_weights_back(Write&& write) {
        if (half_) {
            half_weight_.resize(size());
            write(half_weight_.data());
        } else {
            weight_.resize(size());
            write(weight_.data());
        }
        released_ = false;
    }
    // Whether weights are kept in 16 bits.
    bool half_weights() const { return half_; }
    std::uint16_t delay(const synapse_class& c, std::uint64_t s) const { return c.varies & delay_varies ? own_delay(s) : c.delay; }
    // The delay of synapse s of a class whose delays vary.
    std::uint16_t own_delay(std::uint64_t s) const {
        return packed() ? static_cast<std::uint16_t>(in_slot_[s] >> delay_shift_) : delay_[s];
    }
    // Whether own delays share their slots' words (above).
    bool packed() const { return delay_shift_ < 32; }
    // Packing needs at least this many bits for the delays: with fewer, a network's delays
    // would often not fit, and build() would draw its rows twice.
    static constexpr int delay_bits_at_least = 12;

    // Whether `other` holds the same synapses as this store, row by row in canonical order:
    // the same sources and synapse models, so that only weights, delays and the models'
    // parameters may differ (and synapse s is the same one in both).
    bool same_wiring(const synapse_store& other) const;
    // Whether each synapse (`plastic`: each plastic synapse) has the same delay in `other`
    // (which has the same wiring).
    bool same_delays(const synapse_store& other, bool plastic = false) const;
    // The own weights of `other`'s runs whose class c passes keep(c), copied into the same
    // synapses of this store (which has the same wiring).
    template <class Keep>
    void copy_weights(const synapse_store& other, Keep&& keep) {
        for (std::size_t k = 0; k + 1 < other.run_begin_.size(); ++k) {
            auto s = other.row_begin(k);
            for (auto r = other.run_begin(k); r < other.run_begin(k + 1); ++r) {
                const auto end = other.row_begin(k) + other.run(r).end;
                if (keep(other.run(r).cls))
                    for (; s < end; ++s) {
                        if (half_)
                            half_weight_[s] = other.half_weight_[s];
                        else
                            weight_[s] = other.weight_[s];
                    }
                s = end;
            }
        }
    }

    // f(source slot, weight, delay) for each synapse of neuron k, in canonical order.
    template <class F>
    void for_each(std::size_t k, F&& f) const {
        auto s = in_begin_[k];
        for (auto r = run_begin_[k]; r < run_begin_[k + 1]; ++r) {
            const auto& c = classes_[runs_[r].cls];
            for (; s < in_begin_[k] + runs_[r].end; ++s) f(source(s), weight(c, s), delay(c, s));
        }
    }

    // The summation: adds the terms w * y_source(t - delay) of neuron k's synapses, in
    // canonical order, to its sums (u, or by receptor excitatory e and inhibitory h; `split`:
    // k is spiking), `lanes` values each. Each run reads one row of the history and feeds one
    // sum. The sparse path (sparse_path.hpp) adds the same terms source by source instead.
    template <bool one_lane>
    void add_terms(std::size_t k, bool split, const history_ring& history, tick_t t, std::size_t lanes, float* u, float* e,
                   float* h) const {
        if constexpr (one_lane) lanes = 1;
        const auto first = in_begin_[k];
        auto s = first;
        for (auto r = run_begin_[k]; r < run_begin_[k + 1]; ++r) {
            const auto& c = classes_[runs_[r].cls];
            const auto stop = first + runs_[r].end;
            if (c.varies) {
                for (; s < stop; ++s) {
                    const float w = weight(c, s);
                    const float* const y = history.row(t - delay(c, s)) + std::size_t{source(s)} * lanes;
                    float* const into = !split ? u : excitatory(w) ? e : h;
                    for (std::size_t lane = 0; lane < lanes; ++lane) into[lane] += w * y[lane];
                }
                continue;
            }
            const float w = c.weight;
            const float* const y = history.row(t - c.delay);
            float* const into = !split ? u : excitatory(w) ? e : h;
            if constexpr (one_lane) {
                float sum = *into;  // kept in a register along the run
                for (; s < stop; ++s) sum += w * y[source(s)];
                *into = sum;
            } else {
                for (; s < stop; ++s) {
                    const float* const values = y + std::size_t{source(s)} * lanes;
                    for (std::size_t lane = 0; lane < lanes; ++lane) into[lane] += w * values[lane];
                }
            }
        }
    }

    // The summation while a delay update made at tick `changed` is in transition (`before`:
    // this store as it was, same_wiring): a spike emitted before `changed` arrives with the
    // delay it was sent with, one emitted from then on with the new one. So each synapse of
    // neuron k, in canonical order, adds w * y(t - d_before) if t - d_before < changed, then
    // w * y(t - d) if t - d >= changed, w its weight here; `lanes` values each, as add_terms.
    void add_terms_across(const synapse_store& before, tick_t changed, std::size_t k, bool split, const history_ring& history,
                          tick_t t, std::size_t lanes, float* u, float* e, float* h) const {
        auto add = [&](float w, tick_t emitted, std::uint32_t slot) {
            const float* const y = history.row(emitted) + std::size_t{slot} * lanes;
            float* const into = !split ? u : excitatory(w) ? e : h;
            for (std::size_t lane = 0; lane < lanes; ++lane) into[lane] += w * y[lane];
        };
        auto s = in_begin_[k];
        auto old_run = before.run_begin_[k];
        for (auto r = run_begin_[k]; r < run_begin_[k + 1]; ++r) {
            const auto& c = classes_[runs_[r].cls];
            for (; s < in_begin_[k] + runs_[r].end; ++s) {
                while (s >= in_begin_[k] + before.runs_[old_run].end) ++old_run;
                const float w = weight(c, s);
                const tick_t sent = t - before.delay(before.classes_[before.runs_[old_run].cls], s);
                if (sent < changed) add(w, sent, source(s));
                const tick_t now_sent = t - delay(c, s);
                if (now_sent >= changed) add(w, now_sent, source(s));
            }
        }
    }

private:
    std::uint64_t planned_ = 0;
    std::vector<std::uint64_t> in_begin_;  // local + 1: neuron k's synapses are [in_begin[k], in_begin[k + 1])
    uninitialized_vector<std::uint32_t> in_slot_;  // per synapse (build() writes every one); packed: with its delay
    int delay_shift_ = 32;                         // packed (< 32): where a word's delay starts
    std::uint32_t slot_mask_ = ~std::uint32_t{0};  // a word's slot bits
    std::vector<std::uint64_t> run_begin_;  // local + 1, into runs_
    std::vector<synapse_run> runs_;
    std::vector<synapse_class> classes_;
    std::vector<model::resolved_synapse_model> models_;
    std::vector<std::size_t> elements_;
    std::vector<std::vector<model::member_extent>> sources_;
    bool half_ = false;
    uninitialized_vector<float> weight_;         // per synapse, for a class whose weights vary, unless released_
    bool released_ = false;
    uninitialized_vector<std::uint16_t> half_weight_;  // instead, with half weights
    uninitialized_vector<std::uint16_t> delay_;  // per synapse, for a class whose delays vary, unless packed
    std::vector<std::uint16_t> delays_;
    std::uint32_t remote_delay_ = 65536;
    bool counted_ = false;
    std::vector<std::uint32_t> synapses_from_;  // per slot, when counted
};

inline bool synapse_store::same_wiring(const synapse_store& other) const {
    if (in_begin_ != other.in_begin_ || size() != other.size() || elements_ != other.elements_ || models_.size() != other.models_.size())
        return false;
    for (std::uint64_t s = 0; s < size(); ++s)
        if (source(s) != other.source(s)) return false;
    for (std::size_t m = 0; m < models_.size(); ++m)
        if (models_[m].info != other.models_[m].info || models_[m].id != other.models_[m].id) return false;
    // Per synapse its class's model, as each store's runs give them.
    auto row = [](const synapse_store& store, std::size_t k, std::vector<std::uint8_t>& out) {
        out.clear();
        auto s = store.in_begin_[k];
        for (auto r = store.run_begin_[k]; r < store.run_begin_[k + 1]; ++r)
            for (; s < store.in_begin_[k] + store.runs_[r].end; ++s) out.push_back(store.classes_[store.runs_[r].cls].model);
    };
    std::vector<std::uint8_t> mine, theirs;
    for (std::size_t k = 0; k + 1 < in_begin_.size(); ++k) {
        row(*this, k, mine);
        row(other, k, theirs);
        if (mine != theirs) return false;
    }
    return true;
}

inline bool synapse_store::same_delays(const synapse_store& other, bool plastic) const {
    auto row = [plastic](const synapse_store& store, std::size_t k, std::vector<std::uint16_t>& out) {
        out.clear();
        auto s = store.in_begin_[k];
        for (auto r = store.run_begin_[k]; r < store.run_begin_[k + 1]; ++r) {
            const auto& c = store.classes_[store.runs_[r].cls];
            for (; s < store.in_begin_[k] + store.runs_[r].end; ++s)
                if (!plastic || (c.varies & weight_changes)) out.push_back(store.delay(c, s));
        }
    };
    std::vector<std::uint16_t> mine, theirs;
    for (std::size_t k = 0; k + 1 < in_begin_.size(); ++k) {
        row(*this, k, mine);
        row(other, k, theirs);
        if (mine != theirs) return false;
    }
    return true;
}

template <class Rows>
void synapse_store::build(const Rows& rows, const std::vector<neuron_spec>& neurons, const slot_layout& slots,
                          const std::string& node, bool half_weights, bool keep_own_weights) {
    const std::size_t n = neurons.size();
    in_begin_.assign(n + 1, 0);
    run_begin_.assign(n + 1, 0);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 64), [&](const tbb::blocked_range<std::size_t>& r) {
        for (auto k = r.begin(); k < r.end(); ++k) {
            const auto [synapses, row_runs] = rows.shape(k);
            in_begin_[k + 1] = synapses;
            run_begin_[k + 1] = row_runs;
        }
    });
    std::uint64_t total = 0, total_runs = 0;
    for (std::size_t k = 0; k < n; ++k) {
        if (in_begin_[k + 1] > std::numeric_limits<std::uint32_t>::max())
            throw usage_error("neuron " + std::to_string(neurons[k].index) + " has more than 2^32 incoming synapses");
        total += in_begin_[k + 1];
        total_runs += run_begin_[k + 1];
    }
    planned_ = total;
    // Short runs would cost more than a weight and a delay per synapse. With synapse models
    // for classes, every synapse keeps its own weight and delay, and a run is a stretch of
    // one model's synapses; else one run per row holds them all.
    const bool by_model = rows.by_model();
    const bool varying = by_model || rows.varies() || total_runs > total / 4 + 1024;
    for (std::size_t k = 0; k < n; ++k) {
        if (varying && !by_model) run_begin_[k + 1] = in_begin_[k + 1] > 0 ? 1 : 0;
        in_begin_[k + 1] += in_begin_[k];
        run_begin_[k + 1] += run_begin_[k];
    }
    classes_.clear();
    models_.clear();
    half_ = half_weights;
    // A weight beyond 16 bits: the first one met, by row.
    std::mutex failure_mutex;
    std::size_t failed_row = n;
    float failed_weight = 0;
    auto beyond_half = [&](std::size_t k, float weight) {
        const std::lock_guard<std::mutex> lock(failure_mutex);
        if (k < failed_row) {
            failed_row = k;
            failed_weight = weight;
        }
    };
    auto throw_beyond_half = [&](float weight, const std::string& into) {
        throw usage_error("synapse weight " + std::to_string(weight) + into + (node.empty() ? "" : " on node '" + node + "'") +
                          " does not fit 16 bits: with weight-precision=\"half\" a weight's magnitude must stay below " +
                          std::to_string(static_cast<int>(half_weight::overflows_at)));
    };
    if (by_model) {
        models_ = rows.models();
        elements_ = rows.plastic_elements();
        sources_ = rows.plastic_sources();
        if (models_.size() > model::max_plastic_elements + 1)
            throw usage_error("engine: a node's synapses come from more than " + std::to_string(model::max_plastic_elements) +
                              " plastic connection elements");
        for (std::size_t m = 0; m < models_.size(); ++m) {
            if (half_ && models_[m].info->plastic) throw usage_error("engine spec: plastic synapses need 32-bit weights, not half weights");
            classes_.push_back({0.0f, 0, static_cast<std::uint8_t>(weight_varies | delay_varies | (models_[m].info->plastic ? weight_changes : 0)),
                                static_cast<std::uint8_t>(m)});
        }
    } else if (varying) {
        classes_.push_back({0.0f, 0, weight_varies | delay_varies, 0});
    } else {
        for (const auto& c : rows.classes()) {
            if (half_ && !half_weight::fits(c.weight)) throw_beyond_half(c.weight, "");
            classes_.push_back({half_ ? half_weight::rounded(c.weight) : c.weight, c.delay, 0, 0});
        }
    }
    in_slot_.resize(total);
    runs_.resize(run_begin_[n]);
    weight_ = {};
    half_weight_ = {};
    released_ = varying && !by_model && !keep_own_weights;
    if (varying && half_ && !released_)
        half_weight_.resize(total);
    else if (varying && !released_)
        weight_.resize(total);
    // Own delays packed beside the slots where the slots leave room (above).
    int slot_bits = 1;
    while (slot_bits < 32 && (std::uint64_t{1} << slot_bits) < slots.size()) ++slot_bits;
    auto pack = [&](bool packed) {
        delay_shift_ = packed ? slot_bits : 32;
        slot_mask_ = packed ? (std::uint32_t{1} << slot_bits) - 1 : ~std::uint32_t{0};
        delay_ = {};
        if (varying && !packed) delay_.resize(total);
    };
    pack(varying && 32 - slot_bits >= delay_bits_at_least);

    const slot_lookup lookup(slots.map(), 4 * (total + n) + 4096);
    const std::size_t local = slots.local();
    std::size_t missing_row = n;
    global_index missing_source = 0;
    std::atomic<std::uint32_t> remote{65536};
    // The delays the synapses use, a flag each, per thread (so the stores need no order).
    tbb::enumerable_thread_specific<std::vector<std::uint8_t>> delays_seen([] { return std::vector<std::uint8_t>(65536, 0); });
    // The synapses of each slot, per thread; in 32 bits, so only below 2^32 synapses.
    counted_ = total <= std::numeric_limits<std::uint32_t>::max();
    tbb::enumerable_thread_specific<std::vector<std::uint32_t>> counts([&] { return std::vector<std::uint32_t>(counted_ ? slots.size() : 0, 0); });
    // A delay beyond the packed bits: the rows are filled again, unpacked.
    std::atomic<bool> unpackable{false};
    auto fill = [&](const tbb::blocked_range<std::size_t>& r) {
        const bool packing = packed();
        const int shift = delay_shift_;
        const std::uint32_t delay_limit = packing ? std::uint32_t{1} << (32 - shift) : 65536;
        std::uint32_t remote_here = 65536;
        std::uint8_t* const delay_seen = delays_seen.local().data();
        std::uint32_t* const count = counted_ ? counts.local().data() : nullptr;
        // The arrays and settings in locals, so that the call per synapse reads them from
        // its closure rather than through this.
        std::uint32_t* const words = in_slot_.data();
        float* const weights = released_ ? nullptr : weight_.data();
        std::uint16_t* const halves = half_ && !released_ ? half_weight_.data() : nullptr;
        const bool half = half_;
        std::uint16_t* const own_delays = delay_.data();
        synapse_run* const runs = runs_.data();
        for (auto k = r.begin(); k < r.end(); ++k) {
            const auto first = in_begin_[k], last = in_begin_[k + 1];
            auto s = first;
            const auto runs_begin = run_begin_[k];
            auto at = runs_begin;
            std::uint32_t current = no_slot;
            rows.fill(k, [&, words, weights, halves, half, own_delays, runs, first, last, packing, shift, delay_limit, delay_seen, count,
                          varying, by_model, local](global_index source, std::uint32_t cls, float weight, std::uint16_t delay) {
                if (s == last) throw usage_error("engine: a row gave more synapses than it counted");
                auto slot = lookup.find(source);
                if (slot == no_slot) {
                    const std::lock_guard<std::mutex> lock(failure_mutex);
                    if (k < missing_row) {
                        missing_row = k;
                        missing_source = source;
                    }
                    slot = 0;
                }
                std::uint32_t word = slot;
                if (varying) {
                    if (half && !half_weight::fits(weight))
                        beyond_half(k, weight);
                    else if (halves)
                        halves[s] = half_weight::encode(weight);
                    else if (weights)
                        weights[s] = weight;
                    if (packing) {
                        if (delay >= delay_limit) unpackable.store(true, std::memory_order_relaxed);
                        word |= std::uint32_t{delay} << shift;
                    } else {
                        own_delays[s] = delay;
                    }
                    delay_seen[delay] = 1;
                    if (!by_model) cls = 0;
                }
                if (cls != current) {
                    // A run ends where the next begins (the row's last one after the row).
                    if (at > runs_begin) runs[at - 1].end = static_cast<std::uint32_t>(s - first);
                    runs[at++] = {0, cls};
                    current = cls;
                }
                if (slot >= local) remote_here = std::min<std::uint32_t>(remote_here, delay);
                if (count) ++count[slot];
                words[s] = word;
                ++s;
            });
            if (at > runs_begin) runs[at - 1].end = static_cast<std::uint32_t>(s - first);
            if (s != last || at != run_begin_[k + 1]) throw usage_error("engine: a row gave fewer synapses than it counted");
        }
        for (auto seen = remote.load(); remote_here < seen && !remote.compare_exchange_weak(seen, remote_here);) {
        }
    };
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 64), fill);
    if (unpackable) {
        pack(false);
        for (auto& c : counts) std::fill(c.begin(), c.end(), 0);
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 64), fill);
    }
    synapses_from_.assign(counted_ ? slots.size() : 0, 0);
    for (const auto& c : counts)
        for (std::size_t slot = 0; slot < c.size(); ++slot) synapses_from_[slot] += c[slot];
    if (missing_row < n)
        throw protocol_error("neuron " + std::to_string(missing_source) + " feeds neuron " +
                             std::to_string(neurons[missing_row].index) + (node.empty() ? "" : " on node '" + node + "'") +
                             " but is neither on this node nor sent by a peer: the config is inconsistent");
    if (failed_row < n) throw_beyond_half(failed_weight, " into neuron " + std::to_string(neurons[failed_row].index));
    remote_delay_ = remote.load();
    std::vector<bool> used(65536, false);
    if (varying)
        for (const auto& seen : delays_seen)
            for (std::size_t d = 0; d < seen.size(); ++d) used[d] = used[d] || seen[d] != 0;
    else
        for (const auto& r : runs_) used[classes_[r.cls].delay] = true;
    delays_.clear();
    for (std::size_t d = 0; d < used.size(); ++d)
        if (used[d]) delays_.push_back(static_cast<std::uint16_t>(d));
    if (!delays_.empty() && delays_.front() < 1) throw usage_error("engine spec: delay must be at least 1");
}

}  // namespace dnnc::sim
