#include "dnnc/sim/engine.hpp"

#include "drive.hpp"
#include "models.hpp"

#include "dnnc/sim/torch_backend.hpp"

#include "dnnc/protocol/check.hpp"
#include "dnnc/protocol/rows.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <tuple>
#include <unordered_map>

namespace dnnc::sim {

namespace {
constexpr std::size_t grain = 512;

// Appends the positions of the non-zero values among values[first, n) (-0 counts as zero),
// skipping blocks of sixteen +0 at once: most neurons are silent in most ticks. Stops once
// more than `limit` are found; returns false then.
__attribute__((target_clones("avx512f", "avx2", "default")))
bool find_nonzero(const float* __restrict values, std::size_t first, std::size_t n, std::size_t limit,
                  std::vector<std::uint32_t>& positions) {
    std::size_t i = first;
    for (; i + 16 <= n; i += 16) {
        if (positions.size() > limit) return false;
        std::uint32_t bits[16];
        std::memcpy(bits, values + i, sizeof bits);
        std::uint32_t any = 0;
        for (auto b : bits) any |= b;
        if (any == 0) continue;
        for (std::size_t k = i; k < i + 16; ++k)
            if (values[k] != 0.0f) positions.push_back(static_cast<std::uint32_t>(k));
    }
    for (; i < n; ++i)
        if (values[i] != 0.0f) positions.push_back(static_cast<std::uint32_t>(i));
    return positions.size() <= limit;
}
}  // namespace

namespace {
constexpr std::uint32_t no_slot = ~std::uint32_t{0};

// A weight and a delay shared by synapses.
struct weight_delay {
    float weight;
    std::uint16_t delay;
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

// Rows as sources of synapses for the engine's build (see engine::impl::build_rows):
//   shape(k) -> {synapses, runs} of local neuron k's row (a run: consecutive synapses of one class);
//   fill(k, f) calls f(source, class, weight, delay) for each, in canonical order;
//   classes() the (weight, delay) of each class; varies() whether some synapse has none.

// The rows an engine_spec lists (spec.in), their classes found by value.
class listed_rows {
public:
    explicit listed_rows(const engine_spec& spec) : spec_(spec) {
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

// The rows of a node's neurons drawn from its share of the network: a class per distinct
// (weight, delay) of the connection elements.
class share_rows {
public:
    share_rows(const protocol::synapse_rows& rows, const std::vector<neuron_spec>& neurons) : rows_(rows), neurons_(neurons) {
        std::map<std::pair<std::uint32_t, std::uint16_t>, std::uint32_t> index;
        class_of_.assign(rows.element_count(), 0);
        for (std::size_t e = 0; e < rows.element_count(); ++e) {
            if (rows.is_dense(e)) continue;
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
    std::pair<std::uint64_t, std::uint64_t> shape(std::size_t k) const {
        std::uint64_t synapses = 0, runs = 0;
        std::uint32_t last = no_slot;
        rows_.for_each_element(target(k), [&](std::size_t e, std::uint64_t n) {
            synapses += n;
            runs += class_of_[e] != last;
            last = class_of_[e];
        });
        return {synapses, runs};
    }
    template <class F>
    void fill(std::size_t k, F&& f) const {
        rows_.for_each(target(k), [&](protocol::neuron_index source, float weight, std::uint16_t delay, std::size_t e) {
            f(static_cast<global_index>(source), class_of_[e], weight, delay);
        });
    }

private:
    protocol::neuron_index target(std::size_t k) const { return static_cast<protocol::neuron_index>(neurons_[k].index); }
    const protocol::synapse_rows& rows_;
    const std::vector<neuron_spec>& neurons_;
    std::vector<std::uint32_t> class_of_;  // per connection element
    std::vector<weight_delay> classes_;
    bool varies_ = false;
};
}  // namespace

// Layout. Every neuron the engine reads (its own and the remote sources) has a slot; local
// neuron k has slot k, the neurons peers send come next (in the peers' receives order), then
// any other source an engine_spec names. The output history is a ring of R = max delay + 1
// rows of B floats per slot (one per lane, slot * B + lane): row (t mod R) holds tick t. Row
// zero_row_ is all zeros and stands for ticks < 0. A remote part of a row is cleared when
// the row is recycled, so values that never arrive (window mode, send="nonzero") read as 0.
// Per-neuron arrays (states, external input, sums) have B entries per local neuron in the
// same way.
//
// Synapses (docs/simulation.md, "Memory layout"): row by row in canonical order, a source
// slot each (4 bytes). A row is cut into runs of consecutive synapses of one class; a class
// is a weight and a delay shared by its synapses (a projection's, or an explicit synapse's),
// or says that its synapses keep their own weight and delay in syn_weight / syn_delay (by
// synapse index), which exist only then. The sparse path reads each slot's outgoing
// synapses, grouped by class: 4 bytes each (the target), 8 for a class that varies.
struct engine::impl {
    engine_spec spec;
    std::size_t local = 0, slots = 0, ring = 2;
    std::size_t batch = 1, width = 0;  // lanes; floats per history row (slots * batch)

    std::vector<std::uint64_t> in_begin;  // local + 1: neuron k's synapses are [in_begin[k], in_begin[k + 1])
    std::vector<std::uint32_t> in_slot;   // per synapse
    struct synapse_run {
        std::uint32_t end;  // where the run ends, counted from its row's first synapse
        std::uint32_t cls;
    };
    std::vector<std::uint64_t> syn_run_begin;  // local + 1, into syn_runs
    std::vector<synapse_run> syn_runs;
    enum : std::uint8_t { weight_varies = 1, delay_varies = 2 };
    struct synapse_class {
        float weight;
        std::uint16_t delay;
        std::uint8_t varies;  // weight_varies | delay_varies: read them per synapse
    };
    std::vector<synapse_class> classes;
    std::vector<float> syn_weight;
    std::vector<std::uint16_t> syn_delay;
    float weight_of(const synapse_class& c, std::uint64_t s) const { return c.varies & weight_varies ? syn_weight[s] : c.weight; }
    std::uint16_t delay_of(const synapse_class& c, std::uint64_t s) const {
        return c.varies & delay_varies ? syn_delay[s] : c.delay;
    }

    // For sparse activity: each slot's outgoing synapses, fan_out[out_begin[slot] ...
    // out_begin[slot + 1]) in 4-byte words, in segments of one class, by ascending class;
    // and the distinct delays. A slot's block starts with its segments (one word: their
    // count n; then n triples of words: the class, where its one-word entries end and where
    // the segment ends, counted in words from the block's start), so one read of out_begin
    // finds everything. A segment holds first, in row order, its synapses into sums that are
    // in order, one word each (the target word below), then, in row order, the others, two
    // words each (synapse index, target word): the index is what sorts a sum's terms into
    // canonical order. A class that varies per synapse has only three-word entries (synapse
    // index, target word, the synapse's weight), so that the sparse path reads no per-synapse
    // array; when its delays vary they are sorted by delay, and the segment's `mid` word is
    // where its directory starts in delay_dir. Built only for one lane (batched ticks never
    // take the sparse path).
    //
    // A target word is target neuron << 3 | in_order << 2 | feeds. in_order: whether the sum
    // it feeds gets its terms in canonical order as the sparse path makes them (sources by
    // delay, then slot, then class, then row order): then they are added as they come.
    enum feeds : std::uint8_t { feeds_u, feeds_excitatory, feeds_inhibitory };
    std::vector<std::uint64_t> out_begin;
    std::vector<std::uint32_t> fan_out;
    // Per segment of a class whose delays vary, from the offset in its `mid` word: [n, (delay,
    // end) x n], the distinct delays of its entries, ascending, and where each one's entries
    // end (counted in words from the block's start).
    std::vector<std::uint32_t> delay_dir;
    // A range of fan-out words the sparse path reads this tick: words 1: one-word entries
    // [first, mid), then two-word ones to last, each adding value; words 3: three-word entries
    // whose weight times value they add.
    struct fan_read {
        std::uint64_t first, last, mid;
        float value;
        std::uint8_t words;
    };
    std::vector<fan_read> reads;
    static constexpr std::size_t max_sparse_neurons = std::size_t{1} << 29;
    std::vector<std::uint16_t> delays;
    tick_t remote_delay = 1;
    struct sparse_term {
        std::uint32_t synapse;  // the canonical order
        std::uint32_t sum;      // the sum it adds to: target * 3 + feeds
        float value;
    };
    std::vector<sparse_term> contributions, colliding;
    // Terms this tick per sum that is not in order, counted up to 2; all 0 between ticks.
    std::vector<std::uint8_t> terms_per_sum;
    std::vector<std::pair<std::size_t, std::uint32_t>> active;  // (delay position, slot)
    // The non-zero slots of a whole history row, found once per row rather than once per
    // delay that reads it: kept for rows that are complete when first read (delays of at
    // least remote_delay; in lockstep nothing arrives for them later). `dense`: more than
    // the sparse path's limit (it then gives way).
    struct row_sources {
        tick_t tick = -1;
        bool dense = false;
        bool complete = false;  // slots holds every non-zero slot (dense or not)
        std::vector<std::uint32_t> slots;
    };
    std::vector<row_sources> sources_of_row;  // per ring row
    // The same for the local part of a row, which is complete once its tick is computed:
    // for delays shorter than remote_delay (all of them on a node that reads no remote neuron).
    std::vector<row_sources> local_sources_of_row;  // per ring row
    // The sparse path's limit on active sources (more: the full path runs).
    std::size_t sparse_limit() const { return std::min(in_slot.size() / 8, slots / 4); }
    // The non-zero local slots of row `at` (a tick computed), found once per row.
    const row_sources& local_sources(tick_t at) {
        auto& cached = local_sources_of_row[static_cast<std::size_t>(at % static_cast<tick_t>(ring))];
        if (cached.tick != at) {
            cached.tick = at;
            cached.slots.clear();
            cached.dense = !find_nonzero(row(at), 0, local, sparse_limit(), cached.slots);
            cached.complete = !cached.dense;
        }
        return cached;
    }
    // Spike recording (engine::spiked): after each tick, from the local sources of its row
    // (local_sources_of_row), which list_spikes finds for the sparse path of the next ticks and
    // for outgoing_nonzero as well.
    std::vector<global_index> spiked;
    enum class spiking_neurons { none, some, all } spiking = spiking_neurons::none;  // among the local ones
    bool ascending = true;  // local neurons in ascending global index (slot order)
    // The order in which the sparse path visits the active sources of one delay: ascending
    // global index (rank[slot]). Local neurons take the first slots and remote ones the
    // rest, so on a node that reads remote neurons the slot order is not the index order,
    // and a sum fed in canonical order by sources on several nodes would not be in order.
    std::vector<std::uint32_t> rank;
    bool ranked_by_slot = true;  // rank[slot] == slot everywhere: nothing to sort
    std::vector<float> sum_u, sum_e, sum_i;
    // Dense projections: the matrix, where its inputs are read, and whose sums it feeds.
    struct dense_block {
        dense_matrix matrix;
        std::vector<std::uint32_t> source_slots, target_neurons;
        std::uint16_t delay;
        std::vector<float> x, y;
    };
    std::vector<dense_block> dense;
    std::vector<float> dense_in;  // this tick's dense sum per local neuron

    // One product per block for all lanes: X is sources x lanes, Y targets x lanes.
    void compute_dense(tick_t t) {
        if (dense.empty()) return;
        std::fill(dense_in.begin(), dense_in.end(), 0.0f);
        for (auto& b : dense) {
            const float* r = row(t - b.delay);
            for (std::size_t c = 0; c < b.source_slots.size(); ++c)
                std::copy_n(r + b.source_slots[c] * batch, batch, b.x.data() + c * batch);
            b.matrix.multiply(b.x.data(), b.y.data(), batch);
            for (std::size_t k = 0; k < b.target_neurons.size(); ++k)
                for (std::size_t lane = 0; lane < batch; ++lane)
                    dense_in[b.target_neurons[k] * batch + lane] += b.y[k * batch + lane];
        }
    }

    // A neuron's dense sum joins after its synapses; for a spiking model by the sign of the sum.
    void add_dense(std::size_t i, float& u, float& excitatory, float& inhibitory) const {
        if (dense.empty()) return;
        const float d = dense_in[i];
        if (!protocol::is_spiking(coefficients(i).model))
            u += d;
        else if (d >= 0)
            excitatory += d;
        else
            inhibitory += d;
    }
    // Poisson generators' input joins a neuron's sums after its synapses and dense sums, by
    // sign as the synapses' (for a rate model both into u, excitatory first).
    std::optional<drive> generated;
    void add_poisson(std::size_t i, float& u, float& excitatory, float& inhibitory) const {
        if (!generated->is_driven(i)) return;
        const float e = generated->excitatory()[i], h = generated->inhibitory()[i];
        if (protocol::is_spiking(coefficients(i).model)) {
            excitatory += e;
            inhibitory += h;
        } else {
            u += e;
            u += h;
        }
    }
    bool poisson_input() const { return generated && generated->has_poisson(); }
    bool poisson_consumed = false;  // this tick's steps left the drive's values zero

    std::vector<float> history;  // (ring + 1) * width; the last row is the zero row
    model_states state;
    // Runs of consecutive local neurons that share their coefficients (a population's members).
    struct run {
        std::size_t begin, end;
    };
    std::vector<run> runs;
    // Neurons of one population share their coefficients: a small table and an index per
    // neuron keep the per-tick memory traffic low.
    std::vector<model_coefficients> coefficient_table;
    std::vector<std::uint32_t> coefficient_of;
    const model_coefficients& coefficients(std::size_t neuron) const { return coefficient_table[coefficient_of[neuron]]; }
    std::unordered_map<global_index, std::uint32_t> slot_of;
    std::vector<std::vector<std::uint32_t>> send_slots, receive_slots;  // per peer
    // Per local slot, [send_of_begin[slot], send_of_begin[slot + 1]) in send_of: the peers it is
    // sent to and its position in each one's packet (send_slots inverted).
    struct sent_to {
        std::uint32_t peer, position;
    };
    std::vector<std::uint64_t> send_of_begin;
    std::vector<sent_to> send_of;
    std::map<tick_t, std::vector<std::pair<std::size_t, float>>> inputs;  // (slot * batch + lane, value)
    std::vector<float> ext;  // this tick's external input per local neuron; all 0 between ticks
    bool external_input = false;  // whether this tick has any
    tick_t next = 0;

    float* row(tick_t t) { return t < 0 ? zero_row() : history.data() + static_cast<std::size_t>(t % static_cast<tick_t>(ring)) * width; }
    const float* row(tick_t t) const {
        return t < 0 ? history.data() + ring * width
                     : history.data() + static_cast<std::size_t>(t % static_cast<tick_t>(ring)) * width;
    }
    float* zero_row() { return history.data() + ring * width; }

    std::uint32_t local_slot(global_index neuron) const {
        const auto it = slot_of.find(neuron);
        if (it == slot_of.end() || it->second >= local) throw usage_error("neuron " + std::to_string(neuron) + " is not on this node");
        return it->second;
    }

    // Per ring row, what peers wrote into its remote part: the slots of the non-zero values
    // that deliver_nonzero wrote (one lane), unless `all` (a dense delivery, a restore, more
    // lanes): then any remote slot may hold a value.
    struct remote_part {
        std::vector<std::uint32_t> written;
        bool all = false;
    };
    std::vector<remote_part> remote_parts;
    remote_part& remote_of(tick_t t) { return remote_parts[static_cast<std::size_t>(t % static_cast<tick_t>(ring))]; }

    void clear_remote(tick_t t) {
        float* r = row(t);
        auto& part = remote_of(t);
        if (part.all)
            std::fill(r + local * batch, r + width, 0.0f);
        else
            for (const auto slot : part.written) r[slot] = 0.0f;
        part.written.clear();
        part.all = false;
    }

    void check_delivery(std::size_t peer, tick_t t, std::size_t count) const {
        if (peer >= receive_slots.size()) throw usage_error("no peer " + std::to_string(peer));
        if (count != receive_slots[peer].size() * batch)
            throw protocol_error("peer '" + spec.peers[peer].id + "' sent " + std::to_string(count) + " values for tick " +
                                 std::to_string(t) + ", expected " + std::to_string(receive_slots[peer].size() * batch));
        // Rows older than next - (ring - 1) are recycled; tick `next` is the newest row kept.
        if (t > next || t < next - static_cast<tick_t>(ring) + 1)
            throw usage_error("tick " + std::to_string(t) + " cannot be delivered while the engine is at tick " +
                              std::to_string(next));
    }

    void compute_range(std::size_t begin, std::size_t end, tick_t t, float* out) {
        const bool poisson = poisson_input();
        for (std::size_t i = begin; i < end; ++i) {
            const auto& c = coefficients(i);
            const bool split = protocol::is_spiking(c.model);
            // Summation in canonical order, run by run: a run's synapses feed one sum (for
            // a spiking model by the sign of their weight) and read one row of the history.
            float u = c.bias;
            u += ext[i];
            float excitatory = 0, inhibitory = 0;
            const auto first = in_begin[i];
            auto s = first;
            for (auto r = syn_run_begin[i]; r < syn_run_begin[i + 1]; ++r) {
                const auto& k = classes[syn_runs[r].cls];
                const auto e = first + syn_runs[r].end;
                if (k.varies) {
                    for (; s < e; ++s) {
                        const float w = weight_of(k, s);
                        const float contribution = w * row(t - delay_of(k, s))[in_slot[s]];
                        if (!split)
                            u += contribution;
                        else if (w >= 0)
                            excitatory += contribution;
                        else
                            inhibitory += contribution;
                    }
                    continue;
                }
                const float w = k.weight;
                const float* const y = row(t - k.delay);
                float& into = !split ? u : w >= 0 ? excitatory : inhibitory;
                float sum = into;
                for (; s < e; ++s) sum += w * y[in_slot[s]];
                into = sum;
            }
            // Each adds to u (rate models) or to the excitatory and inhibitory sums (spiking).
            add_dense(i, u, excitatory, inhibitory);
            if (poisson) add_poisson(i, u, excitatory, inhibitory);
            out[i] = split ? step_spiking(c, state.v[i], state.ge[i], state.gi[i], state.refractory_left[i], c.bias + ext[i],
                                          excitatory, inhibitory)
                           : step_rate(c, u);
        }
    }

    // Sparse activity: only synapses whose source value is non-zero contribute. Adding
    // the contributions of each target in ascending synapse index is its canonical order,
    // and leaving out exact zeros does not change a float sum, so both paths give the
    // same bits. Returns false (nothing done) when activity is too dense to pay off.
    bool compute_sparse(tick_t t, float* out) {
        // The fan-out words this tick reads (one per synapse into a sum in order, two per
        // other, three per synapse with its own weight) may be an eighth of all. The blocks of
        // the active sources bound them from above; what is read of a block whose synapses
        // keep their own delays is known once the ranges are found below, so their sum may
        // reach all words (no more: finding the ranges stays cheap next to the full path).
        const std::size_t budget_words = fan_out.size() / 8;
        std::size_t expected = 0;
        active.clear();
        // More non-zero sources in a row than an eighth of the synapses, or than a quarter
        // of all slots, would exceed it as a rule (unless many have no synapses, which then
        // only costs the faster path).
        const std::size_t limit = sparse_limit();
        for (std::size_t k = 0; k < delays.size(); ++k) {
            const tick_t at = t - delays[k];
            if (at < 0) continue;  // the zero row
            const float* r = row(at);
            const std::vector<std::uint32_t>* sources = nullptr;
            if (delays[k] >= remote_delay) {
                auto& cached = sources_of_row[static_cast<std::size_t>(at % static_cast<tick_t>(ring))];
                if (cached.tick != at) {
                    // The local part as found before, then the peers' part: the slots they
                    // wrote non-zero values to, unless anything may have been written.
                    const auto& own = local_sources(at);
                    const auto& part = remote_of(at);
                    cached.tick = at;
                    cached.slots = own.slots;
                    if (own.dense) {
                        cached.dense = true;
                    } else if (part.all) {
                        cached.dense = !find_nonzero(r, local, slots, limit, cached.slots);
                    } else {
                        const auto first = cached.slots.size();
                        for (const auto slot : part.written)
                            if (r[slot] != 0.0f) cached.slots.push_back(slot);
                        std::sort(cached.slots.begin() + static_cast<std::ptrdiff_t>(first), cached.slots.end());
                        cached.slots.erase(std::unique(cached.slots.begin() + static_cast<std::ptrdiff_t>(first), cached.slots.end()),
                                           cached.slots.end());
                        cached.dense = cached.slots.size() > limit;
                    }
                }
                if (cached.dense) return false;
                sources = &cached.slots;
            } else {
                // No remote neuron is read with this delay: the local part of the row is all.
                const auto& own = local_sources(at);
                if (own.dense) return false;
                sources = &own.slots;
            }
            const auto first = active.size();
            for (const auto slot : *sources) {
                expected += out_begin[slot + 1] - out_begin[slot];
                if (expected > fan_out.size()) return false;
                active.emplace_back(k, static_cast<std::uint32_t>(slot));
            }
            if (!ranked_by_slot)
                std::sort(active.begin() + static_cast<std::ptrdiff_t>(first), active.end(),
                          [&](const auto& a, const auto& b) { return rank[a.second] < rank[b.second]; });
        }
        // The ranges of the fan-outs this tick reads: per active source and delay, in each of
        // its segments of a class with that delay, all entries; in a segment whose synapses
        // keep their own delays, the range of that delay (sort_by_delay, found in delay_dir).
        const std::uint32_t* const fan = fan_out.data();
        const synapse_class* const kinds = classes.data();
        reads.clear();
        for (const auto& [k, slot] : active) {
            const auto base = out_begin[slot];
            if (base == out_begin[slot + 1]) continue;
            const auto d = delays[k];
            const float y = row(t - d)[slot];
            const std::uint32_t* const block = fan + base;
            const std::uint32_t segments_end = 1 + 3 * block[0];
            std::uint32_t o = segments_end;
            for (std::uint32_t g = 1; g < segments_end; g += 3) {
                const auto& c = kinds[block[g]];
                const std::uint32_t mid = block[g + 1], e = block[g + 2];
                if (c.varies & delay_varies) {
                    // [n, (delay, end) x n], delays ascending; a delay's entries end at its end.
                    const std::uint32_t* const dir = delay_dir.data() + mid;
                    std::uint32_t lo = 0, n = dir[0];
                    while (n > 0) {
                        const std::uint32_t half = n / 2;
                        if (dir[1 + 2 * (lo + half)] < d) {
                            lo += half + 1;
                            n -= half + 1;
                        } else {
                            n = half;
                        }
                    }
                    if (lo < dir[0] && dir[1 + 2 * lo] == d)
                        reads.push_back({base + (lo == 0 ? o : dir[2 * lo]), base + dir[2 + 2 * lo], 0, y, 3});
                } else if (c.delay == d) {
                    if (c.varies)
                        reads.push_back({base + o, base + e, 0, y, 3});
                    else
                        reads.push_back({base + o, base + e, base + mid, c.weight * y, 1});
                }
                o = e;
            }
        }
        std::size_t reading = 0;
        for (const auto& r : reads) reading += r.last - r.first;
        if (reading > budget_words) return false;
        // Fan-outs lie far apart in memory: ask for all of them before reading the first.
        for (const auto& r : reads)
            for (const char* p = reinterpret_cast<const char*>(fan + r.first); p < reinterpret_cast<const char*>(fan + r.last); p += 64)
                __builtin_prefetch(p);
        // sum_e and sum_i are all zero here (the steps leave them so); rate neurons' sums start at u.
        for (const auto& r : runs) {
            const auto& c = coefficients(r.begin);
            if (!protocol::is_spiking(c.model))
                for (std::size_t i = r.begin; i < r.end; ++i) sum_u[i] = c.bias + ext[i];
        }
        // Terms of sums that are in order (as a rule: one projection feeds the sum, its
        // sources in index order) are added as they come; the others wait below.
        float* const sums[] = {sum_u.data(), sum_e.data(), sum_i.data()};
        contributions.clear();
        auto add_in_order = [&](std::uint32_t to, float value) { sums[to & 3][to >> 3] += value; };
        auto add_term = [&](std::uint32_t synapse, std::uint32_t to, float value) {
            if (to & 4) return add_in_order(to, value);
            const auto sum = (to >> 3) * 3 + (to & 3);
            contributions.push_back({synapse, sum, value});
            terms_per_sum[sum] += terms_per_sum[sum] < 2;
        };
        for (const auto& r : reads) {
            if (r.words == 3) {
                // (synapse, target word, weight): the synapse's own weight.
                for (auto p = r.first; p < r.last; p += 3) {
                    float w;
                    std::memcpy(&w, fan + p + 2, sizeof w);
                    add_term(fan[p], fan[p + 1], w * r.value);
                }
                continue;
            }
            auto p = r.first;
            for (; p < r.mid; ++p) add_in_order(fan[p], r.value);
            for (; p < r.last; p += 2) add_term(fan[p], fan[p + 1], r.value);
        }
        // Of the others, a sum with one term takes it at once; the terms of a sum with
        // several are sorted by synapse first: their canonical order.
        auto add = [&](const sparse_term& c) { sums[c.sum % 3][c.sum / 3] += c.value; };
        colliding.clear();
        for (const auto& c : contributions)
            if (terms_per_sum[c.sum] == 1)
                add(c);
            else
                colliding.push_back(c);
        std::sort(colliding.begin(), colliding.end(), [](const sparse_term& a, const sparse_term& b) { return a.synapse < b.synapse; });
        for (const auto& c : colliding) add(c);
        for (const auto& c : contributions) terms_per_sum[c.sum] = 0;
        for (std::size_t i = 0; i < local && !dense.empty(); ++i) add_dense(i, sum_u[i], sum_e[i], sum_i[i]);
        // Poisson input: rate neurons take it into u here; spiking ones as their step reads
        // their sums (step_spiking_run), which also leaves the drive's values and sum_e and
        // sum_i zero (rate neurons never feed those) for the next tick.
        const bool poisson = poisson_input();
        if (poisson)
            for (const auto& r : runs)
                if (!protocol::is_spiking(coefficients(r.begin).model))
                    for (std::size_t i = r.begin; i < r.end; ++i)
                        if (generated->is_driven(i)) {
                            add_poisson(i, sum_u[i], sum_e[i], sum_i[i]);
                            generated->excitatory()[i] = generated->inhibitory()[i] = 0.0f;
                        }
        // A model step costs a nanosecond or two: threads pay off only for very many neurons
        // (40,000 lif neurons ran slower on two threads than on one).
        if (local < 512 * grain)
            step_models(0, local, out, poisson);
        else
            tbb::parallel_for(tbb::blocked_range<std::size_t>(0, local, grain),
                              [&](const tbb::blocked_range<std::size_t>& r) { step_models(r.begin(), r.end(), out, poisson); });
        poisson_consumed = poisson;
        return true;
    }

    // The spikes of tick t, whose outputs are `out` (engine::spiked).
    // With one lane it also keeps the local non-zero slots of tick t for the sparse path and
    // outgoing_nonzero (all of them when listing spikes, else up to the sparse path's limit).
    void list_spikes(tick_t t, const float* out) {
        spiked.clear();
        auto take = [&](std::size_t k) {
            if (spiking == spiking_neurons::all || protocol::emits_spikes(coefficients(k).model))
                spiked.push_back(spec.neurons[k].index);
        };
        if (batch == 1) {
            auto& own = local_sources_of_row[static_cast<std::size_t>(t % static_cast<tick_t>(ring))];
            own.tick = t;
            own.slots.clear();
            if (spiking != spiking_neurons::none) {
                find_nonzero(out, 0, local, local, own.slots);
                own.complete = true;
                own.dense = own.slots.size() > sparse_limit();
                for (const auto k : own.slots) take(k);
            } else if (sparse) {
                own.dense = !find_nonzero(out, 0, local, sparse_limit(), own.slots);
                own.complete = !own.dense;
            } else {
                own.tick = -1;  // not looked for
            }
        } else if (spiking != spiking_neurons::none) {
            for (std::size_t k = 0; k < local; ++k)
                if (out[k * batch] != 0.0f) take(k);
        }
        if (!ascending) std::sort(spiked.begin(), spiked.end());
    }

    // Steps neurons [begin, end), every lane, from the sums in sum_u (rate models) or
    // sum_e and sum_i (spiking models): one loop per run of neurons that share their coefficients.
    // With `poisson` (one lane), spiking neurons add the drive's values to their sums.
    // Leaves sum_e and sum_i zero.
    void step_models(std::size_t begin, std::size_t end, float* out, bool poisson = false) {
        auto r = std::upper_bound(runs.begin(), runs.end(), begin, [](std::size_t i, const run& x) { return i < x.end; });
        float* const poisson_e = poisson ? generated->excitatory().data() : nullptr;
        float* const poisson_i = poisson ? generated->inhibitory().data() : nullptr;
        for (; r != runs.end() && r->begin < end; ++r) {
            const std::size_t first = std::max(begin, r->begin) * batch, last = std::min(end, r->end) * batch;
            const auto& c = coefficients(std::max(begin, r->begin));
            if (protocol::is_spiking(c.model))
                step_spiking_run(c, first, last, state.v.data(), state.ge.data(), state.gi.data(), state.refractory_left.data(),
                                 external_input ? ext.data() : nullptr, sum_e.data(), sum_i.data(), poisson_e, poisson_i, out);
            else
                for (std::size_t j = first; j < last; ++j) out[j] = step_rate(c, sum_u[j]);
        }
    }

    // Batched ticks: each lane's sums in canonical order, added exactly as compute_range
    // adds them for a single lane, so a lane gets the bits a run of its own would get.
    void compute_lanes_range(std::size_t begin, std::size_t end, tick_t t, float* out) {
        for (std::size_t i = begin; i < end; ++i) {
            const auto& c = coefficients(i);
            const bool split = protocol::is_spiking(c.model);
            float* const u = sum_u.data() + i * batch;
            float* const e = sum_e.data() + i * batch;
            float* const h = sum_i.data() + i * batch;
            if (split) {
                std::fill(e, e + batch, 0.0f);
                std::fill(h, h + batch, 0.0f);
            } else {
                for (std::size_t lane = 0; lane < batch; ++lane) u[lane] = c.bias + ext[i * batch + lane];
            }
            const auto first = in_begin[i];
            auto s = first;
            for (auto r = syn_run_begin[i]; r < syn_run_begin[i + 1]; ++r) {
                const auto& k = classes[syn_runs[r].cls];
                const auto stop = first + syn_runs[r].end;
                if (k.varies) {
                    for (; s < stop; ++s) {
                        const float w = weight_of(k, s);
                        const float* const y = row(t - delay_of(k, s)) + std::size_t{in_slot[s]} * batch;
                        float* const into = !split ? u : w >= 0 ? e : h;
                        for (std::size_t lane = 0; lane < batch; ++lane) into[lane] += w * y[lane];
                    }
                    continue;
                }
                const float w = k.weight;
                const float* const rows = row(t - k.delay);
                float* const into = !split ? u : w >= 0 ? e : h;
                for (; s < stop; ++s) {
                    const float* const y = rows + std::size_t{in_slot[s]} * batch;
                    for (std::size_t lane = 0; lane < batch; ++lane) into[lane] += w * y[lane];
                }
            }
            for (std::size_t lane = 0; lane < batch && !dense.empty(); ++lane) {
                const float d = dense_in[i * batch + lane];
                (!split ? u : d >= 0 ? e : h)[lane] += d;
            }
            for (std::size_t lane = 0; lane < batch && poisson_input(); ++lane) add_poisson(i, u[lane], e[lane], h[lane]);
        }
        step_models(begin, end, out);
    }
    // ---- Building -------------------------------------------------------------------
    std::uint64_t planned_synapses = 0;  // once the rows are counted
    std::vector<std::uint8_t> in_order_bits;  // while building: per local neuron, bit f: sum f is in order
    std::uint16_t synapse_max_delay = 1;
    std::uint32_t synapse_remote_delay = 65536;  // the shortest delay of a remote source; 65536: none
    bool sparse = false;                          // whether the sparse path may run

    // The copy of the spec that spec() answers, the local neurons' slots.
    void start(const engine_spec& s) {
        spec.node = s.node;
        spec.dt = s.dt;
        spec.history = s.history;
        spec.neurons = s.neurons;
        spec.peers = s.peers;
        spec.generators = s.generators;
        spec.device = s.device;
        spec.batch = s.batch;
        spec.list_spikes = s.list_spikes;
        if (s.batch < 1 || s.batch > static_cast<std::uint32_t>(protocol::max_batch))
            throw usage_error("engine spec: batch must lie in 1.." + std::to_string(protocol::max_batch));
        batch = s.batch;
        local = s.neurons.size();
        for (std::size_t k = 0; k < local; ++k)
            if (!slot_of.emplace(s.neurons[k].index, static_cast<std::uint32_t>(k)).second)
                throw usage_error("engine spec: neuron " + std::to_string(s.neurons[k].index) + " is listed twice");
        // The neurons peers send get their slots up front, so rows can be filled in parallel.
        for (const auto& p : s.peers)
            for (auto g : p.receives) slot_for(g);
    }

    // A neuron's slot; a neuron not seen before gets the next one.
    std::uint32_t slot_for(global_index g) {
        const auto [it, fresh] = slot_of.emplace(g, static_cast<std::uint32_t>(slot_of.size()));
        return it->second;
    }

    // The rows, in three steps: every row's size (in parallel), the offsets, then every row
    // written in place (in parallel). A source without a slot is neither local nor sent by a
    // peer: the rows and the peers disagree.
    template <class Rows>
    void build_rows(const Rows& rows) {
        const std::size_t n = local;
        in_begin.assign(n + 1, 0);
        syn_run_begin.assign(n + 1, 0);
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 64), [&](const tbb::blocked_range<std::size_t>& r) {
            for (auto k = r.begin(); k < r.end(); ++k) {
                const auto [synapses, row_runs] = rows.shape(k);
                in_begin[k + 1] = synapses;
                syn_run_begin[k + 1] = row_runs;
            }
        });
        std::uint64_t total = 0, total_runs = 0;
        for (std::size_t k = 0; k < n; ++k) {
            if (in_begin[k + 1] > std::numeric_limits<std::uint32_t>::max())
                throw usage_error("neuron " + std::to_string(spec.neurons[k].index) + " has more than 2^32 incoming synapses");
            total += in_begin[k + 1];
            total_runs += syn_run_begin[k + 1];
        }
        planned_synapses = total;
        // Short runs would cost more than a weight and a delay per synapse.
        const bool varying = rows.varies() || total_runs > total / 4 + 1024;
        for (std::size_t k = 0; k < n; ++k) {
            if (varying) syn_run_begin[k + 1] = in_begin[k + 1] > 0 ? 1 : 0;
            in_begin[k + 1] += in_begin[k];
            syn_run_begin[k + 1] += syn_run_begin[k];
        }
        classes.clear();
        if (varying)
            classes.push_back({0.0f, 0, weight_varies | delay_varies});
        else
            for (const auto& c : rows.classes()) classes.push_back({c.weight, c.delay, 0});
        in_slot.resize(total);
        syn_runs.resize(syn_run_begin[n]);
        if (varying) {
            syn_weight.resize(total);
            syn_delay.resize(total);
        }
        in_order_bits.assign(n, 0);

        rank_slots();
        const slot_lookup lookup(slot_of, 4 * (total + n) + 4096);
        std::mutex failure_mutex;
        std::size_t failed_row = n;
        global_index failed_source = 0;
        std::atomic<std::uint32_t> remote{65536};
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 64), [&](const tbb::blocked_range<std::size_t>& r) {
            std::uint32_t remote_here = 65536;
            for (auto k = r.begin(); k < r.end(); ++k) {
                const bool split = protocol::is_spiking(spec.neurons[k].params.model);
                const auto first = in_begin[k], last = in_begin[k + 1];
                auto s = first;
                auto at = syn_run_begin[k];
                std::uint32_t current = no_slot;
                // A sum is in order when its synapses, in canonical order, come from
                // non-decreasing (delay, source rank, class): the order the sparse path adds them in.
                bool in_order[3] = {true, true, true};
                std::tuple<std::uint16_t, std::uint32_t, std::uint32_t> latest[3] = {};
                rows.fill(k, [&](global_index source, std::uint32_t cls, float weight, std::uint16_t delay) {
                    if (s == last) throw usage_error("engine: a row gave more synapses than it counted");
                    auto slot = lookup.find(source);
                    if (slot == no_slot) {
                        const std::lock_guard<std::mutex> lock(failure_mutex);
                        if (k < failed_row) {
                            failed_row = k;
                            failed_source = source;
                        }
                        slot = 0;
                    }
                    in_slot[s] = slot;
                    if (varying) {
                        syn_weight[s] = weight;
                        syn_delay[s] = delay;
                        cls = 0;
                    }
                    if (cls != current) {
                        syn_runs[at++] = {0, cls};
                        current = cls;
                    }
                    syn_runs[at - 1].end = static_cast<std::uint32_t>(s + 1 - first);
                    if (slot >= local) remote_here = std::min<std::uint32_t>(remote_here, delay);
                    const int sum = !split ? feeds_u : weight >= 0 ? feeds_excitatory : feeds_inhibitory;
                    const std::tuple<std::uint16_t, std::uint32_t, std::uint32_t> key{delay, rank[slot], cls};
                    if (key < latest[sum]) in_order[sum] = false;
                    latest[sum] = key;
                    ++s;
                });
                if (s != last || at != syn_run_begin[k + 1]) throw usage_error("engine: a row gave fewer synapses than it counted");
                in_order_bits[k] = static_cast<std::uint8_t>(in_order[0] | in_order[1] << 1 | in_order[2] << 2);
            }
            for (auto seen = remote.load(); remote_here < seen && !remote.compare_exchange_weak(seen, remote_here);) {
            }
        });
        if (failed_row < n)
            throw protocol_error("neuron " + std::to_string(failed_source) + " feeds neuron " +
                                 std::to_string(spec.neurons[failed_row].index) + (spec.node.empty() ? "" : " on node '" + spec.node + "'") +
                                 " but is neither on this node nor sent by a peer: the config is inconsistent");
        synapse_remote_delay = remote.load();
        // The distinct delays the synapses use.
        std::vector<bool> used(65536, false);
        if (varying)
            for (auto d : syn_delay) used[d] = true;
        else
            for (const auto& r : syn_runs) used[classes[r.cls].delay] = true;
        delays.clear();
        for (std::size_t d = 0; d < used.size(); ++d)
            if (used[d]) delays.push_back(static_cast<std::uint16_t>(d));
        if (!delays.empty() && delays.front() < 1) throw usage_error("engine spec: delay must be at least 1");
        synapse_max_delay = delays.empty() ? 1 : delays.back();
    }

