#include "dnnc/sim/engine.hpp"

#include "dense_input.hpp"
#include "drive.hpp"
#include "fan_out.hpp"
#include "history.hpp"
#include "neurons.hpp"
#include "plasticity.hpp"
#include "row_sources.hpp"
#include "slots.hpp"
#include "sparse_path.hpp"
#include "structural_plasticity.hpp"
#include "synapse_store.hpp"

#include "dnnc/protocol/check.hpp"
#include "dnnc/protocol/rows.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <limits>
#include <map>
#include <new>
#include <optional>

namespace dnnc::sim {

namespace {
constexpr std::size_t grain = 512;
}  // namespace

// A node's engine is made of parts with one job each: the slot layout (slots.hpp), the
// synapse store (the only owner of synapses and weights), the fan-out index derived from it
// for sparse activity, the output history, the neuron block, the dense projections and the
// generators. A tick runs as named phases:
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
    neuron_sums sums;
    std::optional<drive> generated;
    tick_t remote_delay = 1;
    tick_t next = 0;

    std::map<tick_t, std::vector<std::pair<std::size_t, float>>> inputs;  // (slot * batch + lane, value)
    std::vector<float> ext;  // this tick's external input per local neuron; all 0 between ticks
    bool external_input = false;  // whether this tick has any

    std::vector<std::vector<std::uint32_t>> send_slots, receive_slots;  // per peer
    // Per local slot, [send_of_begin[slot], send_of_begin[slot + 1]) in send_of: the peers it
    // is sent to and its position in each one's packet (send_slots inverted).
    struct sent_to {
        std::uint32_t peer, position;
    };
    std::vector<std::uint64_t> send_of_begin;
    std::vector<sent_to> send_of;

    std::vector<global_index> spiked;
    enum class spiking_neurons { none, some, all } spiking = spiking_neurons::none;  // among the local ones
    bool ascending = true;  // local neurons in ascending global index (slot order)

    // The copy of the spec that spec() answers, the local neurons' slots; the neurons peers
    // send get their slots up front, so rows can be filled in parallel.
    explicit impl(const engine_spec& s) : spec(copy_without_synapses(s)), batch(checked_batch(s)), slots(s.neurons),
                                          neurons(s.neurons, s.dt, batch) {
        for (const auto& p : s.peers)
            for (auto g : p.receives) slots.slot_for(g);
    }
    static engine_spec copy_without_synapses(const engine_spec& s) {
        engine_spec copy;
        copy.node = s.node;
        copy.dt = s.dt;
        copy.history = s.history;
        copy.neurons = s.neurons;
        copy.peers = s.peers;
        copy.generators = s.generators;
        copy.device = s.device;
        copy.batch = s.batch;
        copy.list_spikes = s.list_spikes;
        copy.structure = s.structure;
        return copy;
    }
    static std::size_t checked_batch(const engine_spec& s) {
        if (s.batch < 1 || s.batch > static_cast<std::uint32_t>(protocol::max_batch))
            throw usage_error("engine spec: batch must lie in 1.." + std::to_string(protocol::max_batch));
        return s.batch;
    }
    std::size_t local() const { return slots.local(); }
    bool poisson_input() const { return generated && generated->has_poisson(); }

    void check_delivery(std::size_t peer, tick_t t, std::size_t count) const {
        if (peer >= receive_slots.size()) throw usage_error("no peer " + std::to_string(peer));
        if (count != receive_slots[peer].size() * batch)
            throw protocol_error("peer '" + spec.peers[peer].id + "' sent " + std::to_string(count) + " values for tick " +
                                 std::to_string(t) + ", expected " + std::to_string(receive_slots[peer].size() * batch));
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
        if (poisson_input()) generated->draw(t);
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
            const bool split = protocol::is_spiking(c.model);
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
            if (!protocol::is_spiking(c.model))
                for (std::size_t i = r.begin; i < r.end; ++i) sums.u[i] = c.bias + ext[i];
        }
        if (!sparse->add_terms(t, sums)) return false;
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
            const bool split = protocol::is_spiking(c.model);
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
            if (spiking == spiking_neurons::all || protocol::emits_spikes(neurons.coefficients(k).model))
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
    bool hosts_member_of(const protocol::resolved_structure& elements) const {
        bool hosts = false;
        for (const auto& g : elements.groups) g.for_each_member([&](std::uint32_t i) { hosts = hosts || slots.is_local(i); });
        return hosts;
    }

