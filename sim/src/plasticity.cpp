#include "plasticity.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/model/resolve.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>
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

double plasticity::spike_log::decay(tick_t back, double dt) const {
    const double elapsed = static_cast<double>(back) * dt;
    return by_inverse ? std::exp(elapsed * (1.0 / tau)) : std::exp(elapsed / tau);
}

double plasticity::spike_log::value_before(tick_t tick, double dt) const {
    const auto [last, value] = last_before(tick);
    if (last < 0) return 0.0;
    return value * decay(last - tick, dt);
}

void plasticity::refresh_head(std::size_t log) {
    const auto& l = logs_[log];
    auto& h = heads_[log];
    const auto n = l.spikes.size();
    const std::pair<tick_t, double> unknown{std::numeric_limits<tick_t>::max(), 0.0};
    const auto latest = n > 0 ? l.spikes[n - 1] : l.before;
    // Before `before` the log knows nothing, unless `before` is none itself.
    const auto prior = n > 1 ? l.spikes[n - 2] : n == 1 ? l.before : l.before.first < 0 ? l.before : unknown;
    h.tick[0] = latest.first;
    h.value[0] = latest.second;
    h.tick[1] = prior.first;
    h.value[1] = prior.second;
}

tick_t plasticity::last_tick_before(std::int32_t log, tick_t tick) const {
    const auto l = static_cast<std::size_t>(log);
    const auto& h = heads_[l];
    if (h.tick[0] < tick) return h.tick[0];
    if (h.tick[1] < tick) return h.tick[1];
    return logs_[l].last_before(tick).first;
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

plasticity::plasticity(synapse_store& store, fan_out_index& fan_out, const slot_layout& slots,
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
    is_source_.assign(slots.size(), false);
    is_target_.assign(local, false);
    logs_of_slot_.assign(slots.size(), {});
    target_log_.assign(local, -1);
    for (std::size_t m = 0; m < rules_.size(); ++m) {
        if (!rules_[m].rule) continue;
        rules_[m].reads_target_trace = rules_[m].rule->reads_target_trace();
        rules_[m].has_state = rules_[m].rule->has_synapse_state();
        const double tau = rules_[m].rule->source_trace_tau();
        const auto kind = std::find(source_taus_.begin(), source_taus_.end(), tau);
        rules_[m].source_log_kind = static_cast<std::uint32_t>(kind - source_taus_.begin());
        if (kind == source_taus_.end()) {
            source_taus_.push_back(tau);
            source_log_.emplace_back(slots.size(), -1);
        }
    }
    target_runs_begin_.assign(local + 1, 0);
    for (std::size_t k = 0; k < local; ++k) {
        target_runs_begin_[k] = target_runs_.size();
        auto s = store.row_begin(k);
        for (auto r = store.run_begin(k); r < store.run_begin(k + 1); ++r) {
            const auto end = store.row_begin(k) + store.run(r).end;
            const auto& c = store.classes()[store.run(r).cls];
            if (c.varies & synapse_store::weight_changes) {
                auto& entry = rules_[c.model];
                entry.runs.emplace_back(s, weights[c.model].size());
                const double tau = entry.rule->source_trace_tau();
                if (tau > 0 && s < end) target_runs_.push_back({s, end, weights[c.model].size(), c.model, 0});
                for (; s < end; ++s) {
                    weights[c.model].push_back(store.own_weight(s));
                    is_source_[store.source(s)] = true;
                    log_of(source_log_[entry.source_log_kind], store.source(s), tau, false);
                }
                if (logs_targets(*entry.rule)) {
                    is_target_[k] = true;
                    log_of(target_log_, static_cast<std::uint32_t>(k), neurons[k].params.tau_minus, true);
                }
            }
            s = end;
        }
    }
    target_runs_begin_[local] = target_runs_.size();
    for (std::size_t m = 1; m < rules_.size(); ++m) {
        if (!rules_[m].rule) continue;
        const auto& sources = store.sources_of(m);
        for (std::size_t k = 0; k < local; ++k)
            if (model::holds(sources, static_cast<std::uint64_t>(neurons[k].index)))
                log_of(source_log_[rules_[m].source_log_kind], static_cast<std::uint32_t>(k), rules_[m].rule->source_trace_tau(), false);
    }
    for (std::size_t m = 0; m < rules_.size(); ++m) {
        if (rules_[m].rule) rules_[m].rule->add_synapses(weights[m]);
        rules_[m].synapses = weights[m].size();
        synapses_ += weights[m].size();
    }
    time_runs();
    horizon_ = 2 * std::max<tick_t>(history, 1) + 1;
    // A decay table per kind of log whose trace is read.
    std::vector<std::pair<double, bool>> kinds;
    heads_.assign(logs_.size(), {});
    for (std::size_t l = 0; l < logs_.size(); ++l) {
        const auto& log = logs_[l];
        heads_[l].decay = no_table;
        if (log.tau > 0) {
            const auto kind = std::find(kinds.begin(), kinds.end(), std::pair{log.tau, log.by_inverse});
            heads_[l].decay = static_cast<std::uint32_t>(kind - kinds.begin());
            if (kind == kinds.end()) {
                kinds.emplace_back(log.tau, log.by_inverse);
                for (tick_t n = 0; n < decay_ticks; ++n) decays_.push_back(log.decay(-n, dt));
            }
        }
    }
    spiked_.assign(static_cast<std::size_t>(horizon_) + 1, {});
    due_.assign(spiked_.size(), {});
    count_of_delay_.assign(std::size_t{longest_plastic_delay()} + 1, 0);
    rebuild_derived(0);
}

void plasticity::time_runs() {
    std::vector<bool> used(65536, false);
    for (std::size_t k = 0; k < is_target_.size(); ++k)
        each_plastic_synapse(k, [&](std::uint64_t s, const rule_entry&) { used[store_.own_delay(s)] = true; });
    plastic_delays_.clear();
    for (std::size_t d = 0; d < used.size(); ++d)
        if (used[d]) plastic_delays_.push_back(static_cast<std::uint16_t>(d));
    for (auto& run : target_runs_) {
        run.delay = store_.own_delay(run.first);
        for (auto s = run.first; s < run.end; ++s)
            if (store_.own_delay(s) != run.delay) run.delay = 0;
    }
}

void plasticity::redelay(const synapse_store& before, fan_out_index before_fan_out, tick_t from, tick_t remote_delay) {
    if (empty()) return;
    remote_delay_ = std::min(remote_delay_, remote_delay);
    // A second change before tick `from` is computed keeps the delays spikes were sent with.
    if (!before_ || before_->from != from) {
        std::vector<std::uint16_t> run_delay;
        for (const auto& run : target_runs_) run_delay.push_back(run.delay);
        before_ = old_delays{&before, std::move(before_fan_out), plastic_delays_, std::move(run_delay), from, 0};
    }
    sent_from_ = from;
    time_runs();
    // The last events of the old delays: a target's spike of tick from - 1 at from - 1 + 2d.
    const tick_t longest = before_->plastic_delays.empty() ? 0 : before_->plastic_delays.back();
    before_->until = from + 2 * longest;
    count_of_delay_.assign(std::size_t{std::max<std::uint16_t>(static_cast<std::uint16_t>(longest), longest_plastic_delay())} + 1, 0);
}

void plasticity::rebuild_derived(tick_t next) {
    for (std::size_t l = 0; l < logs_.size(); ++l) refresh_head(l);
    for (auto& due : due_) {
        due.batches.clear();
        due.synapses.clear();
    }
    // A local target's spike of tick p (in spiked_ up to next - 2: update(next) takes those
    // of next - 1) reaches its synapses of delay d at tick p + 2d.
    const auto ring = static_cast<tick_t>(spiked_.size());
    for (tick_t p = std::max<tick_t>(0, next - 2 * tick_t{longest_plastic_delay()}); p <= next - 2; ++p)
        for (const auto k : spiked_[static_cast<std::size_t>(p % ring)])
            if (k < is_target_.size() && is_target_[k]) schedule_target_spike(k, p, next);
}

std::size_t plasticity::index_in_rule(const rule_entry& r, std::uint64_t s) const {
    if (!r.has_state) return 0;
    const auto it = std::upper_bound(r.runs.begin(), r.runs.end(), s, [](std::uint64_t x, const auto& run) { return x < run.first; });
    return static_cast<std::size_t>(std::prev(it)->second + (s - std::prev(it)->first));
}

void plasticity::update(tick_t t, const history_ring& history) {
    if (empty()) return;
    if (before_ && t >= before_->until) before_.reset();
    tables_used_ = 0;
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
                refresh_head(log);
            }
            spiked.push_back(slot);
            if (slot < is_target_.size() && is_target_[slot]) schedule_target_spike(slot, at, at + 1);
        }
    };
    if (t >= 1) spiked_[static_cast<std::size_t>((t - 1) % ring)].clear();
    take(t - 1, logged_local_);
    // Through t - remote_delay: all of them once a redelay shortened it.
    for (tick_t at = remote_taken_ + 1; at <= t - remote_delay_; ++at) take(at, logged_remote_);
    remote_taken_ = std::max(remote_taken_, t - remote_delay_);
    // At one synapse time a target's spike comes before a source's.
    target_events(t);
    source_events(t);
}