    // Each slot's outgoing synapses for the sparse path: class by class, the runs of that
    // class in row order, first those into sums in order, then the others, so a slot's
    // synapses of one class are consecutive and each part ascends.
    void build_fan_out() {
        const std::uint64_t total = in_slot.size();
        sparse = local < max_sparse_neurons;
        if (!sparse) return;
        struct placed {
            std::uint64_t first, last;
            std::uint32_t target, to;  // the target word of the run's synapses
        };
        std::vector<std::uint64_t> class_begin(classes.size() + 1, 0);
        for (const auto& r : syn_runs) ++class_begin[r.cls + 1];
        for (std::size_t c = 0; c < classes.size(); ++c) class_begin[c + 1] += class_begin[c];
        std::vector<placed> by_class(syn_runs.size());
        {
            std::vector<std::uint64_t> cursor(class_begin.begin(), class_begin.end() - 1);
            for (std::size_t k = 0; k < local; ++k) {
                auto s = in_begin[k];
                const bool split = protocol::is_spiking(spec.neurons[k].params.model);
                for (auto r = syn_run_begin[k]; r < syn_run_begin[k + 1]; ++r) {
                    const auto end = in_begin[k] + syn_runs[r].end;
                    const auto& c = classes[syn_runs[r].cls];
                    // A class that varies sets each synapse's target word itself (below).
                    const std::uint32_t sum = !split ? feeds_u : c.weight >= 0 ? feeds_excitatory : feeds_inhibitory;
                    const std::uint32_t in_order = c.varies ? 0 : (in_order_bits[k] >> sum) & 1;
                    by_class[cursor[syn_runs[r].cls]++] = {s, end, static_cast<std::uint32_t>(k),
                                                           static_cast<std::uint32_t>(k) << 3 | in_order << 2 | sum};
                    s = end;
                }
            }
        }
        // f(class, placed run, synapse, words): class by class, the one-word entries first.
        auto each = [&](auto&& f) {
            for (std::uint32_t c = 0; c < classes.size(); ++c)
                for (std::uint32_t words = 1; words <= 3; ++words)
                    for (auto p = class_begin[c]; p < class_begin[c + 1]; ++p) {
                        const std::uint32_t w = classes[c].varies ? 3 : !(by_class[p].to & 4) ? 2 : 1;
                        if (w != words) continue;
                        for (auto s = by_class[p].first; s < by_class[p].last; ++s) f(c, by_class[p], s, words);
                    }
        };
        // Segments and words per slot first: a block holds a count, its segments, its synapses.
        out_begin.assign(slots + 1, 0);
        std::vector<std::uint32_t> latest(slots, no_slot), segments(slots, 0);
        bool indexed = false;
        each([&](std::uint32_t c, const placed&, std::uint64_t s, std::uint32_t words) {
            const auto slot = in_slot[s];
            if (latest[slot] != c) {
                latest[slot] = c;
                ++segments[slot];
            }
            out_begin[slot + 1] += words;
            indexed |= words >= 2;
        });
        // Block sizes, then offsets (out_begin[slot + 1] held the words of slot's synapses).
        std::uint64_t offset = 0;
        bool fits = !indexed || total <= std::numeric_limits<std::uint32_t>::max();
        for (std::size_t slot = 0; slot < slots; ++slot) {
            const auto words = out_begin[slot + 1];
            out_begin[slot] = offset;
            const auto block = words ? 1 + 3 * std::uint64_t{segments[slot]} + words : 0;
            fits &= block <= std::numeric_limits<std::uint32_t>::max();
            offset += block;
        }
        if (!fits) {
            sparse = false;
            out_begin = {};
            return;
        }
        out_begin[slots] = offset;
        std::vector<std::uint64_t> cursor(slots), segment_at(slots);
        fan_out.resize(offset);
        for (std::size_t slot = 0; slot < slots; ++slot) {
            if (out_begin[slot] == out_begin[slot + 1]) continue;
            fan_out[out_begin[slot]] = segments[slot];
            segment_at[slot] = out_begin[slot] + 1;
            cursor[slot] = out_begin[slot] + 1 + 3 * std::uint64_t{segments[slot]};
        }
        std::fill(latest.begin(), latest.end(), no_slot);
        each([&](std::uint32_t c, const placed& p, std::uint64_t s, std::uint32_t words) {
            const auto slot = in_slot[s];
            const auto at = cursor[slot] - out_begin[slot];
            if (latest[slot] != c) {
                latest[slot] = c;
                fan_out[segment_at[slot]] = c;
                fan_out[segment_at[slot] + 1] = static_cast<std::uint32_t>(at);
                segment_at[slot] += 3;
            }
            std::uint32_t to = p.to;
            if (classes[c].varies) {
                const bool split = protocol::is_spiking(spec.neurons[p.target].params.model);
                const std::uint32_t sum = !split ? feeds_u : weight_of(classes[c], s) >= 0 ? feeds_excitatory : feeds_inhibitory;
                to = p.target << 3 | ((in_order_bits[p.target] >> sum) & 1) << 2 | sum;
            }
            if (words >= 2) fan_out[cursor[slot]++] = static_cast<std::uint32_t>(s);
            fan_out[cursor[slot]++] = to;
            if (words == 3) {
                const float w = weight_of(classes[c], s);
                std::memcpy(&fan_out[cursor[slot]++], &w, sizeof w);
            }
            if (words == 1) fan_out[segment_at[slot] - 2] = static_cast<std::uint32_t>(cursor[slot] - out_begin[slot]);
            fan_out[segment_at[slot] - 1] = static_cast<std::uint32_t>(cursor[slot] - out_begin[slot]);
        });
    }

