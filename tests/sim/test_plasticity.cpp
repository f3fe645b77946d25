// Plastic synapses in the engine: each rule against its closed form (NEST's algorithm for
// the synapse, computed here in double from the spike trains the engine produced), weight by
// weight after every source spike (stdp_synapse also on a row whose synapses have several
// delays); a recurrent network with all three rules giving the same spikes and the same final
// weights, bit for bit, on 1, 2, 3 and 4 nodes; and a busy one on 1 and 3 nodes.
#include "plastic_network.hpp"
#include "share_cluster.hpp"

#include "dnnc/sim/engine.hpp"
#include "dnnc/model/expand.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <tuple>

using namespace dnnc;
using namespace dnnc::sim;
using dnnc::test::cluster;
using dnnc::test::scatter;
using dnnc::test::recurrent_plastic_network;
using dnnc::test::require_same_weights;

namespace {

constexpr double dt = 0.1;

model::network parse(const std::string& body) {
    return *protocol::parse_document("<dnnc xmlns=\"urn:dnnc:1\"><network name=\"p\">" + body + "</network></dnnc>", "p.xml").net;
}

// `count` distinct ticks in [first, last) at least `gap` apart, as <spike> elements of member 0.
std::vector<int> spike_ticks(unsigned seed, int count, int first, int last, int gap) {
    std::mt19937 gen(seed);
    std::vector<int> ticks;
    while (static_cast<int>(ticks.size()) < count) {
        const int t = first + static_cast<int>(gen() % static_cast<unsigned>(last - first));
        if (std::all_of(ticks.begin(), ticks.end(), [&](int u) { return std::abs(u - t) >= gap; })) ticks.push_back(t);
    }
    std::sort(ticks.begin(), ticks.end());
    return ticks;
}
std::string spikes_of(const std::vector<int>& ticks) {
    std::string out;
    for (const int t : ticks) out += "<spike t-ms=\"" + std::to_string(t * dt) + "\" index=\"0\"/>";
    return out;
}

// The post-synaptic trace as NEST's archiving node keeps it: K- after each of the target's
// spikes, read just before a time (spikes strictly before it).
struct post_history {
    double tau_minus;
    std::vector<std::pair<double, double>> spikes;  // (time, K- after)
    void add(double t) {
        const double k = spikes.empty() ? 0.0 : spikes.back().second * std::exp((spikes.back().first - t) / tau_minus);
        spikes.emplace_back(t, k + 1.0);
    }
    double k_before(double t) const {
        for (auto it = spikes.rbegin(); it != spikes.rend(); ++it)
            if (t - it->first > 1e-6) return it->second * std::exp((it->first - t) / tau_minus);
        return 0.0;
    }
};

// One pre-synaptic spike at t_pre through NEST's send() of a pair-based rule: facilitation
// for each post spike in (t_last - d, t_pre - d], then the rule's own step at the spike.
template <class Facilitate, class AtSpike>
void nest_send(double& w, double& k_plus, double& t_last, double t_pre, double d, double tau, const std::vector<double>& post,
               Facilitate facilitate, AtSpike at_spike) {
    for (const double p : post)
        if (p > t_last - d + 1e-6 && p <= t_pre - d + 1e-6) w = facilitate(w, k_plus * std::exp((t_last - (p + d)) / tau));
    w = at_spike(w);
    k_plus = k_plus * std::exp((t_last - t_pre) / tau) + 1.0;
    t_last = t_pre;
}

// A source S and a driver P (spike sources) onto one neuron N: P's spikes (100 mV) make an
// iaf_psc_delta N spike; S's synapse (weight, delay in ticks) is of the synapse model `model`.
// Returns N's spike ticks and, after each of S's spikes, the engine's weight of S's synapse
// once its delivery tick is computed, and N's output then (a linear N puts out what arrived).
struct pair_run {
    std::vector<int> post;
    std::vector<double> weight_after, output_after;  // per pre spike
};
// `history`: a silent synapse of that delay makes the engines keep that many ticks of output.
model::network pair_network(const model::synapse_model& model, double weight, int delay, const std::vector<int>& pre,
                               const std::vector<int>& drive, const std::string& target = R"(model="iaf_psc_delta" tau_m="10" t_ref="2")",
                               int history = 0) {
    auto net = parse(R"(<spike-source id="S" size="1">)" + spikes_of(pre) + R"(</spike-source>
        <spike-source id="P" size="1">)" + spikes_of(drive) + R"(</spike-source>
        <neuron id="N" )" + target + R"(/>
        <synapse from="S[0]" to="N" weight=")" + std::to_string(weight) + R"(" delay=")" + std::to_string(delay) + R"("/>
        <synapse from="P[0]" to="N" weight="100" delay="1"/>)" +
                     (history > 0 ? R"(<synapse from="P[0]" to="N" weight="0" delay=")" + std::to_string(history) + R"("/>)" : ""));
    net.synapse_models.push_back(model);
    net.synapses[0].synapse_model = model.id;
    return net;
}
pair_run run_pair(const model::synapse_model& model, double weight, int delay, const std::vector<int>& pre,
                  const std::vector<int>& drive, int ticks, const std::string& target = R"(model="iaf_psc_delta" tau_m="10" t_ref="2")") {
    cluster c(pair_network(model, weight, delay, pre, drive, target), {0, 0, 0}, 1);
    const auto n = c.neuron("N");
    pair_run out;
    for (int t = 0; t < ticks; ++t) {
        const auto y = c.tick();
        if (y[n] != 0.0f) out.post.push_back(t);
        if (std::binary_search(pre.begin(), pre.end(), t - delay)) {
            out.weight_after.push_back(c.weights().begin()->second.front().weight);
            out.output_after.push_back(y[n]);
        }
    }
    return out;
}