    // What goes to and comes from each peer, as slots: every neuron a peer sends has a slot
    // already, every one sent to it is local.
    void route(const std::vector<peer_spec>& peers) {
        send_slots.clear();
        receive_slots.clear();
        for (const auto& p : peers) {
            std::vector<std::uint32_t> sends, receives;
            for (auto g : p.sends) sends.push_back(slots.local_slot(g));
            for (auto g : p.receives) receives.push_back(slots.find(g));
            send_slots.push_back(std::move(sends));
            receive_slots.push_back(std::move(receives));
        }
        send_of_begin.assign(local() + 1, 0);
        for (const auto& sends : send_slots)
            for (const auto slot : sends) ++send_of_begin[slot + 1];
        for (std::size_t k = 0; k < local(); ++k) send_of_begin[k + 1] += send_of_begin[k];
        send_of.resize(send_of_begin[local()]);
        std::vector<std::uint64_t> cursor(send_of_begin.begin(), send_of_begin.end() - 1);
        for (std::size_t p = 0; p < send_slots.size(); ++p)
            for (std::size_t k = 0; k < send_slots[p].size(); ++k)
                send_of[cursor[send_slots[p][k]]++] = {static_cast<std::uint32_t>(p), static_cast<std::uint32_t>(k)};
    }

    // `generators` for the local neurons, as they are before tick 0.
    drive generators_for(const protocol::generators& generators) const {
        return drive(generators, [&](std::int64_t g) -> std::int64_t {
            const auto slot = slots.find(g);
            return slot < local() ? std::int64_t{slot} : -1;
        }, local(), spec.dt);
    }

    // Dense blocks, peers, the history and the sparse path's fan-out index; then the generators.
    void finish(const engine_spec& s) {
        slots.rank_slots();
        dense.emplace(s.dense, slots, batch, s.device);
        slots.rank_new_slots();
        route(s.peers);
        const std::size_t ring = static_cast<std::size_t>(std::max({store.max_delay(), dense->max_delay(), s.history})) + 1;
        history.reset(ring, local(), slots.size(), batch);
        use_sparse = batch == 1 && fan_out.build(store, neurons, slots);
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
                                                 [](const neuron_spec& n) { return protocol::emits_spikes(n.params.model); });
        spiking = spiking_count == 0 || !s.list_spikes                       ? spiking_neurons::none
                  : static_cast<std::size_t>(spiking_count) == local() ? spiking_neurons::all
                                                                         : spiking_neurons::some;
        ascending = std::is_sorted(s.neurons.begin(), s.neurons.end(),
                                   [](const neuron_spec& a, const neuron_spec& b) { return a.index < b.index; });
    }
};

engine::engine(const engine_spec& spec) : impl_(std::make_unique<impl>(spec)) {
    auto& m = *impl_;
    const bool listed = !spec.in_begin.empty();
    bool matches = listed ? spec.in_begin.size() == m.local() + 1 && spec.in_begin.front() == 0 && spec.in_begin.back() == spec.in.size()
                          : spec.in.empty();
    for (std::size_t k = 0; listed && matches && k < m.local(); ++k) matches = spec.in_begin[k] <= spec.in_begin[k + 1];
    if (!matches) throw usage_error("engine spec: in_begin does not match the synapses");
    // Sources that are neither local nor sent by a peer read as 0: they get slots in the
    // order they are first named.
    for (const auto& s : spec.in) m.slots.slot_for(s.source);
    m.store.build(listed_rows(spec), spec.neurons, m.slots, spec.node);
    m.finish(spec);
}

namespace {
// The rows of `neurons` drawn from `share` into `store` (sources found in `slots`).
void build_from_share(synapse_store& store, const protocol::network& share, const std::vector<neuron_spec>& neurons,
                      const slot_layout& slots, const std::string& node) {
    for (const auto& n : neurons)
        if (n.index < 0 || n.index > std::numeric_limits<protocol::neuron_index>::max())
            throw protocol_error("neuron " + std::to_string(n.index) + " lies outside any network");
    std::vector<protocol::neuron_index> targets;
    targets.reserve(neurons.size());
    for (const auto& n : neurons) targets.push_back(static_cast<protocol::neuron_index>(n.index));
    // Only this node's rows are drawn (fixed-outdegree rows come from every source's draws).
    const protocol::synapse_rows rows(share, std::move(targets));
    for (std::size_t e = 0; e < rows.element_count(); ++e)
        if (rows.is_dense(e))
            throw protocol_error(format_located(rows.where(e), "a node's share of a network carries no dense projections"));
    for (const auto& n : neurons)
        if (n.index < 0 || static_cast<std::uint64_t>(n.index) >= rows.neuron_count())
            throw protocol_error("neuron " + std::to_string(n.index) + " lies outside the share's " +
                                 std::to_string(rows.neuron_count()) + " neurons");
    store.build(share_rows(rows, neurons), neurons, slots, node);
}
}  // namespace