    // In a segment of a class whose synapses keep their own delay, orders the entries by
    // delay (stable: ascending synapse within one delay, the order the sparse path needs),
    // and lists the segment's delays with where each one's entries end (delay_dir), so that a
    // tick reads a source's synapses of one delay as one range, found by a binary search in
    // a few words, instead of filtering all of them once for each delay.
    void sort_by_delay() {
        // Each visits the delay-varying segments of slots [begin, end): f(block, g, o, e).
        auto segments_of = [&](std::size_t begin, std::size_t end, auto&& f) {
            for (std::size_t slot = begin; slot < end; ++slot) {
                if (out_begin[slot] == out_begin[slot + 1]) continue;
                std::uint32_t* const block = fan_out.data() + out_begin[slot];
                std::uint32_t o = 1 + 3 * block[0];
                for (std::uint32_t g = 1; g < 1 + 3 * block[0]; g += 3) {
                    const std::uint32_t e = block[g + 2];
                    if (classes[block[g]].varies & delay_varies) f(block, g, o, e);
                    o = e;
                }
            }
        };
        // Sort; each segment's `mid` word holds the count of its delays for now.
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, slots), [&](const tbb::blocked_range<std::size_t>& range) {
            std::vector<std::array<std::uint32_t, 3>> entries;
            segments_of(range.begin(), range.end(), [&](std::uint32_t* block, std::uint32_t g, std::uint32_t o, std::uint32_t e) {
                entries.clear();
                for (std::uint32_t w = o; w < e; w += 3) entries.push_back({block[w], block[w + 1], block[w + 2]});
                std::stable_sort(entries.begin(), entries.end(),
                                 [&](const auto& a, const auto& b) { return syn_delay[a[0]] < syn_delay[b[0]]; });
                std::uint32_t distinct = 0;
                for (std::size_t i = 0; i < entries.size(); ++i) {
                    std::copy(entries[i].begin(), entries[i].end(), block + o + 3 * i);
                    distinct += i == 0 || syn_delay[entries[i][0]] != syn_delay[entries[i - 1][0]];
                }
                block[g + 1] = distinct;
            });
        });
        // Directory offsets, slot by slot.
        std::uint64_t words = 0;
        segments_of(0, slots, [&](std::uint32_t* block, std::uint32_t g, std::uint32_t, std::uint32_t) {
            const std::uint64_t n = block[g + 1];
            block[g + 1] = static_cast<std::uint32_t>(std::min<std::uint64_t>(words, std::numeric_limits<std::uint32_t>::max()));
            words += 1 + 2 * n;
        });
        if (words > std::numeric_limits<std::uint32_t>::max()) {
            sparse = false;  // a directory beyond 32-bit offsets: the full path only
            out_begin = {};
            fan_out = {};
            return;
        }
        delay_dir.resize(words);
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, slots), [&](const tbb::blocked_range<std::size_t>& range) {
            segments_of(range.begin(), range.end(), [&](std::uint32_t* block, std::uint32_t g, std::uint32_t o, std::uint32_t e) {
                std::uint32_t* const dir = delay_dir.data() + block[g + 1];
                std::uint32_t n = 0;
                for (std::uint32_t w = o; w < e; w += 3) {
                    const std::uint16_t d = syn_delay[block[w]];
                    if (n == 0 || dir[1 + 2 * (n - 1)] != d) dir[1 + 2 * n++] = d;
                    dir[2 * n] = w + 3;
                }
                dir[0] = n;
            });
        });
    }

    // Every slot's rank: its place in ascending global index.
    void rank_slots() {
        std::vector<std::pair<global_index, std::uint32_t>> by_index(slot_of.begin(), slot_of.end());
        std::sort(by_index.begin(), by_index.end());
        rank.assign(by_index.size(), 0);
        for (std::size_t r = 0; r < by_index.size(); ++r) rank[by_index[r].second] = static_cast<std::uint32_t>(r);
        ranked_by_slot = true;
        for (std::size_t slot = 0; slot < rank.size() && ranked_by_slot; ++slot) ranked_by_slot = rank[slot] == slot;
    }

    // Dense blocks, peers, the history and the sparse path's fan-out; then the neurons' states.
    void finish(const engine_spec& s) {
        std::uint16_t max_delay = synapse_max_delay;
        for (const auto& d : s.dense) {
            if (d.weights.size() != d.sources.size() * d.targets.size())
                throw usage_error("engine spec: a dense block's weights do not match its shape");
            if (d.delay < 1) throw usage_error("engine spec: delay must be at least 1");
            max_delay = std::max(max_delay, d.delay);
            std::vector<std::uint32_t> sources, targets;
            for (auto g : d.sources) sources.push_back(slot_for(g));
            for (auto g : d.targets) targets.push_back(local_slot(g));
            if (!d.rows.empty() && d.rows.size() != d.targets.size())
                throw usage_error("engine spec: a dense block needs one row index per target");
            dense.push_back({dense_matrix(d.weights.data(), d.targets.size(), d.sources.size(), s.device, d.rows,
                                          d.projection_rows),
                             std::move(sources),
                             std::move(targets), d.delay, std::vector<float>(d.sources.size() * batch),
                             std::vector<float>(d.targets.size() * batch)});
        }
        for (const auto& p : s.peers) {
            std::vector<std::uint32_t> sends, receives;
            for (auto g : p.sends) sends.push_back(local_slot(g));
            for (auto g : p.receives) receives.push_back(slot_of.at(g));
            send_slots.push_back(std::move(sends));
            receive_slots.push_back(std::move(receives));
        }
        send_of_begin.assign(local + 1, 0);
        for (const auto& sends : send_slots)
            for (const auto slot : sends) ++send_of_begin[slot + 1];
        for (std::size_t k = 0; k < local; ++k) send_of_begin[k + 1] += send_of_begin[k];
        send_of.resize(send_of_begin[local]);
        {
            std::vector<std::uint64_t> cursor(send_of_begin.begin(), send_of_begin.end() - 1);
            for (std::size_t p = 0; p < send_slots.size(); ++p)
                for (std::size_t k = 0; k < send_slots[p].size(); ++k)
                    send_of[cursor[send_slots[p][k]]++] = {static_cast<std::uint32_t>(p), static_cast<std::uint32_t>(k)};
        }
        slots = slot_of.size();
        // Slots a dense block added after the rows were built feed no synapse: they rank last.
        for (auto slot = static_cast<std::uint32_t>(rank.size()); slot < slots; ++slot) rank.push_back(slot);
        width = slots * batch;
        ring = static_cast<std::size_t>(std::max(max_delay, s.history)) + 1;
        if (batch == 1) {
            build_fan_out();
            if (sparse) sort_by_delay();
        }
        sources_of_row.assign(ring, {});
        local_sources_of_row.assign(ring, {});
        remote_parts.assign(ring, {});
        in_order_bits = {};
        remote_delay = std::min<tick_t>(static_cast<tick_t>(ring) - 1, synapse_remote_delay);
        for (const auto& d : dense)
            if (std::any_of(d.source_slots.begin(), d.source_slots.end(), [&](std::uint32_t slot) { return slot >= local; }))
                remote_delay = std::min<tick_t>(remote_delay, d.delay);
        const std::size_t values = local * batch;
        dense_in.assign(values, 0.0f);
        sum_u.assign(values, 0.0f);
        sum_e.assign(values, 0.0f);
        sum_i.assign(values, 0.0f);
        terms_per_sum.assign(3 * local, 0);
        history.assign((ring + 1) * width, 0.0f);
        ext.assign(values, 0.0f);
        state.resize(values);
        generated.emplace(
            s.generators, [&](std::int64_t g) -> std::int64_t {
                const auto it = slot_of.find(g);
                return it != slot_of.end() && it->second < local ? std::int64_t{it->second} : -1;
            },
            local, s.dt);
        for (std::size_t k = 0; k < local; ++k) {
            const auto& params = s.neurons[k].params;
            if (k == 0 || !(params == s.neurons[k - 1].params)) {
                coefficient_table.push_back(coefficients_of(params, s.dt));
                runs.push_back({k, k});
            }
            ++runs.back().end;
            coefficient_of.push_back(static_cast<std::uint32_t>(coefficient_table.size() - 1));
            const auto initial = initial_state(params, s.neurons[k].seed, s.neurons[k].index);
            for (std::size_t lane = 0; lane < batch; ++lane) state.set(k * batch + lane, initial);
        }
        const auto spiking_count = std::count_if(s.neurons.begin(), s.neurons.end(),
                                                 [](const neuron_spec& n) { return protocol::emits_spikes(n.params.model); });
        spiking = spiking_count == 0 || !s.list_spikes                     ? spiking_neurons::none
                  : static_cast<std::size_t>(spiking_count) == local ? spiking_neurons::all
                                                                       : spiking_neurons::some;
        ascending = std::is_sorted(s.neurons.begin(), s.neurons.end(),
                                   [](const neuron_spec& a, const neuron_spec& b) { return a.index < b.index; });
    }
};