std::vector<double> times_of(const std::vector<int>& ticks) {
    std::vector<double> ms;
    for (const int t : ticks) ms.push_back(t * dt);
    return ms;
}

void require_close(const std::vector<double>& engine, const std::vector<double>& closed_form) {
    REQUIRE(engine.size() == closed_form.size());
    for (std::size_t k = 0; k < engine.size(); ++k) {
        INFO("after source spike " << k);
        REQUIRE(std::abs(engine[k] - closed_form[k]) <= 1e-6 * std::abs(closed_form[k]) + 1e-12);
    }
}

}  // namespace

TEST_CASE("stdp_synapse follows NEST's pair-based rule weight by weight, additive and multiplicative") {
    const double mu = GENERATE(0.0, 1.0);
    const double tau_plus = 20, lambda = 0.1, alpha = 1.2, w_max = 5, tau_minus = 20;
    const int delay = 7;
    const auto pre = spike_ticks(1, 40, 50, 6000, 3), drive = spike_ticks(2, 40, 0, 6000, 25);
    const auto run = run_pair({"plastic", "stdp_synapse", {{"tau_plus", tau_plus}, {"lambda", lambda}, {"alpha", alpha},
                                                             {"mu_plus", mu}, {"mu_minus", mu}, {"Wmax", w_max}}, {}},
                              2.5, delay, pre, drive, 6100);
    REQUIRE(run.post.size() >= 30);
    post_history post{tau_minus, {}};
    for (const double t : times_of(run.post)) post.add(t);
    double w = 2.5, k_plus = 0, t_last = 0;
    std::vector<double> expected;
    for (const double t : times_of(pre)) {
        const double d = delay * dt;
        nest_send(
            w, k_plus, t_last, t, d, tau_plus, times_of(run.post),
            [&](double v, double k) {
                const double norm = v / w_max + lambda * std::pow(1 - v / w_max, mu) * k;
                return norm < 1 ? norm * w_max : w_max;
            },
            [&](double v) {
                const double norm = v / w_max - alpha * lambda * std::pow(v / w_max, mu) * post.k_before(t - d);
                return norm > 0 ? norm * w_max : 0.0;
            });
        expected.push_back(w);
    }
    require_close(run.weight_after, expected);
    REQUIRE(std::abs(expected.back() - 2.5) > 0.1);  // the rule did change the weight
}

