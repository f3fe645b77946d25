#include "plasticity.hpp"

#include "dnnc/core/error.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace dnnc::sim {

void plasticity::spike_log::add(tick_t tick, double dt, tick_t horizon) {
    const auto [last, value] = spikes.empty() ? before : spikes.back();
    const double elapsed = static_cast<double>(last < 0 ? -tick : last - tick) * dt;  // the first: from time 0, with value 0
    const double decay = tau <= 0 ? 0.0 : by_inverse ? std::exp(elapsed * (1.0 / tau)) : std::exp(elapsed / tau);
    spikes.emplace_back(tick, value * decay + 1.0);
    while (spikes.front().first < tick - horizon) {
        before = spikes.front();
        spikes.pop_front();
    }
}

std::pair<tick_t, double> plasticity::spike_log::last_before(tick_t tick) const {
    for (auto it = spikes.rbegin(); it != spikes.rend(); ++it)
        if (it->first < tick) return *it;
    return before.first < tick ? before : std::pair<tick_t, double>{-1, 0.0};
}

double plasticity::spike_log::value_before(tick_t tick, double dt) const {
    const auto [last, value] = last_before(tick);
    if (last < 0) return 0.0;
    const double elapsed = static_cast<double>(last - tick) * dt;
    return value * (by_inverse ? std::exp(elapsed * (1.0 / tau)) : std::exp(elapsed / tau));
}

double plasticity::trace_before(std::int32_t log, tick_t tick) {
    const auto l = static_cast<std::size_t>(log);
    if (asked_[l] != tick) {
        asked_[l] = tick;
        answer_[l] = logs_[l].value_before(tick, dt_);
    }
    return answer_[l];
}

std::uint32_t plasticity::log_of(std::vector<std::int32_t>& index, std::uint32_t slot, double tau, bool by_inverse) {
    if (index[slot] < 0) {
        index[slot] = static_cast<std::int32_t>(logs_.size());
        logs_.push_back({tau, by_inverse, {}, {-1, 0.0}});
        if (logs_of_slot_[slot].empty()) (slot < slots_.local() ? logged_local_ : logged_remote_).push_back(slot);
        logs_of_slot_[slot].push_back(static_cast<std::uint32_t>(index[slot]));
    }
    return static_cast<std::uint32_t>(index[slot]);
}

plasticity::plasticity(synapse_store& store, const fan_out_index& fan_out, const slot_layout& slots,
                       const std::vector<neuron_spec>& neurons, double dt, tick_t remote_delay, tick_t history)
    : store_(store), fan_out_(fan_out), slots_(slots), dt_(dt), remote_delay_(remote_delay) {
    const auto& models = store.models();
    rules_.resize(models.size());
    for (std::size_t m = 0; m < models.size(); ++m)
        if (models[m].info->plastic) {
            rules_[m].rule = make_synapse_rule(models[m]);
            // Snapshots are checked against the catalogue's count (protocol::states_of).
            if (rules_[m].rule->state_size() * sizeof(float) != models[m].info->state_bytes)
                throw std::logic_error(std::string("synapse rule ") + models[m].info->name + ": state size differs from the catalogue's");
        }
    if (std::none_of(rules_.begin(), rules_.end(), [](const rule_entry& r) { return r.rule != nullptr; })) return;
    if (!fan_out.built())
        throw usage_error("engine: this node's plastic synapses need the fan-out index, which its share is too large for");
    // The rules' synapses, run by run in the store's order.
    const std::size_t local = slots.local();
    std::vector<std::vector<float>> weights(models.size());
    is_plastic_delay_.assign(65536, false);
    is_source_.assign(slots.size(), false);
    is_target_.assign(local, false);
    logs_of_slot_.assign(slots.size(), {});
    target_log_.assign(local, -1);
    for (std::size_t m = 0; m < rules_.size(); ++m) {
        if (!rules_[m].rule) continue;
        const double tau = rules_[m].rule->source_trace_tau();
        const auto kind = std::find(source_taus_.begin(), source_taus_.end(), tau);
        rules_[m].source_log_kind = static_cast<std::uint32_t>(kind - source_taus_.begin());
        if (kind == source_taus_.end()) {
            source_taus_.push_back(tau);
            source_log_.emplace_back(slots.size(), -1);
        }
    }
    for (std::size_t k = 0; k < local; ++k) {
        auto s = store.row_begin(k);
        for (auto r = store.run_begin(k); r < store.run_begin(k + 1); ++r) {
            const auto end = store.row_begin(k) + store.run(r).end;
            const auto& c = store.classes()[store.run(r).cls];
            if (c.varies & synapse_store::weight_changes) {
                auto& entry = rules_[c.model];
                entry.runs.emplace_back(s, weights[c.model].size());
                const double tau = entry.rule->source_trace_tau();
                for (; s < end; ++s) {
                    weights[c.model].push_back(store.own_weight(s));
                    is_plastic_delay_[store.own_delay(s)] = true;
                    is_source_[store.source(s)] = true;
                    log_of(source_log_[entry.source_log_kind], store.source(s), tau, false);
                }
                // A rule that reads no source trace takes no target spikes.
                if (entry.rule->reads_target_trace() || tau > 0) {
                    is_target_[k] = true;
                    log_of(target_log_, static_cast<std::uint32_t>(k), neurons[k].params.tau_minus, true);
                }
            }
            s = end;
        }
    }
    for (std::size_t m = 1; m < rules_.size(); ++m) {
        if (!rules_[m].rule) continue;
        const auto [first, count] = store.sources_of(m);
        for (std::size_t k = 0; k < local; ++k)
            if (neurons[k].index >= first && static_cast<std::uint64_t>(neurons[k].index - first) < count)
                log_of(source_log_[rules_[m].source_log_kind], static_cast<std::uint32_t>(k), rules_[m].rule->source_trace_tau(), false);
    }
    for (std::size_t m = 0; m < rules_.size(); ++m) {
        if (rules_[m].rule) rules_[m].rule->add_synapses(weights[m]);
        synapses_ += weights[m].size();
    }
    for (std::size_t d = 0; d < is_plastic_delay_.size(); ++d)
        if (is_plastic_delay_[d]) plastic_delays_.push_back(static_cast<std::uint16_t>(d));
    horizon_ = 2 * std::max<tick_t>(history, 1) + 1;
    asked_.assign(logs_.size(), -1);
    answer_.assign(logs_.size(), 0.0);
    spiked_.assign(static_cast<std::size_t>(horizon_) + 1, {});
}