template <class F>
void plasticity::for_each_batch(std::size_t n, std::uint64_t synapses, F&& f) {
    // Batches touch disjoint synapses (a synapse has one delay, so it takes at most one
    // target and one source event a tick; after a redelay, the events of spikes sent before
    // it are taken in batches of their own, first) and read traces only: any order gives the
    // same bits.
    constexpr std::uint64_t parallel_synapses = 8192;
    if (synapses < parallel_synapses || n < 2) {
        auto& events = events_.local();
        for (std::size_t i = 0; i < n; ++i) f(i, events);
        return;
    }
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1), [&](const tbb::blocked_range<std::size_t>& r) {
        auto& events = events_.local();
        for (auto i = r.begin(); i < r.end(); ++i) f(i, events);
    });
}

void plasticity::schedule_target_spike(std::uint32_t k, tick_t p, tick_t from) {
    const auto ring = static_cast<tick_t>(due_.size());
    auto due = [&](std::uint16_t d) -> due_batches& { return due_[static_cast<std::size_t>((p + 2 * tick_t{d}) % ring)]; };
    auto wanted = [&](std::uint16_t d) { return p + 2 * tick_t{d} >= from; };
    const synapse_store& timing = timing_of(p);
    const bool sent_before = &timing != &store_;
    for (auto r = target_runs_begin_[k]; r < target_runs_begin_[k + 1]; ++r) {
        const auto& run = target_runs_[r];
        const auto index = static_cast<std::uint32_t>(r);
        const std::uint16_t delay = sent_before ? before_->run_delay[r] : run.delay;
        if (delay != 0) {
            if (wanted(delay)) due(delay).batches.push_back({index, delay, 0, 0, nullptr});
            continue;
        }
        // By delay: count, place each delay's batch, then fill them in row order.
        for (auto s = run.first; s < run.end; ++s)
            if (wanted(timing.own_delay(s))) ++count_of_delay_[timing.own_delay(s)];
        for (auto s = run.first; s < run.end; ++s) {
            const auto d = timing.own_delay(s);
            auto& count = count_of_delay_[d];
            if (count == 0) continue;
            auto& to = due(d);
            to.batches.push_back({index, d, static_cast<std::uint32_t>(to.synapses.size()), count, nullptr});
            to.synapses.resize(to.synapses.size() + count);
            count = 0;
        }
        for (auto s = run.first; s < run.end; ++s) {
            if (!wanted(timing.own_delay(s))) continue;
            auto& to = due(timing.own_delay(s));
            const auto& batch = to.batches.back();
            to.synapses[batch.first + count_of_delay_[batch.delay]++] = static_cast<std::uint32_t>(s);
        }
        for (auto s = run.first; s < run.end; ++s) count_of_delay_[timing.own_delay(s)] = 0;
    }
}