TEST_CASE("stdp_synapse gives each synapse of a run the events of its own delay when the run's delays differ") {
    // One source onto one target through a projection of four plastic synapses with drawn
    // delays: one run of the row, whose target spikes reach each delay at its own tick.
    const double tau_plus = 20, lambda = 0.1, alpha = 1.2, w_max = 5, tau_minus = 20;
    const auto pre = spike_ticks(5, 40, 50, 6000, 3), drive = spike_ticks(6, 40, 0, 6000, 25);
    auto net = parse(R"(<spike-source id="S" size="1">)" + spikes_of(pre) + R"(</spike-source>
        <spike-source id="P" size="1">)" + spikes_of(drive) + R"(</spike-source>
        <neuron id="N" model="iaf_psc_delta" tau_m="10" t_ref="2"/>
        <projection from="S" to="N" kind="fixed-indegree" indegree="4" weight="2.5" seed="9">
          <delay distribution="uniform" min="0.2" max="1.5"/></projection>
        <synapse from="P[0]" to="N" weight="100" delay="1"/>)");
    net.synapse_models.push_back({"plastic", "stdp_synapse", {{"tau_plus", tau_plus}, {"lambda", lambda}, {"alpha", alpha},
                                                              {"mu_plus", 1.0}, {"mu_minus", 1.0}, {"Wmax", w_max}}, {}});
    net.projections[0].synapse_model = "plastic";
    cluster c(net, {0, 0, 0}, 1);
    const auto n = c.neuron("N"), s = c.neuron("S[0]");
    // The plastic synapses' delays, in the row's order (the order of the weights read).
    std::vector<int> delays;
    const auto& x = c.network();
    for (auto k = x.in_begin[n]; k < x.in_begin[n + 1]; ++k)
        if (x.in_source[k] == s) delays.push_back(x.in_delay[k]);
    REQUIRE(delays.size() == 4);
    REQUIRE(std::set<int>(delays.begin(), delays.end()).size() >= 3);
    std::vector<int> post;
    std::vector<std::vector<double>> weight_after(delays.size());  // per synapse, after each pre spike
    for (int t = 0; t < 6100; ++t) {
        if (c.tick()[n] != 0.0f) post.push_back(t);
        for (std::size_t i = 0; i < delays.size(); ++i)
            if (std::binary_search(pre.begin(), pre.end(), t - delays[i]))
                weight_after[i].push_back(c.weights().at(n).at(i).weight);
    }
    REQUIRE(post.size() >= 30);
    post_history history{tau_minus, {}};
    for (const double t : times_of(post)) history.add(t);
    for (std::size_t i = 0; i < delays.size(); ++i) {
        INFO("delay " << delays[i]);
        const double d = delays[i] * dt;
        double w = 2.5, k_plus = 0, t_last = 0;
        std::vector<double> expected;
        for (const double t : times_of(pre)) {
            nest_send(
                w, k_plus, t_last, t, d, tau_plus, times_of(post),
                [&](double v, double k) {
                    const double norm = v / w_max + lambda * (1 - v / w_max) * k;
                    return norm < 1 ? norm * w_max : w_max;
                },
                [&](double v) {
                    const double norm = v / w_max - alpha * lambda * (v / w_max) * history.k_before(t - d);
                    return norm > 0 ? norm * w_max : 0.0;
                });
            expected.push_back(w);
        }
        require_close(weight_after[i], expected);
    }
}