std::size_t plasticity::index_in_rule(const rule_entry& r, std::uint64_t s) const {
    if (!r.rule->has_synapse_state()) return 0;
    const auto it = std::upper_bound(r.runs.begin(), r.runs.end(), s, [](std::uint64_t x, const auto& run) { return x < run.first; });
    return static_cast<std::size_t>(std::prev(it)->second + (s - std::prev(it)->first));
}

void plasticity::update(tick_t t, const history_ring& history) {
    if (empty()) return;
    const auto ring = static_cast<tick_t>(spiked_.size());
    // Local spikes of tick t - 1, remote ones of tick t - remote_delay: both complete now.
    auto take = [&](tick_t at, const std::vector<std::uint32_t>& logged) {
        if (at < 0) return;
        const float* const row = history.row(at);
        auto& spiked = spiked_[static_cast<std::size_t>(at % ring)];
        for (const auto slot : logged) {
            if (row[slot] == 0.0f) continue;
            for (const auto log : logs_of_slot_[slot]) {
                logs_[log].add(at, dt_, horizon_);
                asked_[log] = -1;  // an answer given before may now have a later spike before it
            }
            spiked.push_back(slot);
        }
    };
    if (t >= 1) spiked_[static_cast<std::size_t>((t - 1) % ring)].clear();
    take(t - 1, logged_local_);
    take(t - remote_delay_, logged_remote_);
    // At one synapse time a target's spike comes before a source's.
    target_events(t);
    source_events(t);
}

void plasticity::target_events(tick_t t) {
    const auto ring = static_cast<tick_t>(spiked_.size());
    for (const auto d : plastic_delays_) {
        const tick_t p = t - 2 * tick_t{d};
        if (p < 0) break;
        for (const auto k : spiked_[static_cast<std::size_t>(p % ring)]) {
            if (k >= is_target_.size() || !is_target_[k]) continue;
            auto s = store_.row_begin(k);
            for (auto r = store_.run_begin(k); r < store_.run_begin(k + 1); ++r) {
                const auto end = store_.row_begin(k) + store_.run(r).end;
                const auto& c = store_.classes()[store_.run(r).cls];
                const auto& entry = rules_[c.model];
                if (!(c.varies & synapse_store::weight_changes) || entry.rule->source_trace_tau() <= 0) {
                    s = end;
                    continue;
                }
                const auto& sources = source_log_[entry.source_log_kind];
                for (; s < end; ++s) {
                    if (store_.own_delay(s) != d) continue;
                    const double trace = trace_before(sources[store_.source(s)], t - d);
                    entry.rule->target_spike(index_in_rule(entry, s), store_.own_weight(s), trace);
                }
            }
        }
    }
}

