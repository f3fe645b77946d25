#include "structural_plasticity.hpp"

#include "dnnc/core/splitmix64.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace dnnc::sim {

namespace {
constexpr tick_t never = std::numeric_limits<tick_t>::max();

// Draw keys: one stream per (update, pairing, phase), so no draw depends on another's count.
enum phase : std::uint64_t { delete_from_pre = 0, delete_from_post = 1, pair_up = 2 };
splitmix64 stream(std::uint64_t seed, tick_t t, std::size_t pairing, phase p) {
    const std::uint64_t key = splitmix64::at(seed, static_cast<std::uint64_t>(t)).next();
    return splitmix64::at(key, 3 * static_cast<std::uint64_t>(pairing) + p);
}

// NEST's global_shuffle: `n` of `items` in a random order (each drawn from those left).
template <class T>
std::vector<T> draw(std::vector<T> items, std::size_t n, splitmix64& rng) {
    std::vector<T> out;
    out.reserve(n);
    for (std::size_t i = 0; i < n && !items.empty(); ++i) {
        const auto r = static_cast<std::size_t>(rng.below(items.size()));
        out.push_back(items[r]);
        items[r] = items.back();
        items.pop_back();
    }
    return out;
}
}  // namespace

structural_plasticity::structural_plasticity(const model::resolved_structure& structure, const slot_layout& slots,
                                             const std::string& node)
    : structure_(structure), local_(slots.local()), lag_(structure.shortest_delay()) {
    const auto kinds = structure_.element_names.size();
    for (std::uint32_t g = 0; g < structure_.groups.size(); ++g) {
        const auto& group = structure_.groups[g];
        std::vector<curve_family> families;
        std::vector<std::int32_t> position(kinds, -1);
        for (std::uint32_t e = 0; e < group.kinds.size(); ++e) {
            position[group.kinds[e]] = static_cast<std::int32_t>(e);
            const auto& c = group.curves[e];
            const double xi = (c.eta + c.eps) / 2, zeta = (c.eta - c.eps) / (2 * std::sqrt(std::log(2.0)));
            auto same = std::find_if(families.begin(), families.end(), [&](const curve_family& f) { return f.xi == xi && f.zeta == zeta; });
            if (same == families.end()) same = families.insert(families.end(), curve_family{xi, zeta, {}});
            same->positions.push_back(e);
        }
        families_.push_back(std::move(families));
        position_of_kind_.push_back(std::move(position));
        group.for_each_member([&](global_index index) {
            const auto slot = slots.find(index);
            if (slot == no_slot)
                throw protocol_error("neuron " + std::to_string(index) + " has synaptic elements but " +
                                     (node.empty() ? std::string("this node") : "node '" + node + "'") +
                                     " neither runs it nor receives it: the config is inconsistent");
            member m{index, slot, g};
            m.elements = static_cast<std::uint32_t>(z_.size());
            members_.push_back(m);
            for (const auto& c : group.curves) {
                z_.push_back(c.z);
                connected_.push_back(0);
            }
        });
    }
    // By index (member_position's search): a grown population's later extents come after
    // every written population's members.
    std::stable_sort(members_.begin(), members_.end(), [](const member& a, const member& b) { return a.index < b.index; });
    rows_.resize(local_);
    out_.resize(members_.size());
    std::uint32_t slots_needed = 0;
    for (const auto& m : members_) slots_needed = std::max(slots_needed, m.slot + 1);
    member_of_slot_.assign(slots_needed, -1);
    for (std::uint32_t m = 0; m < members_.size(); ++m) member_of_slot_[members_[m].slot] = static_cast<std::int32_t>(m);
    for (const auto& p : structure_.pairings) delays_.push_back(p.delay);
    std::sort(delays_.begin(), delays_.end());
    delays_.erase(std::unique(delays_.begin(), delays_.end()), delays_.end());
    spiked_.resize(static_cast<std::size_t>(structure_.longest_delay()) + 1);
    spiked_tick_.assign(spiked_.size(), -1);
    excitatory_.assign(local_, 0.0f);
    inhibitory_.assign(local_, 0.0f);
    touched_.assign(local_, false);
}

std::int32_t* structural_plasticity::connected(std::uint32_t m, std::uint32_t kind) {
    const auto p = position_of_kind_[members_[m].group][kind];
    return p < 0 ? nullptr : &connected_[members_[m].elements + static_cast<std::uint32_t>(p)];
}