TEST_CASE("a plastic synapse whose delay changes between ticks takes each spike's events with the delay it was sent with") {
    // NEST's stdp_synapse, its delay changed at tick 3000: a source spike of tick e reaches
    // the synapse at e + its delay then, a target spike of tick p at p + 2 x its delay then
    // (its dendritic delay back, the delay forward); each is taken once, at that tick, target
    // spikes first, and of one kind those sent before the change first. Computed here event
    // by event from the spike trains the engine produced. Shorter, spikes sent after the
    // change overtake earlier ones; longer, a synapse takes nothing for a while.
    const double tau_plus = 20, lambda = 0.1, alpha = 1.2, w_max = 5, tau_minus = 20;
    const model::synapse_model model{"plastic", "stdp_synapse", {{"tau_plus", tau_plus}, {"lambda", lambda}, {"alpha", alpha},
                                                                    {"mu_plus", 1.0}, {"mu_minus", 1.0}, {"Wmax", w_max}}, {}};
    const int change = 3000;
    // Spikes of both kinds on their way at the change.
    auto with = [](std::vector<int> ticks, std::vector<int> more) {
        ticks.insert(ticks.end(), more.begin(), more.end());
        std::sort(ticks.begin(), ticks.end());
        ticks.erase(std::unique(ticks.begin(), ticks.end()), ticks.end());
        return ticks;
    };
    const auto pre = with(spike_ticks(7, 60, 50, 6000, 3), {change - 8, change - 5, change - 3, change - 1, change + 1, change + 4});
    const auto drive = with(spike_ticks(8, 60, 0, 6000, 25), {change - 12, change - 4, change + 3});
    for (const auto& [before, after] : std::vector<std::pair<int, int>>{{9, 2}, {2, 9}, {5, 5}}) {
        INFO(before << " -> " << after << " ticks");
        const std::string target = R"(model="iaf_psc_delta" tau_m="10" t_ref="0.2")";
        cluster c(pair_network(model, 2.5, before, pre, drive, target, 9), {0, 0, 0}, 1);
        const auto n = c.neuron("N");
        auto delay_of = [&](int sent) { return sent < change ? before : after; };
        std::map<int, int> delivered;  // tick -> source spikes delivered then
        for (const int e : pre) ++delivered[e + delay_of(e)];
        std::vector<int> post;
        std::vector<double> weight_after;  // after each delivery tick, once per spike delivered then
        for (int t = 0; t < 6100; ++t) {
            if (t == change)
                for (auto& e : c.engines()) e.set_synapses(pair_network(model, 2.5, after, pre, drive, target, 9), {});
            if (c.tick()[n] != 0.0f) post.push_back(t);
            if (const auto d = delivered.find(t); d != delivered.end())
                weight_after.insert(weight_after.end(), static_cast<std::size_t>(d->second), c.weights().at(n).front().weight);
        }
        REQUIRE(post.size() >= 40);
        // Events: (tick taken, 0 target / 1 source, sent after the change, spike tick).
        std::vector<std::tuple<int, int, int, int>> events;
        for (const int p : post) events.emplace_back(p + 2 * delay_of(p), 0, p >= change, p);
        for (const int e : pre) events.emplace_back(e + delay_of(e), 1, e >= change, e);
        std::sort(events.begin(), events.end());
        auto k_plus = [&](double at) {  // the source's trace just before `at` (ms)
            double k = 0;
            for (const int e : pre)
                if (e * dt < at - 1e-6) k += std::exp((e * dt - at) / tau_plus);
            return k;
        };
        auto k_minus = [&](double at) {
            double k = 0;
            for (const int p : post)
                if (p * dt < at - 1e-6) k += std::exp((p * dt - at) / tau_minus);
            return k;
        };
        double w = 2.5;
        std::vector<double> expected;
        for (std::size_t i = 0; i < events.size(); ++i) {
            const auto [tick, kind, sent_after, spike] = events[i];
            const double d = delay_of(spike) * dt;
            if (kind == 0) {
                const double norm = w / w_max + lambda * (1 - w / w_max) * k_plus(spike * dt + d);
                w = norm < 1 ? norm * w_max : w_max;
            } else {
                const double norm = w / w_max - alpha * lambda * (w / w_max) * k_minus(spike * dt - d);
                w = norm > 0 ? norm * w_max : 0.0;
            }
            // The weight read after the tick: once every event of it is taken.
            if (i + 1 == events.size() || std::get<0>(events[i + 1]) != tick)
                for (std::size_t j = i + 1; j-- > 0 && std::get<0>(events[j]) == tick;)
                    if (std::get<1>(events[j]) == 1) expected.push_back(w);
        }
        require_close(weight_after, expected);
        CHECK(std::count_if(post.begin(), post.end(), [&](int p) { return p < change && p + 2 * before >= change; }) >= 1);
    }
}