void plasticity::source_events(tick_t t) {
    const auto ring = static_cast<tick_t>(spiked_.size());
    const std::uint32_t* const fan = fan_out_.data();
    const auto& classes = store_.classes();
    for (const auto d : plastic_delays_) {
        const tick_t at = t - d;
        if (at < 0) break;
        for (const auto j : spiked_[static_cast<std::size_t>(at % ring)]) {
            if (!is_source_[j] || fan_out_.begin(j) == fan_out_.end(j)) continue;
            const std::uint32_t* const block = fan + fan_out_.begin(j);
            const std::uint32_t segments_end = 1 + 3 * block[0];
            std::uint32_t o = segments_end;
            for (std::uint32_t g = 1; g < segments_end; g += 3) {
                const auto& c = classes[block[g]];
                const std::uint32_t e = block[g + 2];
                if (c.varies & synapse_store::weight_changes) {
                    auto& entry = rules_[c.model];
                    const auto& source = logs_[static_cast<std::size_t>(source_log_[entry.source_log_kind][j])];
                    const tick_t previous = source.last_before(at).first;
                    const double since = static_cast<double>(at - std::max<tick_t>(previous, 0)) * dt_;
                    const auto [first, last] = fan_out_.delay_range(o, block[g + 1], d);
                    for (auto w = first; w < last; w += 3) {
                        const std::uint64_t s = block[w];
                        const auto k = block[w + 1] >> 3;
                        const double trace = entry.rule->reads_target_trace() ? trace_before(target_log_[k], at - d) : 0.0;
                        entry.rule->source_spike(index_in_rule(entry, s), store_.own_weight(s), trace, since);
                    }
                }
                o = e;
            }
        }
    }
}

float plasticity::weight(std::uint8_t cls, std::uint64_t s) const {
    const auto& entry = rules_[cls];
    return entry.rule ? entry.rule->weight(index_in_rule(entry, s), store_.own_weight(s)) : store_.own_weight(s);
}

void plasticity::capture(std::uint32_t k, std::vector<protocol::spike_trace>& traces, std::vector<float>& synapses) const {
    for (const auto log : logs_of_slot_[k]) {
        const auto& l = logs_[log];
        protocol::spike_trace t{l.tau, l.by_inverse, {}, {}};
        if (l.before.first >= 0) {
            t.ticks.push_back(l.before.first);
            t.values.push_back(l.before.second);
        }
        for (const auto& [tick, value] : l.spikes) {
            t.ticks.push_back(tick);
            t.values.push_back(value);
        }
        traces.push_back(std::move(t));
    }
    each_plastic_synapse(k, [&](std::uint64_t s, const rule_entry& entry) {
        synapses.push_back(store_.own_weight(s));
        const auto first = synapses.size();
        synapses.resize(first + entry.rule->state_size());
        if (entry.rule->has_synapse_state()) entry.rule->save_state(index_in_rule(entry, s), synapses.data() + first);
    });
}

void plasticity::restore(std::uint32_t slot, const neuron_state& state, tick_t next) {
    const std::string who = "restore: the state of neuron " + std::to_string(state.index);
    const bool local = slot < slots_.local();
    // The spikes update() has taken by tick next: local ones through next - 2, remote ones
    // through next - 1 - remote_delay.
    const tick_t taken = local ? next - 2 : next - 1 - remote_delay_;
    for (const auto log : logs_of_slot_[slot]) {
        auto& l = logs_[log];
        const auto t = std::find_if(state.traces.begin(), state.traces.end(),
                                    [&](const protocol::spike_trace& x) { return x.tau == l.tau && x.post == l.by_inverse; });
        if (t == state.traces.end())
            throw usage_error(who + " lacks its " + (l.by_inverse ? std::string("post-synaptic trace") : "trace of tau " + std::to_string(l.tau) + " ms") +
                              " (the snapshot's synapse state does not match its network)");
        l.spikes.clear();
        l.before = {-1, 0.0};
        for (std::size_t i = 0; i < t->ticks.size() && i < t->values.size() && t->ticks[i] <= taken; ++i)
            l.spikes.emplace_back(t->ticks[i], t->values[i]);
    }
    if (!local) return;
    std::size_t at = 0;
    bool fits = true;
    each_plastic_synapse(slot, [&](std::uint64_t s, const rule_entry& entry) {
        const std::size_t values = 1 + entry.rule->state_size();
        if (!fits || at + values > state.synapses.size()) {
            fits = false;
            return;
        }
        store_.own_weight(s) = state.synapses[at];
        if (entry.rule->has_synapse_state()) entry.rule->load_state(index_in_rule(entry, s), state.synapses.data() + at + 1);
        at += values;
    });
    if (!fits || at != state.synapses.size())
        throw usage_error(who + " holds " + std::to_string(state.synapses.size()) +
                          " synapse values, which do not fit its plastic synapses (the snapshot's synapse state does not match its network)");
}

void plasticity::restored(tick_t next) {
    const auto ring = static_cast<tick_t>(spiked_.size());
    for (auto& tick : spiked_) tick.clear();
    std::fill(asked_.begin(), asked_.end(), tick_t{-1});
    // Every log of a slot took the same spikes: its first one lists them. update(next) clears
    // and fills the row of tick next - 1; the rows of the ticks before hold what they took.
    for (std::uint32_t slot = 0; slot < logs_of_slot_.size(); ++slot) {
        if (logs_of_slot_[slot].empty()) continue;
        for (const auto& [tick, value] : logs_[logs_of_slot_[slot].front()].spikes)
            if (tick > next - 1 - ring) spiked_[static_cast<std::size_t>(tick % ring)].push_back(slot);
    }
}

}  // namespace dnnc::sim