const double* plasticity::trace_table_of(const std::vector<std::int32_t>& logs, tick_t at, std::uint64_t reads) {
    if (2 * reads < logs.size()) return nullptr;
    for (std::size_t i = 0; i < tables_used_; ++i)
        if (tables_[i].logs == &logs && tables_[i].at == at) return tables_[i].values.data();
    if (tables_used_ == tables_.size()) tables_.emplace_back();
    auto& table = tables_[tables_used_++];
    table.logs = &logs;
    table.at = at;
    table.values.resize(logs.size());
    auto fill = [&](std::size_t begin, std::size_t end) {
        for (auto i = begin; i < end; ++i) table.values[i] = logs[i] < 0 ? 0.0 : trace_before(logs[i], at);
    };
    constexpr std::size_t grain = 4096;
    if (logs.size() < 2 * grain)
        fill(0, logs.size());
    else
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, logs.size(), grain),
                          [&](const tbb::blocked_range<std::size_t>& r) { fill(r.begin(), r.end()); });
    return table.values.data();
}

void plasticity::target_events(tick_t t) {
    auto& due = due_[static_cast<std::size_t>(t % static_cast<tick_t>(due_.size()))];
    auto size_of = [&](const target_batch& b) { return b.size != 0 ? b.size : target_runs_[b.run].end - target_runs_[b.run].first; };
    // The batches read the sources' traces of a kind at t - delay: a table for each pair
    // read often enough.
    auto group_of = [&](const target_batch& b) {
        const auto& logs = source_log_[rules_[target_runs_[b.run].rule].source_log_kind];
        const auto at = t - b.delay;
        std::size_t g = 0;
        while (g < groups_.size() && !(groups_[g].logs == &logs && groups_[g].at == at)) ++g;
        if (g == groups_.size()) groups_.push_back({&logs, at, 0, nullptr});
        return g;
    };
    groups_.clear();
    for (const auto& b : due.batches) groups_[group_of(b)].reads += size_of(b);
    for (auto& g : groups_) g.table = trace_table_of(*g.logs, g.at, g.reads);
    for (auto& b : due.batches) b.traces = groups_[group_of(b)].table;
    // The spikes sent before a redelay first (the spike of batch b is of tick t - 2 b.delay).
    const auto old_end = !before_ ? due.batches.begin()
                                  : std::stable_partition(due.batches.begin(), due.batches.end(),
                                                          [&](const target_batch& b) { return t - 2 * tick_t{b.delay} < before_->from; });
    auto take_batches = [&](std::size_t first, std::size_t last) {
        std::uint64_t synapses = 0;
        for (auto i = first; i < last; ++i) synapses += size_of(due.batches[i]);
        for_each_batch(last - first, synapses, [&](std::size_t i, event_batch& events) { take_batch(t, due.batches[first + i], events); });
    };
    const auto old_batches = static_cast<std::size_t>(old_end - due.batches.begin());
    take_batches(0, old_batches);
    take_batches(old_batches, due.batches.size());
    due.batches.clear();
    due.synapses.clear();
}