engine::engine(const engine_spec& spec) : impl_(std::make_unique<impl>()) {
    auto& m = *impl_;
    m.start(spec);
    const bool listed = !spec.in_begin.empty();
    bool matches = listed ? spec.in_begin.size() == m.local + 1 && spec.in_begin.front() == 0 && spec.in_begin.back() == spec.in.size()
                          : spec.in.empty();
    for (std::size_t k = 0; listed && matches && k < m.local; ++k) matches = spec.in_begin[k] <= spec.in_begin[k + 1];
    if (!matches) throw usage_error("engine spec: in_begin does not match the synapses");
    // Sources that are neither local nor sent by a peer read as 0: they get slots in the
    // order they are first named.
    for (const auto& s : spec.in) m.slot_for(s.source);
    m.build_rows(listed_rows(spec));
    m.finish(spec);
}

engine::engine(const engine_spec& spec, const protocol::network& share) : impl_(std::make_unique<impl>()) {
    auto& m = *impl_;
    m.start(spec);
    if (!spec.in.empty()) throw usage_error("engine spec: the synapses come from the share; `in` must be empty");
    try {
        for (const auto& n : spec.neurons)
            if (n.index < 0 || n.index > std::numeric_limits<protocol::neuron_index>::max())
                throw protocol_error("neuron " + std::to_string(n.index) + " lies outside any network");
        std::vector<protocol::neuron_index> targets;
        targets.reserve(spec.neurons.size());
        for (const auto& n : spec.neurons) targets.push_back(static_cast<protocol::neuron_index>(n.index));
        // Only this node's rows are drawn (fixed-outdegree rows come from every source's draws).
        const protocol::synapse_rows rows(share, std::move(targets));
        for (std::size_t e = 0; e < rows.element_count(); ++e)
            if (rows.is_dense(e))
                throw protocol_error(format_located(rows.where(e), "a node's share of a network carries no dense projections"));
        for (const auto& n : spec.neurons)
            if (n.index < 0 || static_cast<std::uint64_t>(n.index) >= rows.neuron_count())
                throw protocol_error("neuron " + std::to_string(n.index) + " lies outside the share's " +
                                     std::to_string(rows.neuron_count()) + " neurons");
        m.build_rows(share_rows(rows, spec.neurons));
        m.finish(spec);
    } catch (const std::bad_alloc&) {
        throw allocation_error(spec.node, m.planned_synapses);
    }
}