TEST_CASE("plastic delays changed mid-run give the same spikes and weights on 1, 2 and 3 nodes, and a snapshot after restores") {
    // At tick 1500: stdp E->E 5 -> 1 tick (shorter than any delay before: peers' spikes are
    // then needed sooner), tsodyks2 E->I drawn up to 0.8 ms instead of 1.5, vogels_sprekeler
    // I->E 2 -> 7 ticks.
    const auto net = recurrent_plastic_network(), changed = recurrent_plastic_network("1", "0.8", "7");
    const int change = 1500, ticks = 3000;
    std::vector<std::vector<float>> reference;
    std::map<global_index, std::vector<synapse_weight>> reference_weights, unchanged_weights;
    {
        cluster c(net, scatter(100, 1, 1), 1);
        for (int t = 0; t < ticks; ++t) c.tick();
        unchanged_weights = c.weights();
    }
    for (std::size_t nodes = 1; nodes <= 3; ++nodes) {
        INFO(nodes << " nodes");
        cluster c(net, scatter(100, nodes, static_cast<unsigned>(nodes) + 4), nodes);
        std::vector<std::vector<float>> outputs;
        for (int t = 0; t < ticks; ++t) {
            if (t == change)
                for (auto& e : c.engines()) e.set_synapses(changed, {});
            outputs.push_back(c.tick());
        }
        if (nodes == 1) {
            reference = outputs;
            reference_weights = c.weights();
            continue;
        }
        REQUIRE(outputs == reference);
        require_same_weights(c.weights(), reference_weights);
    }
    std::size_t spikes = 0;
    for (const auto& row : reference) spikes += static_cast<std::size_t>(std::count(row.begin(), row.end(), 1.0f));
    CHECK(spikes > 1000);
    // The new delays did change what was learned.
    std::size_t differ = 0;
    for (const auto& [target, list] : reference_weights)
        for (std::size_t k = 0; k < list.size(); ++k) differ += list[k].weight != unchanged_weights.at(target).at(k).weight;
    CHECK(differ > 100);
    // Snapshots wait until no event of the old delays is due (a target's spike of tick 1499
    // reaches a synapse of 15 ticks at 1529); then one restores onto another partition.
    cluster c(net, scatter(100, 3, 2), 3);
    for (int t = 0; t < change; ++t) c.tick();
    for (auto& e : c.engines()) e.set_synapses(changed, {});
    for (int t = change; t < change + 30; ++t) {
        CHECK_THROWS_WITH(c.capture(), Catch::Contains("on their way"));
        c.tick();
    }
    const auto states = c.capture();
    cluster restored(changed, scatter(100, 2, 8), 2);
    restored.restore(states, change + 30);
    for (int t = change + 30; t < ticks; ++t) REQUIRE(c.tick() == restored.tick());
    require_same_weights(restored.weights(), c.weights());
    require_same_weights(c.weights(), reference_weights);
}