void plasticity::take_batch(tick_t t, const target_batch& batch, event_batch& b) const {
    const auto& run = target_runs_[batch.run];
    const auto d = batch.delay;
    const auto& entry = rules_[run.rule];
    const std::int32_t* const sources = source_log_[entry.source_log_kind].data();
    const std::size_t n = batch.size != 0 ? batch.size : run.end - run.first;
    b.make_room(n);
    if (batch.size != 0) {
        const auto& due = due_[static_cast<std::size_t>(t % static_cast<tick_t>(due_.size()))];
        std::copy_n(due.synapses.data() + batch.first, n, b.synapses.data());
    } else {
        for (std::size_t i = 0; i < n; ++i) b.synapses[i] = static_cast<std::uint32_t>(run.first + i);
    }
    if (batch.traces)
        for (std::size_t i = 0; i < n; ++i) b.traces[i] = batch.traces[store_.source(b.synapses[i])];
    else
        for (std::size_t i = 0; i < n; ++i) b.traces[i] = trace_before(sources[store_.source(b.synapses[i])], t - d);
    if (entry.has_state)
        for (std::size_t i = 0; i < n; ++i) b.state[i] = static_cast<std::uint32_t>(run.index + (b.synapses[i] - run.first));
    entry.rule->target_spikes({&store_.own_weight(0), b.synapses.data(), b.state.data(), b.traces.data(), n, 0.0});
}

