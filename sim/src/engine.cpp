#include "dnnc/sim/engine.hpp"

#include "dense_input.hpp"
#include "drive.hpp"
#include "fan_out.hpp"
#include "history.hpp"
#include "neurons.hpp"
#include "peer_routes.hpp"
#include "plasticity.hpp"
#include "row_sources.hpp"
#include "slots.hpp"
#include "sparse_path.hpp"
#include "structural_plasticity.hpp"
#include "synapse_store.hpp"

#include "dnnc/model/rows.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <malloc.h>  // malloc_trim (glibc)

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <new>
#include <optional>

namespace dnnc::sim {

namespace {
constexpr std::size_t grain = 512;
// Neurons a thread steps at least where a busy sparse tick lends its threads to the model
// step (engine::compute).
constexpr std::size_t step_block = 4096;
}  // namespace

// A node's engine is made of parts with one job each: the slot layout (slots.hpp), the
// synapse store (the only owner of synapses and weights), the fan-out index derived from it
// for sparse activity, the output history, the neuron block, the dense projections, the
// generators and the routes to and from the peers. A tick runs as named phases:
//   inputs   external input and generators of tick t into ext;
//   synapse dynamics  plastic synapses take their events of synapse time t - delay
//            (plasticity.hpp), so that deliveries of tick t read the weights rules left;
//   sum      every local neuron's sums: its synapses' terms in canonical order (row by row
//            from the store, or source by source along the fan-out index when few sources
//            are active: the same bits; row by row across both delays while a delay update
//            is in transition), then its dense sum, then Poisson input;
//   update   the neuron block steps each neuron from its sums into row t of the history;
//   emit     the tick's spikes are listed and the clock advances.
struct engine::impl {
    engine_spec spec;  // without synapses or dense weights
    std::size_t batch = 1;
    slot_layout slots;
    neuron_block neurons;
    synapse_store store;
    std::optional<dense_input> dense;
    history_ring history;
    fan_out_index fan_out;
    std::optional<sparse_path> sparse;  // with one lane; its row caches also serve spike listing
    bool use_sparse = false;            // whether the fan-out index was built
    std::uint64_t threaded_step_ticks = 0;  // sparse_counts::threaded_step_ticks
    std::optional<plasticity> plastic;  // with plastic synapses
    std::optional<structural_plasticity> structure;  // with synaptic elements
    // After an update that changed delays at tick `from`, until tick `until` (the history's
    // length later, at least the longer of the old and new delays) the spikes sent before
    // `from` may still be on their way with the delays in `before`
    // (synapse_store::add_terms_across).
    struct delay_transition {
        synapse_store before;
        tick_t from = 0, until = 0;
    };
    std::optional<delay_transition> transition;
    // Whether set_synapses ever changed delays: the lag and the sparse path then differ from
    // an engine built with the new delays (reroute refuses).
    bool redelayed = false;
    // Own weights live in the fan-out index alone while every tick takes the sparse path (each
    // copy costs 4 bytes a synapse, 2 with half weights); the rows take them back before a
    // tick, a transition or incoming() reads them there, and keep them once a tick was too
    // busy for the sparse path.
    bool rows_keep_weights = false;
    // The rows let own weights go where the index may hold them alone, and else have them:
    // taken back from the index, or where it does not hold them (a store built without them,
    // build_from_share), drawn again by `redrawn`.
    void settle_own_weights(const redrawn_weights* redrawn = nullptr) {
        const bool index_holds = use_sparse && fan_out.holds_weights(store);
        if (index_holds && !rows_keep_weights && !transition) {
            if (!store.weights_released()) store.release_weights();
        } else if (store.weights_released()) {
            if (index_holds)
                weights_into_rows();
            else
                store.take_weights_back([&](auto* weights) { redrawn->write(weights); });
        }
    }
    void weights_into_rows() {
        if (store.weights_released()) store.take_weights_back([&](auto* weights) { fan_out.write_weights(store.classes(), weights); });
    }
    // incoming() is const and may be called from several threads at once: the first takes the
    // weights back, under this lock, and the others wait for it.
    std::mutex weights_back;
    neuron_sums sums;
    std::optional<drive> generated;
    tick_t remote_delay = 1;
    tick_t next = 0;

    std::map<tick_t, std::vector<std::pair<std::size_t, float>>> inputs;  // (slot * batch + lane, value)
    std::vector<float> ext;  // this tick's external input per local neuron; all 0 between ticks
    bool external_input = false;  // whether this tick has any

    peer_routes routes;

