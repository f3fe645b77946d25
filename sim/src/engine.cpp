#include "dnnc/sim/engine.hpp"

#include "models.hpp"

#include "dnnc/sim/torch_backend.hpp"

#include "dnnc/protocol/check.hpp"
#include "dnnc/protocol/snapshot.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <unordered_map>

namespace dnnc::sim {

namespace {
constexpr std::size_t grain = 512;

// Appends the positions of the non-zero values among values[0, n) (-0 counts as zero),
// skipping blocks of sixteen +0 at once: most neurons are silent in most ticks. Stops once
// more than `limit` are found; returns false then.
__attribute__((target_clones("avx512f", "avx2", "default")))
bool find_nonzero(const float* __restrict values, std::size_t n, std::size_t limit, std::vector<std::uint32_t>& positions) {
    std::size_t i = 0;
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

// Layout. Every neuron the engine reads (its own and the remote sources) has a slot; local
// neuron k has slot k. The output history is a ring of R = max delay + 1 rows of B floats
// per slot (one per lane, slot * B + lane): row (t mod R) holds tick t. Row zero_row_ is all
// zeros and stands for ticks < 0. A remote part of a row is cleared when the row is
// recycled, so values that never arrive (window mode, send="nonzero") read as 0. Per-neuron
// arrays (states, external input, sums) have B entries per local neuron in the same way.
struct engine::impl {
    engine_spec spec;
    std::size_t local = 0, slots = 0, ring = 2;
    std::size_t batch = 1, width = 0;  // lanes; floats per history row (slots * batch)
    std::vector<std::uint32_t> in_slot;
    std::vector<float> in_weight;
    std::vector<std::uint16_t> in_delay;
    bool uniform_delay = true;
    // For sparse activity: each slot's outgoing synapses, fan_out[out_begin[slot] ...
    // out_begin[slot + 1]), ascending by synapse index, with what a tick reads of each; and
    // the distinct delays.
    enum feeds : std::uint8_t { feeds_u, feeds_excitatory, feeds_inhibitory };
    std::vector<std::uint64_t> out_begin;
    struct outgoing {  // 16 bytes: one synapse as the sparse path reads it
        std::uint32_t synapse;
        std::uint32_t target;
        float weight;
        std::uint16_t delay;
        feeds sum;
        // Whether the sum it feeds gets its terms in canonical order as the sparse path
        // makes them (sources by delay, then slot): then they need no sorting.
        bool in_order;
    };
    std::vector<outgoing> fan_out;
    std::vector<std::uint16_t> delays;
    tick_t remote_delay = 1;
    struct sparse_term {
        std::uint32_t synapse;  // the canonical order
        std::uint32_t sum;      // the sum it adds to: target * 3 + feeds
        float value;
    };
    std::vector<sparse_term> contributions, colliding;
    std::vector<std::uint32_t> touched;  // the in-order sums this tick added to
    // Terms this tick per sum that is not in order, counted up to 2; all 0 between ticks.
    std::vector<std::uint8_t> terms_per_sum;
    std::vector<std::pair<std::size_t, std::uint32_t>> active;  // (delay position, slot)
    std::vector<std::uint32_t> nonzero;                          // slots, while scanning
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

    // A neuron's dense sum joins after its synapses; for lif by the sign of the sum.
    void add_dense(std::size_t i, float& u, float& excitatory, float& inhibitory) const {
        if (dense.empty()) return;
        const float d = dense_in[i];
        if (coefficients(i).model != protocol::neuron_model::lif)
            u += d;
        else if (d >= 0)
            excitatory += d;
        else
            inhibitory += d;
    }
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

    void clear_remote(tick_t t) {
        float* r = row(t);
        std::fill(r + local * batch, r + width, 0.0f);
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
        const float* last = row(t - 1);
        for (std::size_t i = begin; i < end; ++i) {
            const auto& c = coefficients(i);
            const auto s_begin = spec.in_begin[i], s_end = spec.in_begin[i + 1];
            // Summation in canonical order; all-delay-1 networks read one row.
            auto source = [&](std::uint64_t s) { return uniform_delay ? last[in_slot[s]] : row(t - in_delay[s])[in_slot[s]]; };
            if (c.model == protocol::neuron_model::lif) {
                float excitatory = 0, inhibitory = 0;
                for (auto s = s_begin; s < s_end; ++s) {
                    const float contribution = in_weight[s] * source(s);
                    if (in_weight[s] >= 0)
                        excitatory += contribution;
                    else
                        inhibitory += contribution;
                }
                float unused = 0;
                add_dense(i, unused, excitatory, inhibitory);
                out[i] = step_lif(c, state.v[i], state.ge[i], state.gi[i], state.refractory_left[i], c.bias + ext[i],
                                  excitatory, inhibitory);
            } else {
                float u = c.bias;
                u += ext[i];
                for (auto s = s_begin; s < s_end; ++s) u += in_weight[s] * source(s);
                float unused_e = 0, unused_i = 0;
                add_dense(i, u, unused_e, unused_i);
                out[i] = step_rate(c, u);
            }
        }
    }

    // Sparse activity: only synapses whose source value is non-zero contribute. Adding
    // the contributions of each target in ascending synapse index is its canonical order,
    // and leaving out exact zeros does not change a float sum, so both paths give the
    // same bits. Returns false (nothing done) when activity is too dense to pay off.
    bool compute_sparse(tick_t t, float* out) {
        // First count what the active sources would contribute, from the fan-outs alone.
        const std::size_t budget = in_slot.size() / 8;
        std::size_t expected = 0;
        active.clear();
        for (std::size_t k = 0; k < delays.size(); ++k) {
            const float* r = row(t - delays[k]);
            // More active sources than the budget has synapses, or than a quarter of all,
            // would exceed it as a rule (unless many have no synapses, which then only costs
            // the faster path).
            nonzero.clear();
            if (!find_nonzero(r, slots, std::min(budget, slots / 4), nonzero)) return false;
            for (const auto slot : nonzero) {
                expected += out_begin[slot + 1] - out_begin[slot];
                if (expected > budget) return false;
                active.emplace_back(k, static_cast<std::uint32_t>(slot));
            }
        }
        // Fan-outs lie far apart in memory: ask for all of them before reading the first.
        for (const auto& a : active) {
            const char* first = reinterpret_cast<const char*>(fan_out.data() + out_begin[a.second]);
            const char* last = reinterpret_cast<const char*>(fan_out.data() + out_begin[a.second + 1]);
            for (const char* p = first; p < last; p += 64) __builtin_prefetch(p);
        }
        // sum_e and sum_i are all zero here (see the end); rate neurons' sums start at u.
        for (const auto& r : runs) {
            const auto& c = coefficients(r.begin);
            if (c.model != protocol::neuron_model::lif)
                for (std::size_t i = r.begin; i < r.end; ++i) sum_u[i] = c.bias + ext[i];
        }
        // Terms of sums that are in order (as a rule: one projection feeds the sum, its
        // sources in index order) are added as they come; the others wait below.
        float* const sums[] = {sum_u.data(), sum_e.data(), sum_i.data()};
        touched.clear();
        contributions.clear();
        for (const auto& [k, slot] : active) {
            const auto d = delays[k];
            const float y = row(t - d)[slot];
            for (auto o = out_begin[slot]; o < out_begin[slot + 1]; ++o) {
                const auto& f = fan_out[o];
                if (f.delay != d) continue;
                const auto sum = f.target * 3 + f.sum;
                if (f.in_order) {
                    sums[f.sum][f.target] += f.weight * y;
                    touched.push_back(sum);
                } else {
                    contributions.push_back({f.synapse, sum, f.weight * y});
                    terms_per_sum[sum] += terms_per_sum[sum] < 2;
                }
            }
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
        // A model step costs a nanosecond or two: threads pay off only for very many neurons
        // (40,000 lif neurons ran slower on two threads than on one).
        if (local < 512 * grain)
            step_models(0, local, out);
        else
            tbb::parallel_for(tbb::blocked_range<std::size_t>(0, local, grain),
                              [&](const tbb::blocked_range<std::size_t>& r) { step_models(r.begin(), r.end(), out); });
        // Leave sum_e and sum_i all zero for the next tick: clearing what this tick added
        // costs far less than filling them.
        if (!dense.empty()) {
            std::fill(sum_e.begin(), sum_e.end(), 0.0f);
            std::fill(sum_i.begin(), sum_i.end(), 0.0f);
        } else {
            for (const auto sum : touched) sums[sum % 3][sum / 3] = 0.0f;
            for (const auto& c : contributions) sums[c.sum % 3][c.sum / 3] = 0.0f;
        }
        return true;
    }

    // Steps neurons [begin, end), every lane, from the sums in sum_u (rate models) or
    // sum_e and sum_i (lif): one loop per run of neurons that share their coefficients.
    void step_models(std::size_t begin, std::size_t end, float* out) {
        auto r = std::upper_bound(runs.begin(), runs.end(), begin, [](std::size_t i, const run& x) { return i < x.end; });
        for (; r != runs.end() && r->begin < end; ++r) {
            const std::size_t first = std::max(begin, r->begin) * batch, last = std::min(end, r->end) * batch;
            const auto& c = coefficients(std::max(begin, r->begin));
            if (c.model == protocol::neuron_model::lif)
                step_lif_run(c, first, last, state.v.data(), state.ge.data(), state.gi.data(), state.refractory_left.data(),
                             external_input ? ext.data() : nullptr, sum_e.data(), sum_i.data(), out);
            else
                for (std::size_t j = first; j < last; ++j) out[j] = step_rate(c, sum_u[j]);
        }
    }

    // Batched ticks: each lane's sums in canonical order, added exactly as compute_range
    // adds them for a single lane, so a lane gets the bits a run of its own would get.
    void compute_lanes_range(std::size_t begin, std::size_t end, tick_t t, float* out) {
        for (std::size_t i = begin; i < end; ++i) {
            const auto& c = coefficients(i);
            const bool lif = c.model == protocol::neuron_model::lif;
            float* const u = sum_u.data() + i * batch;
            float* const e = sum_e.data() + i * batch;
            float* const h = sum_i.data() + i * batch;
            if (lif) {
                std::fill(e, e + batch, 0.0f);
                std::fill(h, h + batch, 0.0f);
            } else {
                for (std::size_t lane = 0; lane < batch; ++lane) u[lane] = c.bias + ext[i * batch + lane];
            }
            for (auto s = spec.in_begin[i]; s < spec.in_begin[i + 1]; ++s) {
                const float w = in_weight[s];
                const float* const y = row(t - in_delay[s]) + std::size_t{in_slot[s]} * batch;
                float* const into = !lif ? u : w >= 0 ? e : h;
                for (std::size_t lane = 0; lane < batch; ++lane) into[lane] += w * y[lane];
            }
            for (std::size_t lane = 0; lane < batch && !dense.empty(); ++lane) {
                const float d = dense_in[i * batch + lane];
                (!lif ? u : d >= 0 ? e : h)[lane] += d;
            }
        }
        step_models(begin, end, out);
    }
};

engine::engine(const engine_spec& spec) : impl_(std::make_unique<impl>()) {
    auto& m = *impl_;
    // What spec() answers; the synapses and dense weights live on in the engine's own layout.
    m.spec.history = spec.history;
    m.spec.neurons = spec.neurons;
    m.spec.in_begin = spec.in_begin;  // where each neuron's synapses lie in the in_ arrays
    m.spec.peers = spec.peers;
    m.spec.device = spec.device;
    m.spec.batch = spec.batch;
    if (spec.batch < 1 || spec.batch > static_cast<std::uint32_t>(protocol::max_batch))
        throw usage_error("engine spec: batch must lie in 1.." + std::to_string(protocol::max_batch));
    m.batch = spec.batch;
    m.local = spec.neurons.size();
    if (spec.in_begin.size() != m.local + 1 || spec.in_begin.back() != spec.in.size())
        throw usage_error("engine spec: in_begin does not match the synapses");
    for (std::size_t k = 0; k < m.local; ++k)
        if (!m.slot_of.emplace(spec.neurons[k].index, static_cast<std::uint32_t>(k)).second)
            throw usage_error("engine spec: neuron " + std::to_string(spec.neurons[k].index) + " is listed twice");
    // A remote source gets the next slot when first seen. While building, slots are looked
    // up in a table by global index when the indices are few enough for one (a network's
    // neuron count, as a rule), else in slot_of.
    global_index top = 0;
    for (const auto& n : spec.neurons) top = std::max(top, n.index);
    for (const auto& in : spec.in) top = std::max(top, in.source);
    constexpr std::uint32_t unseen = ~std::uint32_t{0};
    const bool tabled = top >= 0 && static_cast<std::uint64_t>(top) < 4 * (spec.in.size() + m.local) + 4096;
    std::vector<std::uint32_t> slot_table(tabled ? static_cast<std::size_t>(top) + 1 : 0, unseen);
    for (std::size_t k = 0; k < m.local && tabled; ++k) slot_table[static_cast<std::size_t>(spec.neurons[k].index)] = static_cast<std::uint32_t>(k);
    auto slot_for = [&](global_index g) {
        if (tabled && g >= 0 && g <= top && slot_table[static_cast<std::size_t>(g)] != unseen)
            return slot_table[static_cast<std::size_t>(g)];
        const auto it = m.slot_of.find(g);
        if (it != m.slot_of.end()) return it->second;
        const auto slot = static_cast<std::uint32_t>(m.slot_of.size());
        m.slot_of.emplace(g, slot);
        if (tabled && g >= 0 && g <= top) slot_table[static_cast<std::size_t>(g)] = slot;
        return slot;
    };
    std::uint16_t max_delay = 1;
    m.in_slot.reserve(spec.in.size());
    m.in_weight.reserve(spec.in.size());
    m.in_delay.reserve(spec.in.size());
    for (const auto& s : spec.in) {
        if (s.delay < 1) throw usage_error("engine spec: delay must be at least 1");
        m.in_slot.push_back(slot_for(s.source));
        m.in_weight.push_back(s.weight);
        m.in_delay.push_back(s.delay);
        max_delay = std::max(max_delay, s.delay);
        m.uniform_delay = m.uniform_delay && s.delay == 1;
    }
    for (const auto& d : spec.dense) {
        if (d.weights.size() != d.sources.size() * d.targets.size())
            throw usage_error("engine spec: a dense block's weights do not match its shape");
        if (d.delay < 1) throw usage_error("engine spec: delay must be at least 1");
        max_delay = std::max(max_delay, d.delay);
        std::vector<std::uint32_t> sources, targets;
        for (auto g : d.sources) sources.push_back(slot_for(g));
        for (auto g : d.targets) targets.push_back(m.local_slot(g));
        m.dense.push_back({dense_matrix(d.weights.data(), d.targets.size(), d.sources.size(), spec.device), std::move(sources),
                           std::move(targets), d.delay, std::vector<float>(d.sources.size() * m.batch),
                           std::vector<float>(d.targets.size() * m.batch)});
    }
    for (const auto& p : spec.peers) {
        std::vector<std::uint32_t> sends, receives;
        for (auto g : p.sends) sends.push_back(m.local_slot(g));
        for (auto g : p.receives) receives.push_back(slot_for(g));
        m.send_slots.push_back(std::move(sends));
        m.receive_slots.push_back(std::move(receives));
    }
    m.slots = m.slot_of.size();
    m.width = m.slots * m.batch;
    m.ring = static_cast<std::size_t>(std::max(max_delay, spec.history)) + 1;
    m.out_begin.assign(m.slots + 1, 0);
    for (auto slot : m.in_slot) ++m.out_begin[slot + 1];
    for (std::size_t slot = 0; slot < m.slots; ++slot) m.out_begin[slot + 1] += m.out_begin[slot];
    const std::size_t synapses = m.in_slot.size();
    m.fan_out.resize(synapses);
    {
        // Synapses in index order, each written at its source's next outgoing position:
        // reads are sequential, and within a source the indices ascend.
        std::vector<std::uint64_t> cursor(m.out_begin.begin(), m.out_begin.end() - 1);
        for (std::size_t k = 0; k < m.local; ++k) {
            const bool lif = spec.neurons[k].params.model == protocol::neuron_model::lif;
            auto feeds_of = [&](std::uint64_t s) {
                return !lif ? impl::feeds_u : m.in_weight[s] >= 0 ? impl::feeds_excitatory : impl::feeds_inhibitory;
            };
            // A sum is in order when its synapses, in canonical order, come from
            // non-decreasing (delay, source slot).
            bool in_order[3] = {true, true, true};
            std::pair<std::uint16_t, std::uint32_t> latest[3] = {};
            for (auto s = spec.in_begin[k]; s < spec.in_begin[k + 1]; ++s) {
                const auto sum = feeds_of(s);
                const std::pair<std::uint16_t, std::uint32_t> key{m.in_delay[s], m.in_slot[s]};
                if (key < latest[sum]) in_order[sum] = false;
                latest[sum] = key;
            }
            for (auto s = spec.in_begin[k]; s < spec.in_begin[k + 1]; ++s) {
                const auto o = cursor[m.in_slot[s]]++;
                const auto sum = feeds_of(s);
                m.fan_out[o] = {static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(k), m.in_weight[s], m.in_delay[s], sum,
                                in_order[sum]};
            }
        }
    }
    m.remote_delay = static_cast<tick_t>(m.ring) - 1;
    for (std::size_t s = 0; s < synapses; ++s)
        if (m.in_slot[s] >= m.local) m.remote_delay = std::min<tick_t>(m.remote_delay, m.in_delay[s]);
    for (const auto& d : m.dense)
        if (std::any_of(d.source_slots.begin(), d.source_slots.end(), [&](std::uint32_t slot) { return slot >= m.local; }))
            m.remote_delay = std::min<tick_t>(m.remote_delay, d.delay);
    for (auto d : m.in_delay)
        if (std::find(m.delays.begin(), m.delays.end(), d) == m.delays.end()) m.delays.push_back(d);
    std::sort(m.delays.begin(), m.delays.end());
    const std::size_t values = m.local * m.batch;
    m.dense_in.assign(values, 0.0f);
    m.sum_u.assign(values, 0.0f);
    m.sum_e.assign(values, 0.0f);
    m.sum_i.assign(values, 0.0f);
    m.terms_per_sum.assign(3 * m.local, 0);
    m.history.assign((m.ring + 1) * m.width, 0.0f);
    m.ext.assign(values, 0.0f);
    m.state.resize(values);
    for (std::size_t k = 0; k < m.local; ++k) {
        const auto& params = spec.neurons[k].params;
        if (k == 0 || !(params == spec.neurons[k - 1].params)) {
            m.coefficient_table.push_back(coefficients_of(params));
            m.runs.push_back({k, k});
        }
        ++m.runs.back().end;
        m.coefficient_of.push_back(static_cast<std::uint32_t>(m.coefficient_table.size() - 1));
        const auto initial = initial_state(params, spec.neurons[k].seed, spec.neurons[k].index);
        for (std::size_t lane = 0; lane < m.batch; ++lane) m.state.set(k * m.batch + lane, initial);
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

void engine::deliver(std::size_t peer, tick_t t, const std::vector<float>& values) {
    auto& m = *impl_;
    m.check_delivery(peer, t, values.size());
    float* r = m.row(t);
    const auto& slots = m.receive_slots[peer];
    for (std::size_t k = 0; k < slots.size(); ++k) std::copy_n(values.data() + k * m.batch, m.batch, r + slots[k] * m.batch);
}

void engine::deliver_nonzero(std::size_t peer, tick_t t, const std::vector<std::pair<std::uint32_t, float>>& values) {
    auto& m = *impl_;
    if (peer >= m.receive_slots.size()) throw usage_error("no peer " + std::to_string(peer));
    const auto& slots = m.receive_slots[peer];
    m.check_delivery(peer, t, slots.size() * m.batch);
    float* r = m.row(t);
    for (const auto& [position, value] : values) {
        if (position >= slots.size() * m.batch)
            throw protocol_error("peer '" + m.spec.peers[peer].id + "' sent a value for position " +
                                 std::to_string(position) + " of " + std::to_string(slots.size() * m.batch));
        r[slots[position / m.batch] * m.batch + position % m.batch] = value;
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
    } else if (!m.compute_sparse(t, out)) {
        if (m.local < 2 * grain)
            m.compute_range(0, m.local, t, out);
        else
            tbb::parallel_for(tbb::blocked_range<std::size_t>(0, m.local, grain),
                              [&](const tbb::blocked_range<std::size_t>& r) { m.compute_range(r.begin(), r.end(), t, out); });
    }
    for (const auto& [position, value] : inputs) m.ext[position] = 0.0f;
    m.external_input = false;
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
    for (std::size_t k = 0; k < slots.size(); ++k)
        for (std::size_t lane = 0; lane < m.batch; ++lane) {
            const float y = r[slots[k] * m.batch + lane];
            if (y != 0.0f) values.push_back({static_cast<std::uint32_t>(k * m.batch + lane), y});
        }
}

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
    spec.history = protocol::longest_delay(net);
    for (const auto& d : net.dense)
        spec.dense.push_back({{d.sources.begin(), d.sources.end()}, {d.targets.begin(), d.targets.end()}, d.weights, d.delay});
    spec.neurons.reserve(net.neuron_count());
    for (protocol::neuron_index i = 0; i < net.neuron_count(); ++i) {
        const auto& g = net.groups[net.group_of[i]];
        spec.neurons.push_back({static_cast<global_index>(i), g.params, g.seed, 0.0});
    }
    spec.in_begin = net.in_begin;
    spec.in.reserve(net.synapse_count());
    for (std::size_t s = 0; s < net.synapse_count(); ++s)
        spec.in.push_back({static_cast<global_index>(net.in_source[s]), net.in_weight[s], net.in_delay[s]});
    return spec;
}

engine_spec from_node_config(const protocol::node_config& config) {
    engine_spec spec;
    spec.history = static_cast<std::uint16_t>(std::clamp<std::int64_t>(config.history, 1, 65535));
    spec.batch = static_cast<std::uint32_t>(std::clamp<std::int32_t>(config.run.batch, 1, protocol::max_batch));
    for (const auto& n : config.neurons) {
        spec.neurons.push_back({n.index, n.params, n.seed, n.window_ms});
    }
    // Incoming synapses: expanded here from the share of the network, in canonical order.
    spec.in_begin.push_back(0);
    if (config.share) {
        protocol::check_network(*config.share);
        std::vector<std::int64_t> local;
        for (const auto& n : spec.neurons) local.push_back(n.index);
        const auto share = protocol::expand_share(*config.share, local);
        for (const auto& n : spec.neurons) {
            const auto i = static_cast<std::size_t>(n.index);
            for (auto s = share.in_begin[i]; s < share.in_begin[i + 1]; ++s)
                spec.in.push_back({share.in_source[s], share.in_weight[s], share.in_delay[s]});
            spec.in_begin.push_back(spec.in.size());
        }
    } else {
        spec.in_begin.resize(spec.neurons.size() + 1, 0);
    }
    for (const auto& d : config.dense) {
        if (d.delay < 1 || d.delay > 65535) throw protocol_error("node config: dense delay out of range");
        spec.dense.push_back({d.sources, d.targets, d.weights, static_cast<std::uint16_t>(d.delay)});
    }
    for (const auto& p : config.peers) spec.peers.push_back({p.id, p.sends, p.receives});
    return spec;
}

}  // namespace dnnc::sim