void plasticity::gather_source_batches(tick_t t, fan_out_index& fan_out, const std::vector<std::uint16_t>& delays,
                                       tick_t from, bool sent_before, std::uint64_t& synapses) {
    const auto ring = static_cast<tick_t>(spiked_.size());
    const std::uint32_t* const fan = fan_out.data();
    const auto& classes = store_.classes();
    for (const auto d : delays) {
        const tick_t at = t - d;
        if (at < 0) break;
        if ((at < from) != sent_before) continue;
        for (const auto j : spiked_[static_cast<std::size_t>(at % ring)]) {
            if (!is_source_[j] || fan_out.begin(j) == fan_out.end(j)) continue;
            const std::uint32_t* const block = fan + fan_out.begin(j);
            const std::uint32_t segments_end = 1 + 3 * block[0];
            std::uint32_t o = segments_end;
            for (std::uint32_t g = 1; g < segments_end; g += 3) {
                const auto& c = classes[fan_out_index::class_of(block[g])];
                const std::uint32_t e = block[g + 2];
                if (c.varies & synapse_store::weight_changes) {
                    const auto [first, last] = fan_out.delay_range(o, block[g + 1], d);
                    if (first < last) {
                        const tick_t previous = last_tick_before(source_log_[rules_[c.model].source_log_kind][j], at);
                        const double since = static_cast<double>(at - std::max<tick_t>(previous, 0)) * dt_;
                        source_batches_.push_back({&fan_out, j, c.model, first, last, d, since, nullptr});
                        synapses += (last - first) / 3;
                    }
                }
                o = e;
            }
        }
    }
}

void plasticity::source_events(tick_t t) {
    source_batches_.clear();
    // The spikes sent before a redelay through the index of their delays, first.
    std::uint64_t old_synapses = 0, synapses = 0;
    if (before_) gather_source_batches(t, before_->fan_out, before_->plastic_delays, before_->from, true, old_synapses);
    const std::size_t old_batches = source_batches_.size();
    gather_source_batches(t, fan_out_, plastic_delays_, sent_from_, false, synapses);
    // The targets' K- at t - 2 delay: a table for each delay read often enough.
    for (std::size_t i = 0; i < source_batches_.size();) {
        const auto d = source_batches_[i].delay;  // batches come by delay
        auto end = i;
        std::uint64_t reads = 0;
        for (; end < source_batches_.size() && source_batches_[end].delay == d; ++end)
            if (rules_[source_batches_[end].rule].reads_target_trace)
                reads += (source_batches_[end].last - source_batches_[end].first) / 3;
        if (const double* const table = trace_table_of(target_log_, t - 2 * tick_t{d}, reads))
            for (auto b = i; b < end; ++b)
                if (rules_[source_batches_[b].rule].reads_target_trace) source_batches_[b].traces = table;
        i = end;
    }
    for_each_batch(old_batches, old_synapses, [&](std::size_t i, event_batch& events) { take_batch(t, source_batches_[i], events); });
    for_each_batch(source_batches_.size() - old_batches, synapses,
                   [&](std::size_t i, event_batch& events) { take_batch(t, source_batches_[old_batches + i], events); });
}

void plasticity::take_batch(tick_t t, const source_batch& batch, event_batch& b) {
    fan_out_index& fan_out = *batch.fan_out;
    const auto base = fan_out.begin(batch.slot);
    const std::uint32_t* const block = fan_out.data() + base;
    float* const weights = &store_.own_weight(0);
    auto& entry = rules_[batch.rule];
    const tick_t before = t - 2 * tick_t{batch.delay};  // the source's spike's time less the delay
    const std::size_t n = (batch.last - batch.first) / 3;
    b.make_room(n);
    const std::uint32_t* const entries = block + batch.first;
    for (std::size_t i = 0; i < n; ++i) b.synapses[i] = entries[3 * i];
    if (batch.traces)
        for (std::size_t i = 0; i < n; ++i) b.traces[i] = batch.traces[entries[3 * i + 1] >> 3];
    else if (entry.reads_target_trace)
        for (std::size_t i = 0; i < n; ++i) b.traces[i] = trace_before(target_log_[entries[3 * i + 1] >> 3], before);
    if (entry.has_state)
        for (std::size_t i = 0; i < n; ++i) b.state[i] = static_cast<std::uint32_t>(index_in_rule(entry, b.synapses[i]));
    entry.rule->source_spikes({weights, b.synapses.data(), b.state.data(), b.traces.data(), n, batch.since_ms});
    // The weight this tick's delivery reads (sparse_path.cpp).
    for (auto w = batch.first; w < batch.last; w += 3) fan_out.set_weight(base + w, weights[block[w]]);
}