engine::engine(const engine_spec& spec, const protocol::network& share) : impl_(std::make_unique<impl>(spec)) {
    auto& m = *impl_;
    if (!spec.in.empty()) throw usage_error("engine spec: the synapses come from the share; `in` must be empty");
    try {
        build_from_share(m.store, share, spec.neurons, m.slots, spec.node);
        m.finish(spec);
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
    const auto& m = *impl_;
    std::vector<synapse_weight> out;
    if (!m.plastic) return out;
    const auto global_of = m.slots.global_indices();
    std::uint64_t seen = 0;
    for (std::size_t k = 0; k < m.local() && out.size() < limit; ++k) {
        auto s = m.store.row_begin(k);
        for (auto r = m.store.run_begin(k); r < m.store.run_begin(k + 1) && out.size() < limit; ++r) {
            const auto cls = m.store.run(r).cls;
            const auto end = m.store.row_begin(k) + m.store.run(r).end;
            if (!(m.store.classes()[cls].varies & synapse_store::weight_changes)) {
                s = end;
                continue;
            }
            if (seen + (end - s) <= from) {  // the whole run lies before the page
                seen += end - s;
                s = end;
                continue;
            }
            for (; s < end && out.size() < limit; ++s, ++seen)
                if (seen >= from)
                    out.push_back({m.store.element_of(cls), global_of[m.store.source(s)], m.spec.neurons[k].index,
                                   m.plastic->weight(static_cast<std::uint8_t>(cls), s)});
            s = end;
        }
    }
    return out;
}

std::vector<synapse_spec> engine::incoming(global_index neuron) const {
    const auto& m = *impl_;
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

std::size_t engine::receive_count(std::size_t peer) const { return impl_->receive_slots.at(peer).size() * impl_->batch; }
std::size_t engine::send_count(std::size_t peer) const { return impl_->send_slots.at(peer).size() * impl_->batch; }

void engine::deliver(std::size_t peer, tick_t t, const std::vector<float>& values) {
    auto& m = *impl_;
    m.check_delivery(peer, t, values.size());
    float* r = m.history.row(t);
    const auto& slots = m.receive_slots[peer];
    for (std::size_t k = 0; k < slots.size(); ++k) std::copy_n(values.data() + k * m.batch, m.batch, r + slots[k] * m.batch);
    m.history.remote_of(t).all = true;
}

void engine::deliver_nonzero(std::size_t peer, tick_t t, const std::vector<std::pair<std::uint32_t, float>>& values) {
    auto& m = *impl_;
    if (peer >= m.receive_slots.size()) throw usage_error("no peer " + std::to_string(peer));
    const auto& slots = m.receive_slots[peer];
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
    if (m.transition && t >= m.transition->until) m.transition.reset();
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
    } else if (m.use_sparse && !m.transition && m.sum_sparse(t)) {
        // A model step costs a nanosecond or two: threads pay off only for very many neurons
        // (40,000 lif neurons ran slower on two threads than on one).
        m.in_blocks(grain, m.local() < 512 * grain, [&](std::size_t begin, std::size_t end) { m.update(begin, end, out); });
    } else {
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
    const auto& m = *impl_;
    const float* r = m.history.row(m.next - 1);
    values.clear();
    for (auto slot : m.send_slots.at(peer)) values.insert(values.end(), r + slot * m.batch, r + (slot + 1) * m.batch);
}

void engine::outgoing_nonzero(std::size_t peer, std::vector<std::pair<std::uint32_t, float>>& values) const {
    const auto& m = *impl_;
    const float* r = m.history.row(m.next - 1);
    values.clear();
    const auto& slots = m.send_slots.at(peer);
    if (m.batch == 1 && m.next > 0) {
        // The tick's non-zero local slots are known (emit): look up only those.
        const auto& own = m.sparse->local_row(m.next - 1);
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

void engine::set_parameters(const std::vector<protocol::neuron_params>& params, const protocol::generators& generators) {
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

void engine::set_synapses(const protocol::network& share, const std::vector<std::size_t>& reweighted) {
    auto& m = *impl_;
    synapse_store fresh;
    try {
        build_from_share(fresh, share, m.spec.neurons, m.slots, m.spec.node);
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
    for (std::size_t k = 0; k < m.local(); ++k) {
        auto s = m.store.row_begin(k);
        for (auto r = m.store.run_begin(k); r < m.store.run_begin(k + 1); ++r) {
            const auto end = m.store.row_begin(k) + m.store.run(r).end;
            if (learned(m.store.run(r).cls))
                for (; s < end; ++s) fresh.own_weight(s) = m.store.own_weight(s);
            s = end;
        }
    }
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
        m.fan_out.build(m.store, m.neurons, m.slots);
        m.sparse->forget_rows();
    }
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
    m.route(spec.peers);
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

std::uint64_t engine::split_sparse_ticks() const { return impl_->sparse ? impl_->sparse->split_ticks() : 0; }

engine_spec whole_network(const protocol::expanded_network& net) {
    engine_spec spec;
    spec.dt = net.dt;
    spec.history = protocol::longest_delay(net);
    for (const auto& d : net.dense)
        spec.dense.push_back({{d.sources.begin(), d.sources.end()}, {d.targets.begin(), d.targets.end()}, d.weights, d.delay, {}, 0});
    spec.neurons.reserve(net.neuron_count());
    for (protocol::neuron_index i = 0; i < net.neuron_count(); ++i)
        spec.neurons.push_back({static_cast<global_index>(i), net.member_params(i), net.groups[net.group_of[i]].seed, 0.0});
    spec.generators = net.drive;
    spec.structure = net.structure;
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
        spec.structure = protocol::resolve_structure(*config.share);
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