engine::~engine() = default;
engine::engine(engine&&) noexcept = default;
engine& engine::operator=(engine&&) noexcept = default;

std::size_t engine::neuron_count() const { return impl_->local; }
const engine_spec& engine::spec() const { return impl_->spec; }
tick_t engine::next_tick() const { return impl_->next; }
tick_t engine::remote_delay() const { return impl_->remote_delay; }
std::uint32_t engine::batch() const { return static_cast<std::uint32_t>(impl_->batch); }
std::uint64_t engine::synapse_count() const { return impl_->in_slot.size(); }

std::size_t engine::synapse_bytes() const {
    const auto& m = *impl_;
    auto bytes = [](const auto& v) { return v.size() * sizeof(v[0]); };
    return bytes(m.in_begin) + bytes(m.in_slot) + bytes(m.syn_run_begin) + bytes(m.syn_runs) + bytes(m.classes) +
           bytes(m.syn_weight) + bytes(m.syn_delay) + bytes(m.out_begin) + bytes(m.fan_out) + bytes(m.delay_dir);
}

std::vector<synapse_spec> engine::incoming(global_index neuron) const {
    const auto& m = *impl_;
    const auto k = m.local_slot(neuron);
    std::vector<global_index> global_of(m.slots);
    for (const auto& [g, slot] : m.slot_of) global_of[slot] = g;
    std::vector<synapse_spec> out;
    const auto first = m.in_begin[k];
    auto s = first;
    for (auto r = m.syn_run_begin[k]; r < m.syn_run_begin[k + 1]; ++r) {
        const auto& c = m.classes[m.syn_runs[r].cls];
        for (; s < first + m.syn_runs[r].end; ++s) out.push_back({global_of[m.in_slot[s]], m.weight_of(c, s), m.delay_of(c, s)});
    }
    return out;
}