TEST_CASE("vogels_sprekeler_synapse follows NEST's inhibitory rule weight by weight, keeping Wmax's sign") {
    const double tau = 20, eta = 0.1, alpha = 0.2, w_max = -5;
    const int delay = 4;
    const auto pre = spike_ticks(3, 40, 50, 6000, 3), drive = spike_ticks(4, 40, 0, 6000, 25);
    const auto run = run_pair({"plastic", "vogels_sprekeler_synapse", {{"tau", tau}, {"eta", eta}, {"alpha", alpha}, {"Wmax", w_max}}, {}},
                              -1.0, delay, pre, drive, 6100);
    post_history post{20, {}};
    for (const double t : times_of(run.post)) post.add(t);
    auto facilitate = [&](double v, double k) { return std::copysign(std::min(std::abs(v) + eta * k, std::abs(w_max)), w_max); };
    double w = -1, k_plus = 0, t_last = 0;
    std::vector<double> expected;
    for (const double t : times_of(pre)) {
        const double d = delay * dt;
        nest_send(w, k_plus, t_last, t, d, tau, times_of(run.post), facilitate, [&](double v) {
            return std::copysign(std::max(std::abs(facilitate(v, post.k_before(t - d))) - alpha * eta, 0.0), w_max);
        });
        expected.push_back(w);
    }
    require_close(run.weight_after, expected);
    REQUIRE(std::all_of(run.weight_after.begin(), run.weight_after.end(), [](double v) { return v <= 0; }));
    REQUIRE(std::abs(expected.back() + 1.0) > 0.1);
}

TEST_CASE("tsodyks2_synapse delivers each spike with NEST's weight w x u, then moves x and u on, with and without facilitation") {
    const double tau_fac = GENERATE(0.0, 50.0);
    const double U = 0.2, tau_rec = 100, w = 3;  // u starts at U, x at 1
    const int delay = 3;
    const auto pre = spike_ticks(5, 40, 10, 6000, 2);
    const auto run = run_pair({"plastic", "tsodyks2_synapse", {{"U", U}, {"u", U}, {"x", 1}, {"tau_rec", tau_rec}, {"tau_fac", tau_fac}}, {}},
                              w, delay, pre, {}, 6100, R"(model="linear")");
    double x = 1, u = U, t_last = 0;
    std::vector<double> expected;
    for (const double t : times_of(pre)) {
        expected.push_back(x * u * w);
        const double h = t - t_last;
        x = 1 + (x - x * u - 1) * std::exp(-h / tau_rec);
        u = U + u * (1 - U) * (tau_fac < 1e-10 ? 0.0 : std::exp(-h / tau_fac));
        t_last = t;
    }
    require_close(run.output_after, expected);
    // The weight a user reads stays the synapse's own.
    REQUIRE(std::all_of(run.weight_after.begin(), run.weight_after.end(), [&](double v) { return v == w; }));
}

TEST_CASE("a recurrent network with plastic projections gives the same spikes and weights on 1, 2, 3 and 4 nodes") {
    const auto net = recurrent_plastic_network();
    const int ticks = 3000;
    std::vector<std::vector<float>> reference;
    std::map<global_index, std::vector<synapse_weight>> reference_weights;
    for (std::size_t nodes = 1; nodes <= 4; ++nodes) {
        INFO(nodes << " nodes");
        cluster c(net, scatter(100, nodes, static_cast<unsigned>(nodes)), nodes);
        std::vector<std::vector<float>> outputs;
        for (int t = 0; t < ticks; ++t) outputs.push_back(c.tick());
        const auto weights = c.weights();
        if (nodes == 1) {
            reference = outputs;
            reference_weights = weights;
            std::size_t spikes = 0, changed = 0;
            for (const auto& row : outputs) spikes += static_cast<std::size_t>(std::count(row.begin(), row.end(), 1.0f));
            for (const auto& [target, list] : weights)
                for (const auto& w : list) changed += w.element == 0 ? w.weight != 1.5f : w.element == 2 ? w.weight != -3.0f : 0;
            REQUIRE(spikes > 1000);
            REQUIRE(changed > 100);
            REQUIRE(weights.size() == 100);
            continue;
        }
        REQUIRE(outputs == reference);
        require_same_weights(weights, reference_weights);
    }
}