    std::vector<global_index> spiked;
    enum class spiking_neurons { none, some, all } spiking = spiking_neurons::none;  // among the local ones
    bool ascending = true;  // local neurons in ascending global index (slot order)

    // The copy of the spec that spec() answers, the local neurons' slots; the neurons peers
    // send get their slots up front, so rows can be filled in parallel.
    explicit impl(const engine_spec& s) : spec(without_synapses(s)), batch(checked_batch(s)), slots(s.neurons),
                                          neurons(s.neurons, s.dt, batch) {
        for (const auto& p : s.peers)
            for (auto g : p.receives) slots.slot_for(g);
    }
    static std::size_t checked_batch(const engine_spec& s) {
        if (s.batch < 1 || s.batch > static_cast<std::uint32_t>(model::max_batch))
            throw usage_error("engine spec: batch must lie in 1.." + std::to_string(model::max_batch));
        return s.batch;
    }
    std::size_t local() const { return slots.local(); }
    bool poisson_input() const { return generated && generated->has_poisson(); }
    // Whether the tick tries the sparse path first.
    bool sparse_tick() const { return batch == 1 && use_sparse && !transition; }

    void check_delivery(std::size_t peer, tick_t t, std::size_t count) const {
        if (peer >= routes.peer_count()) throw usage_error("no peer " + std::to_string(peer));
        if (count != routes.receives(peer).size() * batch)
            throw protocol_error("peer '" + spec.peers[peer].id + "' sent " + std::to_string(count) + " values for tick " +
                                 std::to_string(t) + ", expected " + std::to_string(routes.receives(peer).size() * batch));
        // Rows older than next - (ring - 1) are recycled; tick `next` is the newest row kept.
        if (t > next || t < next - static_cast<tick_t>(history.rows()) + 1)
            throw usage_error("tick " + std::to_string(t) + " cannot be delivered while the engine is at tick " +
                              std::to_string(next));
    }

    // ---- Phases of a tick -----------------------------------------------------------

    // inputs: tick t's external input and generators into ext; returns the listed inputs,
    // which clear_inputs takes back out.
    std::vector<std::pair<std::size_t, float>> gather_inputs(tick_t t) {
        std::vector<std::pair<std::size_t, float>> listed;
        if (auto it = inputs.find(t); it != inputs.end()) {
            listed = std::move(it->second);
            inputs.erase(it);
            for (const auto& [position, value] : listed) ext[position] += value;
            external_input = true;
        }
        if (generated->add_external(t, ext, batch)) external_input = true;
        if (poisson_input() && !sparse_tick()) generated->draw(t);  // else beside the scan (sum_sparse)
        return listed;
    }
    void clear_inputs(tick_t t, const std::vector<std::pair<std::size_t, float>>& listed) {
        for (const auto& [position, value] : listed) ext[position] = 0.0f;
        generated->clear_external(t, ext, batch);
        external_input = false;
    }

    // sum, after the synapses' terms: a neuron's dense sum; for a rate neuron with one lane its
    // Poisson input, which it takes (spiking neurons take theirs as they step).
    void add_after_synapses(std::size_t i, bool split, float& u, float& e, float& h) {
        dense->add(i, split, u, e, h);
        if (!split && poisson_input() && generated->is_driven(i)) {
            u += generated->excitatory()[i];
            u += generated->inhibitory()[i];
            generated->excitatory()[i] = generated->inhibitory()[i] = 0.0f;
        }
    }

    // sum, row by row, one lane: neurons [begin, end).
    void sum_rows(std::size_t begin, std::size_t end, tick_t t) {
        for (std::size_t i = begin; i < end; ++i) {
            const auto& c = neurons.coefficients(i);
            const bool split = model::is_spiking(c.model);
            float u = c.bias, e = 0, h = 0;
            u += ext[i];
            if (transition)
                store.add_terms_across(transition->before, transition->from, i, split, history, t, 1, &u, &e, &h);
            else
                store.add_terms<true>(i, split, history, t, 1, &u, &e, &h);
            add_after_synapses(i, split, u, e, h);
            if (structure) structure->add_terms(i, e, h);
            sums.u[i] = u;
            sums.excitatory[i] = e;
            sums.inhibitory[i] = h;
        }
    }