void engine::add_input(global_index neuron, tick_t t, float value, std::int64_t lane) {
    auto& m = *impl_;
    if (t < m.next) throw usage_error("input for tick " + std::to_string(t) + " comes after that tick was computed");
    if (lane != all_lanes && (lane < 0 || static_cast<std::size_t>(lane) >= m.batch))
        throw usage_error("input lane " + std::to_string(lane) + " is out of range (batch " + std::to_string(m.batch) + ")");
    const std::size_t first = std::size_t{m.local_slot(neuron)} * m.batch;
    auto& list = m.inputs[t];
    if (lane != all_lanes)
        list.push_back({first + static_cast<std::size_t>(lane), value});
    else
        for (std::size_t l = 0; l < m.batch; ++l) list.push_back({first + l, value});
}

std::size_t engine::receive_count(std::size_t peer) const { return impl_->receive_slots.at(peer).size() * impl_->batch; }
std::size_t engine::send_count(std::size_t peer) const { return impl_->send_slots.at(peer).size() * impl_->batch; }

void engine::deliver(std::size_t peer, tick_t t, const std::vector<float>& values) {
    auto& m = *impl_;
    m.check_delivery(peer, t, values.size());
    float* r = m.row(t);
    const auto& slots = m.receive_slots[peer];
    for (std::size_t k = 0; k < slots.size(); ++k) std::copy_n(values.data() + k * m.batch, m.batch, r + slots[k] * m.batch);
    m.remote_of(t).all = true;
}