TEST_CASE("a plastic network captured on one partition and restored on another continues bit for bit as a straight run") {
    const auto net = recurrent_plastic_network();
    const int ticks = 1500, at = 700;
    cluster straight(net, scatter(100, 1, 1), 1);
    std::vector<std::vector<float>> reference;
    for (int t = 0; t < ticks; ++t) reference.push_back(straight.tick());
    const auto reference_weights = straight.weights();
    for (const auto& [from, to] : std::vector<std::pair<std::size_t, std::size_t>>{{3, 2}, {1, 4}, {4, 1}, {2, 2}, {2, 3}}) {
        INFO(from << " nodes, restored on " << to);
        cluster before(net, scatter(100, from, static_cast<unsigned>(from)), from);
        for (int t = 0; t < at; ++t) before.tick();
        const auto states = before.capture();
        REQUIRE(std::any_of(states.begin(), states.end(), [](const neuron_state& s) { return !s.synapses.empty(); }));
        cluster after(net, scatter(100, to, static_cast<unsigned>(10 + to)), to);
        after.restore(states, at);
        for (int t = at; t < ticks; ++t) REQUIRE(after.tick() == reference[static_cast<std::size_t>(t)]);
        require_same_weights(after.weights(), reference_weights);
    }
}

TEST_CASE("a plastic state that does not fit its network is refused") {
    const auto net = recurrent_plastic_network();
    cluster c(net, scatter(100, 2, 2), 2);
    for (int t = 0; t < 50; ++t) c.tick();
    auto states = c.capture();
    const auto target = std::find_if(states.begin(), states.end(), [](const neuron_state& s) { return !s.synapses.empty(); });
    SECTION("a synapse value too few") {
        target->synapses.pop_back();
        REQUIRE_THROWS_WITH(c.restore(states, 50), Catch::Contains("do not fit its plastic synapses"));
    }
    SECTION("a trace missing") {
        target->traces.clear();
        REQUIRE_THROWS_WITH(c.restore(states, 50), Catch::Contains("does not match its network"));
    }
}

TEST_CASE("a busy plastic network with drawn delays gives the same spikes and weights on one node as on three") {
    // About 10,000 target and 10,000 source events a tick on one node: its batches run on
    // several threads and read their traces from tables; three nodes share them out.
    auto net = parse(R"(<population id="E" size="1000" model="iaf_psc_delta" seed="1" v-init="-70" v-init-max="-55"/>
        <projection from="E" to="E" kind="fixed-indegree" indegree="500" weight="0.1" seed="3">
          <delay distribution="uniform" min="0.2" max="1.5"/></projection>
        <poisson to="E" rate="3000" weight="1" seed="7"/>)");
    net.populations[0].params.tau_minus = 15;
    net.synapse_models = {{"ee", "stdp_synapse", {{"lambda", 0.02}, {"alpha", 1.1}, {"Wmax", 1}}, {}}};
    net.projections[0].synapse_model = "ee";
    const int ticks = 200;
    std::vector<std::vector<float>> reference;
    std::map<global_index, std::vector<synapse_weight>> reference_weights;
    for (const std::size_t nodes : {std::size_t{1}, std::size_t{3}}) {
        INFO(nodes << " nodes");
        cluster c(net, scatter(1000, nodes, 5), nodes);
        std::vector<std::vector<float>> outputs;
        for (int t = 0; t < ticks; ++t) outputs.push_back(c.tick());
        const auto weights = c.weights();
        if (nodes == 1) {
            reference = outputs;
            reference_weights = weights;
            std::size_t spikes = 0;
            for (const auto& row : outputs) spikes += static_cast<std::size_t>(std::count(row.begin(), row.end(), 1.0f));
            REQUIRE(spikes / ticks * 500 > 8192);  // enough events a tick for several threads
            continue;
        }
        REQUIRE(outputs == reference);
        auto same = [](const synapse_weight& a, const synapse_weight& b) { return a.source == b.source && a.weight == b.weight; };
        REQUIRE(weights.size() == reference_weights.size());
        for (const auto& [target, list] : weights) {
            const auto& expected = reference_weights.at(target);
            REQUIRE(std::equal(list.begin(), list.end(), expected.begin(), expected.end(), same));
        }
    }
}