void plasticity::check_model(std::size_t m, const model::resolved_synapse_model& model) const {
    const auto& entry = rules_.at(m);
    if (!entry.rule) return;
    const auto fresh = make_synapse_rule(model);
    if (fresh->source_trace_tau() != entry.rule->source_trace_tau() || fresh->reads_target_trace() != entry.reads_target_trace)
        throw usage_error(std::string("new parameters of ") + model.info->name + " '" + model.id + "' would time its traces differently");
}

void plasticity::set_model(std::size_t m, const model::resolved_synapse_model& model) {
    auto& entry = rules_.at(m);
    if (!entry.rule) return;
    auto fresh = make_synapse_rule(model);
    // The synapses' state as the old rule holds it, weights included, as a snapshot carries it.
    fresh->add_synapses(std::vector<float>(entry.synapses, 0.0f));
    std::vector<float> values(entry.rule->state_size());
    for (std::uint64_t i = 0; i < entry.synapses && !values.empty(); ++i) {
        entry.rule->save_state(i, values.data());
        fresh->load_state(i, values.data());
    }
    entry.rule = std::move(fresh);
}

float plasticity::weight(std::uint8_t cls, std::uint64_t s) const {
    const auto& entry = rules_[cls];
    return entry.rule ? entry.rule->weight(index_in_rule(entry, s), store_.own_weight(s)) : store_.own_weight(s);
}

std::vector<synapse_weight> plasticity::weights(std::uint64_t from, std::uint64_t limit) const {
    std::vector<synapse_weight> out;
    const auto global_of = slots_.global_indices();  // local neuron k has slot k
    std::uint64_t seen = 0;
    for (std::size_t k = 0; k < slots_.local() && out.size() < limit; ++k) {
        auto s = store_.row_begin(k);
        for (auto r = store_.run_begin(k); r < store_.run_begin(k + 1) && out.size() < limit; ++r) {
            const auto cls = store_.run(r).cls;
            const auto end = store_.row_begin(k) + store_.run(r).end;
            if (!(store_.classes()[cls].varies & synapse_store::weight_changes)) {
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
                    out.push_back({store_.element_of(cls), global_of[store_.source(s)], global_of[k], weight(static_cast<std::uint8_t>(cls), s)});
            s = end;
        }
    }
    return out;
}

void plasticity::capture(std::uint32_t k, std::vector<model::spike_trace>& traces, std::vector<float>& synapses) const {
    for (const auto log : logs_of_slot_[k]) {
        const auto& l = logs_[log];
        model::spike_trace t{l.tau, l.by_inverse, {}, {}};
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
                                    [&](const model::spike_trace& x) { return x.tau == l.tau && x.post == l.by_inverse; });
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
    forget_old_delays();
    remote_taken_ = next - 1 - remote_delay_;
    const auto ring = static_cast<tick_t>(spiked_.size());
    for (auto& tick : spiked_) tick.clear();
    // Every log of a slot took the same spikes: its first one lists them. update(next) clears
    // and fills the row of tick next - 1; the rows of the ticks before hold what they took.
    for (std::uint32_t slot = 0; slot < logs_of_slot_.size(); ++slot) {
        if (logs_of_slot_[slot].empty()) continue;
        for (const auto& [tick, value] : logs_[logs_of_slot_[slot].front()].spikes)
            if (tick > next - 1 - ring) spiked_[static_cast<std::size_t>(tick % ring)].push_back(slot);
    }
    rebuild_derived(next);
}

}  // namespace dnnc::sim