void engine::deliver_nonzero(std::size_t peer, tick_t t, const std::vector<std::pair<std::uint32_t, float>>& values) {
    auto& m = *impl_;
    if (peer >= m.receive_slots.size()) throw usage_error("no peer " + std::to_string(peer));
    const auto& slots = m.receive_slots[peer];
    m.check_delivery(peer, t, slots.size() * m.batch);
    float* r = m.row(t);
    auto& part = m.remote_of(t);
    part.all |= m.batch > 1;
    for (const auto& [position, value] : values) {
        if (position >= slots.size() * m.batch)
            throw protocol_error("peer '" + m.spec.peers[peer].id + "' sent a value for position " +
                                 std::to_string(position) + " of " + std::to_string(slots.size() * m.batch));
        r[slots[position / m.batch] * m.batch + position % m.batch] = value;
        if (!part.all && value != 0.0f) part.written.push_back(slots[position]);
    }
}

void engine::compute() {
    auto& m = *impl_;
    const tick_t t = m.next;
    std::vector<std::pair<std::size_t, float>> inputs;
    if (auto it = m.inputs.find(t); it != m.inputs.end()) {
        inputs = std::move(it->second);
        m.inputs.erase(it);
        for (const auto& [position, value] : inputs) m.ext[position] += value;
        m.external_input = true;
    }
    if (m.generated->add_external(t, m.ext, m.batch)) m.external_input = true;
    if (m.poisson_input()) m.generated->draw(t);
    float* out = m.row(t);
    m.compute_dense(t);
    if (m.batch > 1) {
        // Neurons in blocks of about `grain` values.
        const std::size_t neurons = std::max<std::size_t>(1, grain / m.batch);
        if (m.local * m.batch < 2 * grain)
            m.compute_lanes_range(0, m.local, t, out);
        else
            tbb::parallel_for(tbb::blocked_range<std::size_t>(0, m.local, neurons),
                              [&](const tbb::blocked_range<std::size_t>& r) { m.compute_lanes_range(r.begin(), r.end(), t, out); });
    } else if (!m.sparse || !m.compute_sparse(t, out)) {
        if (m.local < 2 * grain)
            m.compute_range(0, m.local, t, out);
        else
            tbb::parallel_for(tbb::blocked_range<std::size_t>(0, m.local, grain),
                              [&](const tbb::blocked_range<std::size_t>& r) { m.compute_range(r.begin(), r.end(), t, out); });
    }
    for (const auto& [position, value] : inputs) m.ext[position] = 0.0f;
    m.generated->clear_external(t, m.ext, m.batch);
    // The sparse path's steps leave the Poisson values zero (poisson_consumed).
    if (m.poisson_input() && !m.poisson_consumed) m.generated->clear_poisson();
    m.poisson_consumed = false;
    m.external_input = false;
    m.list_spikes(t, out);
    ++m.next;
    // The row tick `next` will use has held tick next - ring: clear what peers fill.
    m.clear_remote(m.next);
}