std::int64_t structural_plasticity::vacant(std::uint32_t m, std::uint32_t kind) const {
    const auto p = position_of_kind_[members_[m].group][kind];
    if (p < 0) return 0;
    const auto e = members_[m].elements + static_cast<std::uint32_t>(p);
    return static_cast<std::int64_t>(std::floor(z_[e])) - connected_[e];
}

// NEST's update_synaptic_elements: each element's z follows its Gaussian growth curve by
// forward Euler at the resolution from the last update to t, on a calcium that decays from
// its last value (gaussian_growth_sum); then the calcium decays exactly.
void structural_plasticity::bring_up_to_date(member& m, tick_t t) {
    const tick_t steps = t - m.ca_tick;
    if (steps <= 0) return;
    const auto& group = structure_.groups[m.group];
    const double h = structure_.dt, tau = group.tau_ca;
    for (const auto& f : families_[m.group]) {
        const double sum = model::gaussian_growth_sum(group.curves[f.positions.front()], m.ca, steps, h, tau);
        for (const auto p : f.positions) {
            double& z = z_[m.elements + p];
            z = std::max(z + h * group.curves[p].growth_rate * sum, 0.0);
        }
    }
    m.ca *= std::exp(-static_cast<double>(steps) * h / tau);
    m.ca_tick = t;
}

void structural_plasticity::take_spikes(tick_t s, const history_ring& history) {
    auto& spiked = spiked_[static_cast<std::size_t>(s) % spiked_.size()];
    spiked_tick_[static_cast<std::size_t>(s) % spiked_.size()] = s;
    spiked.clear();
    const float* row = history.row(s);
    for (std::uint32_t m = 0; m < members_.size(); ++m)
        if (row[members_[m].slot] != 0.0f) spiked.push_back(m);
}

void structural_plasticity::before(tick_t t, const history_ring& history) {
    const tick_t s = t - lag_;  // the tick whose spikes count now
    if (s >= 0) {
        take_spikes(s, history);
        for (const auto m : spiked_[static_cast<std::size_t>(s) % spiked_.size()]) {
            bring_up_to_date(members_[m], s + 1);
            members_[m].ca += structure_.groups[members_[m].group].beta_ca;
        }
    }
    if (s + 1 >= 0 && (s + 1) % structure_.interval == 0) update(s + 1);
    deliver(t, history);
}

void structural_plasticity::restored(tick_t next, const history_ring& history) {
    std::fill(spiked_tick_.begin(), spiked_tick_.end(), -1);
    for (const auto k : touched_list_) {
        excitatory_[k] = inhibitory_[k] = 0.0f;
        touched_[k] = false;
    }
    touched_list_.clear();
    for (tick_t s = std::max<tick_t>(0, next - static_cast<tick_t>(spiked_.size()) + 1); s <= next - 1 - lag_; ++s) take_spikes(s, history);
    rows_changed_ = true;
}

void structural_plasticity::index_rows() {
    for (auto& out : out_) out.clear();
    for (std::uint32_t k = 0; k < local_; ++k)
        for (const auto& r : rows_[k])
            out_[static_cast<std::size_t>(member_of_slot_[r.slot])].push_back({k, r.weight, r.delay, r.born, r.dies});
    rows_changed_ = false;
}

void structural_plasticity::deliver(tick_t t, const history_ring& history) {
    if (rows_changed_) index_rows();
    touched_list_.clear();
    for (const auto d : delays_) {
        const tick_t s = t - d;
        if (s < 0) break;
        const auto at = static_cast<std::size_t>(s) % spiked_.size();
        if (spiked_tick_[at] != s) continue;
        const float* row = history.row(s);
        for (const auto m : spiked_[at]) {
            const float y = row[members_[m].slot];
            for (const auto& o : out_[m]) {
                if (o.delay != d || s < o.born || s >= o.dies) continue;
                (o.weight >= 0 ? excitatory_ : inhibitory_)[o.target] += o.weight * y;
                if (!touched_[o.target]) {
                    touched_[o.target] = true;
                    touched_list_.push_back(o.target);
                }
            }
        }
    }
}