    // sum, source by source (sparse_path.hpp); false when activity is too dense for it.
    bool sum_sparse(tick_t t) {
        for (const auto& r : neurons.runs()) {
            const auto& c = neurons.coefficients(r.begin);
            if (!model::is_spiking(c.model))
                for (std::size_t i = r.begin; i < r.end; ++i) sums.u[i] = c.bias + ext[i];
        }
        // The tick's Poisson draws go to buffers of their own, which neurons take after their
        // synapses' terms: a busy tick draws them beside the scan, on a thread it leaves idle
        // or less busy (sparse_path.hpp). The bits are those of the draws before the scan.
        std::function<void()> draw;
        if (poisson_input()) draw = [&] { generated->draw(t); };
        if (!sparse->add_terms(t, sums, draw)) return false;
        for (const auto& r : neurons.runs()) {
            const bool split = neurons.is_spiking(r.begin);
            if (!split || !dense->empty())
                for (std::size_t i = r.begin; i < r.end; ++i)
                    add_after_synapses(i, split, sums.u[i], sums.excitatory[i], sums.inhibitory[i]);
        }
        // Grown synapses last, as sum_rows adds them.
        if (structure)
            for (const auto k : structure->touched()) structure->add_terms(k, sums.excitatory[k], sums.inhibitory[k]);
        return true;
    }

    // sum, row by row, every lane of neurons [begin, end): each lane's sums added exactly as
    // for a single lane, so a lane gets the bits a run of its own would get. Poisson input
    // (one value per neuron for every lane) joins every lane here.
    void sum_lanes(std::size_t begin, std::size_t end, tick_t t) {
        for (std::size_t i = begin; i < end; ++i) {
            const auto& c = neurons.coefficients(i);
            const bool split = model::is_spiking(c.model);
            float* const u = sums.u.data() + i * batch;
            float* const e = sums.excitatory.data() + i * batch;
            float* const h = sums.inhibitory.data() + i * batch;
            if (split) {
                std::fill(e, e + batch, 0.0f);
                std::fill(h, h + batch, 0.0f);
            } else {
                for (std::size_t lane = 0; lane < batch; ++lane) u[lane] = c.bias + ext[i * batch + lane];
            }
            if (transition)
                store.add_terms_across(transition->before, transition->from, i, split, history, t, batch, u, e, h);
            else
                store.add_terms<false>(i, split, history, t, batch, u, e, h);
            for (std::size_t lane = 0; lane < batch; ++lane) dense->add(i * batch + lane, split, u[lane], e[lane], h[lane]);
            if (!poisson_input() || !generated->is_driven(i)) continue;
            const float pe = generated->excitatory()[i], ph = generated->inhibitory()[i];
            for (std::size_t lane = 0; lane < batch; ++lane) {
                if (split) {
                    e[lane] += pe;
                    h[lane] += ph;
                } else {
                    u[lane] += pe;
                    u[lane] += ph;
                }
            }
        }
    }

    // update: neurons [begin, end) step from their sums into `out`.
    void update(std::size_t begin, std::size_t end, float* out) {
        const bool take_poisson = batch == 1 && poisson_input();
        neurons.step(begin, end, sums, external_input ? ext.data() : nullptr,
                     take_poisson ? generated->excitatory().data() : nullptr,
                     take_poisson ? generated->inhibitory().data() : nullptr, out);
    }

    // f(begin, end) over all local neurons: at once when `serial`, else in blocks of `block`
    // in parallel.
    template <class F>
    void in_blocks(std::size_t block, bool serial, F&& f) {
        if (serial)
            f(std::size_t{0}, local());
        else
            tbb::parallel_for(tbb::blocked_range<std::size_t>(0, local(), block),
                              [&](const tbb::blocked_range<std::size_t>& r) { f(r.begin(), r.end()); });
    }

    // emit: the spikes of tick t, whose outputs are `out` (engine::spiked). With one lane it
    // also keeps the local non-zero slots of tick t for the sparse path and outgoing_nonzero
    // (all of them when listing spikes, else up to the sparse path's limit).
    void emit(tick_t t, const float* out) {
        spiked.clear();
        auto take = [&](std::size_t k) {
            if (spiking == spiking_neurons::all || model::emits_spikes(neurons.coefficients(k).model))
                spiked.push_back(spec.neurons[k].index);
        };
        if (batch == 1) {
            auto& own = sparse->local_row(t);
            own.tick = t;
            own.slots.clear();
            if (spiking != spiking_neurons::none) {
                find_nonzero(out, 0, local(), local(), own.slots);
                own.complete = true;
                own.dense = own.slots.size() > sparse->limit();
                for (const auto k : own.slots) take(k);
            } else if (use_sparse) {
                own.dense = !find_nonzero(out, 0, local(), sparse->limit(), own.slots);
                own.complete = !own.dense;
            } else {
                own.tick = -1;  // not looked for
            }
        } else if (spiking != spiking_neurons::none) {
            for (std::size_t k = 0; k < local(); ++k)
                if (out[k * batch] != 0.0f) take(k);
        }
        if (!ascending) std::sort(spiked.begin(), spiked.end());
    }