void engine::outgoing(std::size_t peer, std::vector<float>& values) const {
    const auto& m = *impl_;
    const float* r = m.row(m.next - 1);
    values.clear();
    for (auto slot : m.send_slots.at(peer)) values.insert(values.end(), r + slot * m.batch, r + (slot + 1) * m.batch);
}

void engine::outgoing_nonzero(std::size_t peer, std::vector<std::pair<std::uint32_t, float>>& values) const {
    const auto& m = *impl_;
    const float* r = m.row(m.next - 1);
    values.clear();
    const auto& slots = m.send_slots.at(peer);
    if (m.batch == 1 && m.next > 0) {
        // The tick's non-zero local slots are known (list_spikes): look up only those.
        const auto& own = m.local_sources_of_row[static_cast<std::size_t>((m.next - 1) % static_cast<tick_t>(m.ring))];
        if (own.tick == m.next - 1 && own.complete) {
            for (const auto slot : own.slots)
                for (auto e = m.send_of_begin[slot]; e < m.send_of_begin[slot + 1]; ++e)
                    if (m.send_of[e].peer == peer) values.push_back({m.send_of[e].position, r[slot]});
            std::sort(values.begin(), values.end());  // in position order, as below
            return;
        }
    }
    for (std::size_t k = 0; k < slots.size(); ++k)
        for (std::size_t lane = 0; lane < m.batch; ++lane) {
            const float y = r[slots[k] * m.batch + lane];
            if (y != 0.0f) values.push_back({static_cast<std::uint32_t>(k * m.batch + lane), y});
        }
}

const std::vector<global_index>& engine::spiked() const { return impl_->spiked; }

float engine::output(global_index neuron, std::uint32_t lane) const {
    const auto& m = *impl_;
    if (lane >= m.batch) throw usage_error("lane " + std::to_string(lane) + " is out of range (batch " + std::to_string(m.batch) + ")");
    return m.row(m.next - 1)[std::size_t{m.local_slot(neuron)} * m.batch + lane];
}

bool engine::is_local(global_index neuron) const {
    const auto it = impl_->slot_of.find(neuron);
    return it != impl_->slot_of.end() && it->second < impl_->local;
}

std::vector<neuron_state> engine::capture() const {
    const auto& m = *impl_;
    if (m.batch > 1) throw usage_error("snapshots of a batched run (batch > 1) are not supported");
    std::vector<neuron_state> states(m.local);
    for (std::size_t k = 0; k < m.local; ++k) {
        auto& s = states[k];
        s.index = m.spec.neurons[k].index;
        s.output = m.row(m.next - 1)[k];
        s.variables = variables_of(m.coefficients(k), m.state.get(k));
        for (tick_t d = 1; d < m.spec.history; ++d) s.history.push_back(m.row(m.next - 1 - d)[k]);
    }
    return states;
}

void engine::restore(const std::vector<neuron_state>& states, tick_t next) {
    auto& m = *impl_;
    if (m.batch > 1) throw usage_error("snapshots of a batched run (batch > 1) are not supported");
    if (next < 0) throw usage_error("cannot restore to a negative tick");
    std::vector<bool> seen(m.local, false);
    std::fill(m.history.begin(), m.history.end(), 0.0f);
    m.next = next;
    m.spiked.clear();
    for (auto& r : m.sources_of_row) r.tick = -1;
    for (auto& r : m.local_sources_of_row) r.tick = -1;
    for (auto& r : m.remote_parts) {
        r.written.clear();
        r.all = true;  // the restored rows' remote parts
    }
    for (const auto& s : states) {
        const auto it = m.slot_of.find(s.index);
        if (it == m.slot_of.end()) continue;
        const auto slot = it->second;
        if (slot < m.local) {
            seen[slot] = true;
            m.state.set(slot, state_from(m.coefficients(slot), s.variables));
        }
        m.row(next - 1)[slot] = s.output;
        for (std::size_t d = 0; d < s.history.size() && d + 2 < m.ring + 1; ++d)
            m.row(next - 2 - static_cast<tick_t>(d))[slot] = s.history[d];
    }
    for (std::size_t k = 0; k < m.local; ++k)
        if (!seen[k]) throw usage_error("restore: no state for neuron " + std::to_string(m.spec.neurons[k].index));
    m.inputs.erase(m.inputs.begin(), m.inputs.lower_bound(next));
}

engine_spec whole_network(const protocol::expanded_network& net) {
    engine_spec spec;
    spec.dt = net.dt;
    spec.history = protocol::longest_delay(net);
    for (const auto& d : net.dense)
        spec.dense.push_back({{d.sources.begin(), d.sources.end()}, {d.targets.begin(), d.targets.end()}, d.weights, d.delay, {}, 0});
    spec.neurons.reserve(net.neuron_count());
    for (protocol::neuron_index i = 0; i < net.neuron_count(); ++i) {
        const auto& g = net.groups[net.group_of[i]];
        spec.neurons.push_back({static_cast<global_index>(i), g.params, g.seed, 0.0});
    }
    spec.generators = net.drive;
    spec.in_begin = net.in_begin;
    spec.in.reserve(net.synapse_count());
    for (std::size_t s = 0; s < net.synapse_count(); ++s)
        spec.in.push_back({static_cast<global_index>(net.in_source[s]), net.in_weight[s], net.in_delay[s]});
    return spec;
}

engine_spec from_node_config(const protocol::node_config& config) {
    engine_spec spec;
    spec.node = config.node;
    if (config.share) {
        spec.dt = config.share->dt;
        spec.generators = protocol::resolve_generators(*config.share);
    }
    spec.history = static_cast<std::uint16_t>(std::clamp<std::int64_t>(config.history, 1, 65535));
    spec.batch = static_cast<std::uint32_t>(std::clamp<std::int32_t>(config.run.batch, 1, protocol::max_batch));
    for (const auto& n : config.neurons) spec.neurons.push_back({n.index, n.params, n.seed, n.window_ms});
    spec.in_begin.assign(spec.neurons.size() + 1, 0);  // every row empty: the engine builds them from the share
    for (const auto& d : config.dense) {
        if (d.delay < 1 || d.delay > 65535) throw protocol_error("node config: dense delay out of range");
        std::vector<std::uint32_t> rows;
        for (auto r : d.rows) {
            if (r < 0 || r >= d.projection_rows) throw protocol_error("node config: dense row out of range");
            rows.push_back(static_cast<std::uint32_t>(r));
        }
        if (!rows.empty() && rows.size() != d.targets.size())
            throw protocol_error("node config: dense rows and targets differ in number");
        if (d.projection_rows < 0 || d.projection_rows > std::numeric_limits<std::uint32_t>::max())
            throw protocol_error("node config: dense projection rows out of range");
        spec.dense.push_back({d.sources, d.targets, d.weights, static_cast<std::uint16_t>(d.delay), std::move(rows),
                              static_cast<std::uint32_t>(d.projection_rows)});
    }
    for (const auto& p : config.peers) spec.peers.push_back({p.id, p.sends, p.receives});
    spec.list_spikes = std::any_of(config.neurons.begin(), config.neurons.end(), [](const auto& n) { return n.record; });
    return spec;
}

engine make_node_engine(const protocol::node_config& config, const std::string& device) {
    auto spec = from_node_config(config);
    spec.device = device;
    if (!config.share) return engine(spec);
    protocol::check_network(*config.share);
    return engine(spec, *config.share);
}

namespace {
std::string allocation_message(const std::string& node, std::uint64_t synapses) {
    const std::string who = node.empty() ? "this node" : "node '" + node + "'";
    if (synapses == 0) return who + " cannot allocate memory to build the rows of its share";
    return who + " cannot allocate memory for the " + std::to_string(synapses) + " incoming synapses of its neurons";
}
}  // namespace

allocation_error::allocation_error(std::string node_id, std::uint64_t synapse_count)
    : error(allocation_message(node_id, synapse_count)), node(std::move(node_id)), synapses(synapse_count) {}

}  // namespace dnnc::sim