void structural_plasticity::update(tick_t t) {
    const auto started = std::chrono::steady_clock::now();
    for (auto& m : members_) bring_up_to_date(m, t);
    // Row synapses no tick from here on reads.
    const tick_t computing = t - 1 + lag_;
    rows_changed_ = true;
    for (auto& row : rows_)
        row.erase(std::remove_if(row.begin(), row.end(), [&](const row_synapse& r) { return r.dies != never && r.dies + r.delay <= computing; }),
                  row.end());

    std::vector<structure_record> records(structure_.groups.size());
    for (std::uint32_t g = 0; g < records.size(); ++g) {
        records[g].tick = t;
        records[g].group = g;
    }
    const auto count = static_cast<std::uint32_t>(members_.size());
    for (std::uint32_t p = 0; p < structure_.pairings.size(); ++p) {
        const auto& pairing = structure_.pairings[p];
        // Surplus connected elements, first on the pre side, then on the post side, delete
        // synapses of this pairing drawn at random from the neuron's own.
        for (const bool pre_side : {true, false}) {
            auto rng = stream(structure_.seed, t, p, pre_side ? delete_from_pre : delete_from_post);
            for (std::uint32_t m = 0; m < count; ++m) {
                const auto surplus = -vacant(m, pre_side ? pairing.pre : pairing.post);
                if (surplus <= 0) continue;
                // The neuron's synapses: by target, then age (pre side), or by age (post side).
                std::vector<std::size_t> own;
                for (std::size_t k = 0; k < grown_.size(); ++k)
                    if (grown_[k].pairing == p && (pre_side ? grown_[k].pre : grown_[k].post) == m) own.push_back(k);
                if (pre_side)
                    std::stable_sort(own.begin(), own.end(), [&](std::size_t a, std::size_t b) { return grown_[a].post < grown_[b].post; });
                auto chosen = draw(own, static_cast<std::size_t>(std::min<std::int64_t>(surplus, static_cast<std::int64_t>(own.size()))), rng);
                // Positions shift as synapses go: remove from the back.
                std::sort(chosen.begin(), chosen.end(), std::greater<>());
                for (const auto k : chosen) remove(k, t, records);
            }
        }
        // Vacant elements, each neuron repeated by its count, paired at random.
        std::vector<std::uint32_t> pre, post;
        for (std::uint32_t m = 0; m < count; ++m) {
            for (auto v = vacant(m, pairing.pre); v > 0; --v) pre.push_back(m);
            for (auto v = vacant(m, pairing.post); v > 0; --v) post.push_back(m);
        }
        auto rng = stream(structure_.seed, t, p, pair_up);
        if (pre.size() > post.size())
            pre = draw(std::move(pre), post.size(), rng);
        else
            post = draw(std::move(post), pre.size(), rng);
        for (std::size_t i = 0; i < pre.size(); ++i) create(pre[i], post[i], p, t, records);
    }
    // NEST's decay of vacant elements: each loses the fraction tau_vacant of its vacant ones.
    for (std::uint32_t m = 0; m < count; ++m) {
        const auto& group = structure_.groups[members_[m].group];
        for (std::uint32_t e = 0; e < group.kinds.size(); ++e) {
            const auto v = vacant(m, group.kinds[e]);
            if (v > 0) z_[members_[m].elements + e] -= static_cast<double>(v) * group.curves[e].tau_vacant;
        }
    }
    std::vector<double> ca_sum(records.size(), 0);
    for (const auto& m : members_) ca_sum[m.group] += m.ca;
    for (const auto& g : grown_) ++records[members_[g.post].group].connections;
    for (auto& r : records) r.mean_ca = ca_sum[r.group] / std::max<std::uint32_t>(1, structure_.groups[r.group].size);
    records_.insert(records_.end(), records.begin(), records.end());
    update_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

void structural_plasticity::remove(std::size_t position, tick_t t, std::vector<structure_record>& records) {
    const auto g = grown_[position];
    const auto& pairing = structure_.pairings[g.pairing];
    --*connected(g.pre, pairing.pre);
    --*connected(g.post, pairing.post);
    ++records[members_[g.post].group].deleted;
    grown_.erase(grown_.begin() + static_cast<std::ptrdiff_t>(position));
    --live_;
    const auto slot = members_[g.post].slot;
    if (slot < local_)
        for (auto& r : rows_[slot])
            if (r.seq == g.seq) r.dies = t;
    rows_changed_ = true;
}

void structural_plasticity::create(std::uint32_t pre, std::uint32_t post, std::uint32_t pairing, tick_t t,
                                   std::vector<structure_record>& records) {
    const auto& spec = structure_.pairings[pairing];
    ++*connected(pre, spec.pre);
    ++*connected(post, spec.post);
    ++records[members_[post].group].created;
    const auto seq = next_seq_++;
    grown_.push_back({pre, post, pairing, seq});
    ++live_;
    const auto slot = members_[post].slot;
    if (slot >= local_) return;
    rows_[slot].push_back({members_[pre].slot, spec.weight, spec.delay, t, never, seq, pairing});
    rows_changed_ = true;
}

std::vector<structure_record> structural_plasticity::take_records() {
    std::vector<structure_record> out;
    out.swap(records_);
    return out;
}

double structural_plasticity::calcium(global_index neuron) const {
    const auto at = std::lower_bound(members_.begin(), members_.end(), neuron, [](const member& m, global_index i) { return m.index < i; });
    if (at == members_.end() || at->index != neuron) throw usage_error("neuron " + std::to_string(neuron) + " has no synaptic elements");
    return at->ca;
}

std::int64_t structural_plasticity::member_position(global_index neuron) const {
    const auto at = std::lower_bound(members_.begin(), members_.end(), neuron, [](const member& m, global_index i) { return m.index < i; });
    return at == members_.end() || at->index != neuron ? -1 : at - members_.begin();
}

std::vector<double> structural_plasticity::capture(global_index neuron) const {
    const auto position = member_position(neuron);
    if (position < 0) throw usage_error("neuron " + std::to_string(neuron) + " has no synaptic elements");
    const auto& m = members_[static_cast<std::size_t>(position)];
    if (m.slot >= local_) throw usage_error("neuron " + std::to_string(neuron) + " is not local: its grown synapses are another node's");
    const auto kinds = structure_.groups[m.group].kinds.size();
    const auto& row = rows_[m.slot];
    std::vector<double> out;
    out.reserve(4 + 2 * kinds + 5 * row.size());
    out.push_back(m.ca);
    out.push_back(static_cast<double>(m.ca_tick));
    out.push_back(static_cast<double>(next_seq_));
    for (std::size_t e = 0; e < kinds; ++e) out.push_back(z_[m.elements + e]);
    for (std::size_t e = 0; e < kinds; ++e) out.push_back(connected_[m.elements + e]);
    out.push_back(static_cast<double>(row.size()));
    for (const auto& r : row) {
        out.push_back(static_cast<double>(members_[static_cast<std::size_t>(member_of_slot_[r.slot])].index));
        out.push_back(r.pairing);
        out.push_back(static_cast<double>(r.seq));
        out.push_back(static_cast<double>(r.born));
        out.push_back(r.dies == never ? -1.0 : static_cast<double>(r.dies));
    }
    return out;
}

namespace {
// A whole number in [low, high] (exact in a double up to 2^53), or why not.
bool whole(double v, double low, double high) { return v >= low && v <= high && v == std::floor(v); }
constexpr double most_exact = 9007199254740992.0;  // 2^53
}  // namespace

structural_plasticity::restore_state structural_plasticity::prepare(const std::vector<const std::vector<double>*>& growth, tick_t next) const {
    if (growth.size() != members_.size()) throw usage_error("restore: growth for " + std::to_string(growth.size()) + " of " +
                                                            std::to_string(members_.size()) + " neurons with synaptic elements");
    restore_state out;
    out.ca.resize(members_.size());
    out.ca_tick.resize(members_.size());
    out.z = z_;
    out.connected.assign(connected_.size(), 0);
    out.rows.resize(local_);
    std::vector<std::int32_t> implied(connected_.size(), 0);
    bool seq_known = false;
    for (std::uint32_t p = 0; p < members_.size(); ++p) {
        const auto& m = members_[p];
        const auto fail = [&](const std::string& why) {
            return usage_error("restore: the growth of neuron " + std::to_string(m.index) + " " + why);
        };
        if (!growth[p]) throw fail("is missing (it has synaptic elements)");
        const auto& g = *growth[p];
        const auto kinds = structure_.groups[m.group].kinds.size();
        const std::size_t head = 3 + 2 * kinds + 1;
        if (g.size() < head || !whole(g[head - 1], 0, most_exact) ||
            g.size() != head + 5 * static_cast<std::size_t>(g[head - 1]))
            throw fail("holds " + std::to_string(g.size()) + " values, which do not fit its " + std::to_string(kinds) +
                       " element kinds and the synapses it counts");
        if (!(std::isfinite(g[0]) && g[0] >= 0)) throw fail("has a calcium that is not a finite number >= 0");
        if (!whole(g[1], 0, static_cast<double>(next))) throw fail("has a calcium tick that is not a whole number in 0..the restored tick");
        if (!whole(g[2], 0, most_exact)) throw fail("has a synapse count (next_seq) that is not a whole number >= 0");
        const auto seq = static_cast<std::uint64_t>(g[2]);
        if (seq_known && seq != out.next_seq) throw fail("counts " + std::to_string(seq) + " synapses made, others " + std::to_string(out.next_seq));
        out.next_seq = seq;
        seq_known = true;
        out.ca[p] = g[0];
        out.ca_tick[p] = static_cast<tick_t>(g[1]);
        for (std::size_t e = 0; e < kinds; ++e) {
            const double z = g[3 + e], c = g[3 + kinds + e];
            if (!(std::isfinite(z) && z >= 0)) throw fail("has an element count z that is not a finite number >= 0");
            if (!whole(c, 0, std::numeric_limits<std::int32_t>::max())) throw fail("has a connected count that is not a whole number >= 0");
            out.z[m.elements + e] = z;
            out.connected[m.elements + e] = static_cast<std::int32_t>(c);
        }
    }
    // The synapses: the live ones from every member, the rows of the local ones.
    for (std::uint32_t p = 0; p < members_.size(); ++p) {
        const auto& m = members_[p];
        const auto fail = [&](const std::string& why) {
            return usage_error("restore: the growth of neuron " + std::to_string(m.index) + " " + why);
        };
        const auto& g = *growth[p];
        const auto kinds = structure_.groups[m.group].kinds.size();
        const std::size_t n = static_cast<std::size_t>(g[3 + 2 * kinds]);
        for (std::size_t k = 0; k < n; ++k) {
            const double* v = g.data() + 4 + 2 * kinds + 5 * k;
            const auto source = whole(v[0], 0, most_exact) ? member_position(static_cast<global_index>(v[0])) : -1;
            if (source < 0) throw fail("names a source of a grown synapse that has no synaptic elements");
            if (!whole(v[1], 0, static_cast<double>(structure_.pairings.size()) - 1)) throw fail("names a pairing out of range");
            const auto pairing = static_cast<std::uint32_t>(v[1]);
            if (!whole(v[2], 0, static_cast<double>(out.next_seq) - 1)) throw fail("has a grown synapse numbered beyond the synapses made");
            if (!whole(v[3], 0, static_cast<double>(next))) throw fail("has a grown synapse born after the restored tick");
            if (!(v[4] == -1 || whole(v[4], v[3], static_cast<double>(next)))) throw fail("has a grown synapse that dies before it is born or after the restored tick");
            const auto& spec = structure_.pairings[pairing];
            const auto pre = static_cast<std::uint32_t>(source);
            if (position_of_kind_[members_[pre].group][spec.pre] < 0 || position_of_kind_[m.group][spec.post] < 0)
                throw fail("has a grown synapse whose pairing its ends' elements do not allow");
            const auto seq = static_cast<std::uint64_t>(v[2]);
            const tick_t born = static_cast<tick_t>(v[3]), dies = v[4] == -1 ? never : static_cast<tick_t>(v[4]);
            if (dies == never) {
                out.grown_synapses.push_back({pre, p, pairing, seq});
                ++implied[members_[pre].elements + static_cast<std::uint32_t>(position_of_kind_[members_[pre].group][spec.pre])];
                ++implied[m.elements + static_cast<std::uint32_t>(position_of_kind_[m.group][spec.post])];
            }
            if (m.slot < local_) out.rows[m.slot].push_back({members_[pre].slot, spec.weight, spec.delay, born, dies, seq, pairing});
        }
    }
    for (std::uint32_t p = 0; p < members_.size(); ++p) {
        const auto& m = members_[p];
        for (std::size_t e = 0; e < structure_.groups[m.group].kinds.size(); ++e)
            if (out.connected[m.elements + e] != implied[m.elements + e])
                throw usage_error("restore: the growth of neuron " + std::to_string(m.index) + " counts " +
                                  std::to_string(out.connected[m.elements + e]) + " connected '" +
                                  structure_.element_names[structure_.groups[m.group].kinds[e]] + "' elements; its live grown synapses make " +
                                  std::to_string(implied[m.elements + e]));
    }
    std::sort(out.grown_synapses.begin(), out.grown_synapses.end(), [](const grown& a, const grown& b) { return a.seq < b.seq; });
    for (std::size_t k = 1; k < out.grown_synapses.size(); ++k)
        if (out.grown_synapses[k].seq == out.grown_synapses[k - 1].seq)
            throw usage_error("restore: two live grown synapses carry number " + std::to_string(out.grown_synapses[k].seq));
    return out;
}

void structural_plasticity::restore(restore_state&& state) {
    for (std::size_t p = 0; p < members_.size(); ++p) {
        members_[p].ca = state.ca[p];
        members_[p].ca_tick = state.ca_tick[p];
    }
    z_ = std::move(state.z);
    connected_ = std::move(state.connected);
    grown_ = std::move(state.grown_synapses);
    live_ = grown_.size();
    next_seq_ = state.next_seq;
    rows_ = std::move(state.rows);
    rows_changed_ = true;
    records_.clear();
}

}  // namespace dnnc::sim