    // ---- Building ---------------------------------------------------------------------

    // Whether some local neuron has synaptic elements: only then does this node keep the
    // picture of structural plasticity (and receive every such neuron).
    bool hosts_member_of(const model::resolved_structure& elements) const {
        bool hosts = false;
        for (const auto& g : elements.groups) g.for_each_member([&](std::uint32_t i) { hosts = hosts || slots.is_local(i); });
        return hosts;
    }

    // `generators` for the local neurons, as they are before tick 0.
    drive generators_for(const model::generators& generators) const {
        return drive(generators, [&](std::int64_t g) -> std::int64_t {
            const auto slot = slots.find(g);
            return slot < local() ? std::int64_t{slot} : -1;
        }, local(), spec.dt);
    }

    // Dense blocks, peers, the history and the sparse path's fan-out index; then the generators.
    // `redrawn`: where the store was built without its own weights, they are drawn again for
    // the fan-out index, or for the rows where the index does not hold them.
    void finish(const engine_spec& s, const redrawn_weights* redrawn = nullptr) {
        slots.rank_slots();
        dense.emplace(s.dense, slots, batch, s.device);
        slots.rank_new_slots();
        routes.route(s.peers, slots);
        const std::size_t ring = static_cast<std::size_t>(std::max({store.max_delay(), dense->max_delay(), s.history})) + 1;
        history.reset(ring, local(), slots.size(), batch);
        use_sparse = batch == 1 && fan_out.build(store, neurons, slots, redrawn);
        settle_own_weights(redrawn);
        remote_delay = dense->remote_delay(local(), std::min<tick_t>(static_cast<tick_t>(ring) - 1, store.remote_delay()));
        if (s.structure && hosts_member_of(*s.structure)) {
            if (batch > 1) throw usage_error("engine spec: structural plasticity runs with one lane only (batch 1)");
            structure.emplace(*s.structure, slots, s.node);
            // Peers' outputs of tick t - lag must be in before tick t starts.
            if (slots.size() > local()) remote_delay = std::min(remote_delay, structure->lag());
        }
        if (batch == 1) sparse.emplace(history, store, fan_out, slots, remote_delay);
        if (!store.models().empty()) {
            if (batch > 1) throw usage_error("engine spec: plastic synapses run with one lane only (batch 1)");
            plastic.emplace(store, fan_out, slots, s.neurons, s.dt, remote_delay, static_cast<tick_t>(history.rows()) - 1);
            if (plastic->empty()) plastic.reset();
        }
        const std::size_t values = local() * batch;
        sums.resize(values);
        ext.assign(values, 0.0f);
        generated.emplace(generators_for(s.generators));
        const auto spiking_count = std::count_if(s.neurons.begin(), s.neurons.end(),
                                                 [](const neuron_spec& n) { return model::emits_spikes(n.params.model); });
        spiking = spiking_count == 0 || !s.list_spikes                       ? spiking_neurons::none
                  : static_cast<std::size_t>(spiking_count) == local() ? spiking_neurons::all
                                                                         : spiking_neurons::some;
        ascending = std::is_sorted(s.neurons.begin(), s.neurons.end(),
                                   [](const neuron_spec& a, const neuron_spec& b) { return a.index < b.index; });
    }
};

engine::engine(const engine_spec& spec) : impl_(std::make_unique<impl>(spec)) {
    auto& m = *impl_;
    const listed_rows rows(spec);
    // Sources that are neither local nor sent by a peer read as 0: they get slots in the
    // order they are first named.
    for (const auto& s : spec.in) m.slots.slot_for(s.source);
    m.store.build(rows, spec.neurons, m.slots, spec.node, spec.half_weights);
    m.finish(spec);
}

engine::engine(const engine_spec& spec, const model::network& share) : impl_(std::make_unique<impl>(spec)) {
    auto& m = *impl_;
    if (!spec.in.empty()) throw usage_error("engine spec: the synapses come from the share; `in` must be empty");
    try {
        // Own weights drawn again while the fan-out index is placed, rather than kept twice.
        std::optional<redrawn_weights> redrawn;
        build_from_share(m.store, share, spec.neurons, m.slots, spec.node, spec.half_weights, &redrawn);
        m.finish(spec, redrawn ? &*redrawn : nullptr);
        redrawn.reset();
        // The build's temporaries (per-thread counts, placing's held entries, the table of
        // row parts) go back to the system rather than stay on the allocator's free lists,
        // where they would count as resident while the network runs (BENCHMARKS.md).
        malloc_trim(0);
    } catch (const std::bad_alloc&) {
        throw allocation_error(spec.node, m.store.planned());
    }
}

engine::~engine() = default;
engine::engine(engine&&) noexcept = default;
engine& engine::operator=(engine&&) noexcept = default;

std::size_t engine::neuron_count() const { return impl_->local(); }
const engine_spec& engine::spec() const { return impl_->spec; }
tick_t engine::next_tick() const { return impl_->next; }
tick_t engine::remote_delay() const { return impl_->remote_delay; }
std::uint32_t engine::batch() const { return static_cast<std::uint32_t>(impl_->batch); }
std::uint64_t engine::synapse_count() const { return impl_->store.size(); }
std::size_t engine::synapse_bytes() const { return impl_->store.bytes() + impl_->fan_out.bytes(); }

std::vector<synapse_weight> engine::plastic_weights() const { return plastic_weights(0, plastic_synapse_count()); }

std::uint64_t engine::plastic_synapse_count() const { return impl_->plastic ? impl_->plastic->synapse_count() : 0; }

std::vector<synapse_weight> engine::plastic_weights(std::uint64_t from, std::uint64_t limit) const {
    return impl_->plastic ? impl_->plastic->weights(from, limit) : std::vector<synapse_weight>{};
}

std::vector<synapse_spec> engine::incoming(global_index neuron) const {
    auto& m = *impl_;
    {
        const std::lock_guard<std::mutex> lock(m.weights_back);
        m.weights_into_rows();  // the same weights, where rows can read them
    }
    const auto k = m.slots.local_slot(neuron);
    const auto global_of = m.slots.global_indices();
    std::vector<synapse_spec> out;
    m.store.for_each(k, [&](std::uint32_t slot, float weight, std::uint16_t delay) { out.push_back({global_of[slot], weight, delay}); });
    return out;
}

void engine::add_input(global_index neuron, tick_t t, float value, std::int64_t lane) {
    auto& m = *impl_;
    if (t < m.next) throw usage_error("input for tick " + std::to_string(t) + " comes after that tick was computed");
    if (lane != all_lanes && (lane < 0 || static_cast<std::size_t>(lane) >= m.batch))
        throw usage_error("input lane " + std::to_string(lane) + " is out of range (batch " + std::to_string(m.batch) + ")");
    const std::size_t first = std::size_t{m.slots.local_slot(neuron)} * m.batch;
    auto& list = m.inputs[t];
    if (lane != all_lanes)
        list.push_back({first + static_cast<std::size_t>(lane), value});
    else
        for (std::size_t l = 0; l < m.batch; ++l) list.push_back({first + l, value});
}

std::size_t engine::receive_count(std::size_t peer) const { return impl_->routes.receives(peer).size() * impl_->batch; }
std::size_t engine::send_count(std::size_t peer) const { return impl_->routes.sends(peer).size() * impl_->batch; }

void engine::deliver(std::size_t peer, tick_t t, const std::vector<float>& values) {
    auto& m = *impl_;
    m.check_delivery(peer, t, values.size());
    float* r = m.history.row(t);
    const auto& slots = m.routes.receives(peer);
    for (std::size_t k = 0; k < slots.size(); ++k) std::copy_n(values.data() + k * m.batch, m.batch, r + slots[k] * m.batch);
    m.history.remote_of(t).all = true;
}

void engine::deliver_nonzero(std::size_t peer, tick_t t, const std::vector<std::pair<std::uint32_t, float>>& values) {
    auto& m = *impl_;
    if (peer >= m.routes.peer_count()) throw usage_error("no peer " + std::to_string(peer));
    const auto& slots = m.routes.receives(peer);
    m.check_delivery(peer, t, slots.size() * m.batch);
    float* r = m.history.row(t);
    auto& part = m.history.remote_of(t);
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
    if (m.transition && t >= m.transition->until) {
        m.transition.reset();
        m.settle_own_weights();
    }
    const auto listed = m.gather_inputs(t);
    if (m.structure) m.structure->before(t, m.history);
    if (m.plastic) m.plastic->update(t, m.history);
    float* out = m.history.row(t);
    m.dense->compute(t, m.history);
    if (m.batch > 1) {
        // Neurons in blocks of about `grain` values.
        m.in_blocks(std::max<std::size_t>(1, grain / m.batch), m.local() * m.batch < 2 * grain,
                    [&](std::size_t begin, std::size_t end) {
                        m.sum_lanes(begin, end, t);
                        m.update(begin, end, out);
                    });
        if (m.poisson_input()) m.generated->clear_poisson();
    } else if (m.sparse_tick() && m.sum_sparse(t)) {
        // A model step costs a nanosecond or two a neuron: threads pay off for very many
        // neurons (40,000 lif neurons ran slower on two threads than on one, waking a thread
        // every tick), or where the scan just ran on threads, which are then awake (the
        // full-scale microcircuit: 0.81x the tick; BENCHMARKS.md, Roofline).
        const bool many = m.local() >= 512 * grain;
        const bool awake = !many && m.sparse->last_tick_threaded() && m.local() >= 2 * step_block;
        m.threaded_step_ticks += awake;
        m.in_blocks(awake ? step_block : grain, !many && !awake, [&](std::size_t begin, std::size_t end) { m.update(begin, end, out); });
    } else {
        if (m.store.weights_released()) {
            m.weights_into_rows();
            m.rows_keep_weights = true;
        }
        m.in_blocks(grain, m.local() < 2 * grain, [&](std::size_t begin, std::size_t end) {
            m.sum_rows(begin, end, t);
            m.update(begin, end, out);
        });
    }
    m.clear_inputs(t, listed);
    m.emit(t, out);
    ++m.next;
    // The row tick `next` will use has held tick next - ring: clear what peers fill.
    m.history.clear_remote(m.next);
}

void engine::outgoing(std::size_t peer, std::vector<float>& values) const {
    impl_->routes.outgoing(peer, impl_->history.row(impl_->next - 1), impl_->batch, values);
}

void engine::outgoing_nonzero(std::size_t peer, std::vector<std::pair<std::uint32_t, float>>& values) const {
    const auto& m = *impl_;
    // With one lane the tick's non-zero local slots may be known (emit): only those are looked up.
    const std::vector<std::uint32_t>* nonzero = nullptr;
    if (m.batch == 1 && m.next > 0) {
        const auto& own = m.sparse->local_row(m.next - 1);
        if (own.tick == m.next - 1 && own.complete) nonzero = &own.slots;
    }
    m.routes.outgoing_nonzero(peer, m.history.row(m.next - 1), m.batch, nonzero, values);
}

const std::vector<global_index>& engine::spiked() const { return impl_->spiked; }

float engine::output(global_index neuron, std::uint32_t lane) const {
    const auto& m = *impl_;
    if (lane >= m.batch) throw usage_error("lane " + std::to_string(lane) + " is out of range (batch " + std::to_string(m.batch) + ")");
    return m.history.row(m.next - 1)[std::size_t{m.slots.local_slot(neuron)} * m.batch + lane];
}

bool engine::is_local(global_index neuron) const { return impl_->slots.is_local(neuron); }

std::vector<float> engine::variables(global_index neuron) const {
    return impl_->neurons.variables(impl_->slots.local_slot(neuron));
}

std::vector<neuron_state> engine::capture() const {
    std::vector<neuron_state> states;
    states.reserve(impl_->local());
    for (std::size_t k = 0; k < impl_->local(); ++k) states.push_back(capture(k));
    return states;
}

neuron_state engine::capture(std::size_t k) const {
    const auto& m = *impl_;
    if (m.batch > 1) throw usage_error("snapshots of a batched run (batch > 1) are not supported");
    if (m.transition && m.next < m.transition->until)
        throw usage_error("the delays changed at tick " + std::to_string(m.transition->from) + " and spikes sent before are on their way until tick " +
                          std::to_string(m.transition->until) + ": a snapshot is taken from then on");
    neuron_state s;
    s.index = m.spec.neurons[k].index;
    s.output = m.history.row(m.next - 1)[k];
    s.variables = m.neurons.variables(k);
    for (tick_t d = 1; d < m.spec.history; ++d) s.history.push_back(m.history.row(m.next - 1 - d)[k]);
    if (m.plastic) m.plastic->capture(static_cast<std::uint32_t>(k), s.traces, s.synapses);
    if (m.structure && m.structure->member_position(s.index) >= 0) s.growth = m.structure->capture(s.index);
    return s;
}

void engine::set_parameters(const std::vector<model::neuron_params>& params, const model::generators& generators) {
    auto& m = *impl_;
    if (params.size() != m.local())
        throw usage_error("new parameters for " + std::to_string(params.size()) + " neurons; this engine has " + std::to_string(m.local()));
    auto neurons = m.spec.neurons;
    for (std::size_t k = 0; k < neurons.size(); ++k) {
        const auto& before = neurons[k].params;
        if (params[k].model != before.model || params[k].tau_minus != before.tau_minus)
            throw usage_error("neuron " + std::to_string(neurons[k].index) + ": new parameters may not change its model or tau_minus");
        neurons[k].params = params[k];
    }
    drive generated = m.generators_for(generators);
    m.neurons.set_parameters(neurons, m.spec.dt);
    m.spec.neurons = std::move(neurons);
    m.spec.generators = generators;
    m.generated = std::move(generated);
}

void engine::set_synapses(const model::network& share, const std::vector<std::size_t>& reweighted) {
    auto& m = *impl_;
    synapse_store fresh;
    std::optional<redrawn_weights> redrawn;  // as at the build: own weights not kept twice
    try {
        build_from_share(fresh, share, m.spec.neurons, m.slots, m.spec.node, m.spec.half_weights, &redrawn);
    } catch (const std::bad_alloc&) {
        throw allocation_error(m.spec.node, fresh.planned());
    }
    if (!m.store.same_wiring(fresh))
        throw usage_error("new synapses: they differ from this engine's in their sources or synapse models");
    const bool redelayed = !fresh.same_delays(m.store);
    if (redelayed) {
        const auto kept = static_cast<tick_t>(m.history.rows()) - 1;
        if (fresh.max_delay() > kept)
            throw usage_error("new delays: " + std::to_string(fresh.max_delay()) + " ticks exceed the " + std::to_string(kept) +
                              " ticks of output this engine keeps (the longest delay at install)");
        if (m.transition && m.next < m.transition->until && m.next != m.transition->from)
            throw usage_error("new delays: the delays changed at tick " + std::to_string(m.transition->from) +
                              " and spikes sent before are on their way until tick " + std::to_string(m.transition->until) +
                              "; change them again from then on");
    }
    // Learned weights stay, but where the update sets them.
    auto learned = [&](std::uint32_t cls) {
        return (m.store.classes()[cls].varies & synapse_store::weight_changes) &&
               std::find(reweighted.begin(), reweighted.end(), m.store.element_of(cls)) == reweighted.end();
    };
    fresh.copy_weights(m.store, learned);
    // Classes whose synapse model takes new parameters (a node without plastic synapses has
    // no rule to give them), found while m.store is the store in use.
    std::vector<std::size_t> remodelled;
    for (std::size_t c = 0; m.plastic && c < fresh.models().size(); ++c)
        if (fresh.models()[c].values != m.store.models()[c].values) {
            m.plastic->check_model(c, fresh.models()[c]);
            remodelled.push_back(c);
        }
    // The plastic synapses' index as their spikes sent until now find them (plasticity::redelay).
    std::optional<fan_out_index> sent_with;
    if (m.plastic && !fresh.same_delays(m.store, true)) sent_with = m.fan_out;
    if (redelayed) {
        m.redelayed = true;
        // Every node's transition lasts the history it keeps: the same on any partition. A
        // second change before a tick is computed keeps the delays spikes were sent with.
        if (!m.transition || m.transition->from != m.next)
            m.transition = impl::delay_transition{std::move(m.store), m.next, m.next + static_cast<tick_t>(m.history.rows()) - 1};
        // Remote values are read from their shortest delay on (runner.hpp: the lag only shrinks).
        m.remote_delay = std::min<tick_t>(m.remote_delay, fresh.remote_delay());
        if (m.sparse) m.sparse.emplace(m.history, m.store, m.fan_out, m.slots, m.remote_delay);
    }
    m.store = std::move(fresh);
    for (const auto c : remodelled) m.plastic->set_model(c, m.store.models()[c]);
    // The fan-out index copies weights; a plastic class's copies are written before each
    // delivery reads them (plasticity.hpp), so a rebuilt index serves as a restore's does.
    if (m.use_sparse) {
        m.fan_out.build(m.store, m.neurons, m.slots, redrawn ? &*redrawn : nullptr);
        m.sparse->forget_rows();
    }
    m.settle_own_weights(redrawn ? &*redrawn : nullptr);
    if (sent_with) {
        m.plastic->redelay(m.transition->before, std::move(*sent_with), m.next, m.remote_delay);
        m.transition->until = std::max(m.transition->until, m.plastic->settled());
    }
}

void engine::restore(const std::vector<neuron_state>& states, tick_t next) {
    auto& m = *impl_;
    if (m.batch > 1) throw usage_error("snapshots of a batched run (batch > 1) are not supported");
    if (next < 0) throw usage_error("cannot restore to a negative tick");
    // Grown synapses, checked before anything changes.
    std::optional<structural_plasticity::restore_state> grown;
    if (m.structure) {
        std::vector<const std::vector<double>*> growth(m.structure->member_count(), nullptr);
        for (const auto& s : states) {
            const auto p = m.structure->member_position(s.index);
            if (p >= 0 && !s.growth.empty()) growth[static_cast<std::size_t>(p)] = &s.growth;
        }
        grown = m.structure->prepare(growth, next);
    }
    std::vector<bool> seen(m.local(), false);
    m.history.clear_for_restore();
    m.transition.reset();  // the states are those of the synapses as they are now
    if (m.plastic) m.plastic->forget_old_delays();
    m.next = next;
    m.spiked.clear();
    m.sparse->forget_rows();
    for (const auto& s : states) {
        const auto slot = m.slots.find(s.index);
        if (slot == no_slot) continue;
        if (slot < m.local()) {
            seen[slot] = true;
            m.neurons.set_variables(slot, s.variables);
        }
        m.history.row(next - 1)[slot] = s.output;
        for (std::size_t d = 0; d < s.history.size() && d + 2 < m.history.rows() + 1; ++d)
            m.history.row(next - 2 - static_cast<tick_t>(d))[slot] = s.history[d];
        if (m.plastic) m.plastic->restore(slot, s, next);
    }
    for (std::size_t k = 0; k < m.local(); ++k)
        if (!seen[k]) throw usage_error("restore: no state for neuron " + std::to_string(m.spec.neurons[k].index));
    if (m.plastic) m.plastic->restored(next);
    if (grown) m.structure->restore(std::move(*grown));
    if (m.structure) m.structure->restored(next, m.history);
    m.inputs.erase(m.inputs.begin(), m.inputs.lower_bound(next));
    m.settle_own_weights();  // where a transition kept them in the rows
}

bool engine::reroute(const engine_spec& spec) {
    auto& m = *impl_;
    if (m.redelayed || spec.neurons.size() != m.spec.neurons.size()) return false;
    for (std::size_t k = 0; k < spec.neurons.size(); ++k)
        if (spec.neurons[k].index != m.spec.neurons[k].index) return false;
    // The remote neurons read must stay those that have slots and history rows.
    auto received = [](const std::vector<peer_spec>& peers) {
        std::vector<global_index> all;
        for (const auto& p : peers) all.insert(all.end(), p.receives.begin(), p.receives.end());
        std::sort(all.begin(), all.end());
        return all;
    };
    if (received(spec.peers) != received(m.spec.peers)) return false;
    for (const auto& p : spec.peers)
        if (!std::all_of(p.sends.begin(), p.sends.end(), [&](global_index g) { return m.slots.is_local(g); })) return false;
    m.routes.route(spec.peers, m.slots);
    m.spec.peers = spec.peers;
    for (std::size_t k = 0; k < spec.neurons.size(); ++k) m.spec.neurons[k].window_ms = spec.neurons[k].window_ms;
    // As an engine built from `spec` would be: no external input yet, generators afresh.
    m.inputs.clear();
    std::fill(m.ext.begin(), m.ext.end(), 0.0f);
    m.external_input = false;
    m.generated.emplace(m.generators_for(m.spec.generators));
    return true;
}

std::vector<structure_record> engine::take_structure_records() {
    return impl_->structure ? impl_->structure->take_records() : std::vector<structure_record>{};
}

std::vector<engine::grown_synapse> engine::grown_synapses(std::uint64_t from, std::uint64_t limit) const {
    std::vector<grown_synapse> out;
    if (impl_->structure)
        impl_->structure->for_each_grown(from, limit, [&](global_index source, global_index target, std::uint32_t pairing) {
            out.push_back({source, target, pairing});
        });
    return out;
}

std::uint64_t engine::grown_synapse_count() const { return impl_->structure ? impl_->structure->synapse_count() : 0; }

double engine::calcium(global_index neuron) const {
    if (!impl_->structure) throw usage_error("this network has no structural plasticity");
    return impl_->structure->calcium(neuron);
}

double engine::structure_update_seconds() const { return impl_->structure ? impl_->structure->update_seconds() : 0.0; }

sparse_counts engine::sparse_path_counts() const {
    if (!impl_->sparse) return {};
    sparse_counts counts = impl_->sparse->counts();
    counts.threaded_step_ticks = impl_->threaded_step_ticks;
    return counts;
}

}  // namespace dnnc::sim
