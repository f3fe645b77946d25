#pragma once
// The DNNC document as plain values, as written by the user (compact forms unexpanded).
// Every element remembers where it stood in its file so that later checks can point at it.
// Equality ignores locations: parse(serialize(doc)) == doc.
#include "dnnc/core/error.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dnnc::model {

enum class neuron_model { linear, step, sigmoid, tanh, relu, lif, iaf_psc_exp, iaf_psc_delta, iaf_psc_alpha, izhikevich, iaf_cond_exp,
                          iaf_cond_alpha, aeif_cond_exp, aeif_cond_alpha, hh_cond_exp_traub, spike_source };
enum class projection_kind { all, one_to_one, random, fixed_indegree, fixed_outdegree, fixed_total_number, dense, list };
enum class distribution_kind { constant, normal, uniform, lognormal };
enum class dense_init { none, normal, uniform, zeros };
enum class sync_mode { lockstep, window };
enum class send_mode { always, nonzero };
// Whether signal packets are compressed on a link: as the lead decides from the link's
// measured throughput (plan/compression.hpp), on every link, or on none.
enum class compress_mode { auto_, always, never };

const char* to_string(neuron_model m);
const char* to_string(projection_kind k);
const char* to_string(dense_init i);
const char* to_string(distribution_kind d);
const char* to_string(sync_mode s);
const char* to_string(send_mode s);
const char* to_string(compress_mode c);

// NEST's current-based integrate-and-fire models, integrated exactly.
inline bool is_psc(neuron_model m) {
    return m == neuron_model::iaf_psc_exp || m == neuron_model::iaf_psc_delta || m == neuron_model::iaf_psc_alpha;
}
// NEST's adaptive exponential integrate-and-fire models (adex_params beside iaf_params).
inline bool is_adex(neuron_model m) { return m == neuron_model::aeif_cond_exp || m == neuron_model::aeif_cond_alpha; }
// NEST's conductance-based integrate-and-fire models, integrated numerically (g_L, E_ex, E_in);
// the aeif models among them, with their adaptation (adex_params).
inline bool is_cond(neuron_model m) {
    return m == neuron_model::iaf_cond_exp || m == neuron_model::iaf_cond_alpha || is_adex(m);
}
// NEST's integrate-and-fire models (iaf_params).
inline bool is_iaf(neuron_model m) { return is_psc(m) || is_cond(m); }
// NEST's Hodgkin-Huxley model with Traub's rate functions (hh_params beside iaf_params' C_m,
// t_ref, E_L, I_e, g_L, E_ex, E_in, tau_syn_ex and tau_syn_in); no V_th, V_reset or tau_m.
inline bool is_hh(neuron_model m) { return m == neuron_model::hh_cond_exp_traub; }
// NEST's models with conductances towards E_ex and E_in and a leak g_L.
inline bool has_conductances(neuron_model m) { return is_cond(m) || is_hh(m); }
// NEST's models, named and parameterised as NEST names them.
inline bool is_nest_model(neuron_model m) { return is_iaf(m) || is_hh(m) || m == neuron_model::izhikevich; }
// NEST's models with synaptic currents or conductances of time constants tau_syn_ex and tau_syn_in.
inline bool has_synaptic_currents(neuron_model m) {
    return m == neuron_model::iaf_psc_exp || m == neuron_model::iaf_psc_alpha || has_conductances(m);
}
// Models whose output is a spike (1) or nothing (0), with a membrane potential that
// v-init, v-init-max and v-init-std set and synaptic input split by the weight's sign
// into an excitatory and an inhibitory sum.
inline bool is_spiking(neuron_model m) { return m == neuron_model::lif || is_nest_model(m); }
// Models whose neurons' spikes can be recorded: the spiking models and the members of a
// <spike-source>, whose output at a tick is the number of spike times listed for it.
inline bool emits_spikes(neuron_model m) { return is_spiking(m) || m == neuron_model::spike_source; }
// The names of a model's snapshot variables, in order (none for rate models).
const std::vector<std::string>& state_variable_names(neuron_model m);
// The variables a <record variables="..."> may sample, under NEST's recordable names (lif:
// v, ge, gi): the first ones of state_variable_names, in that order.
const std::vector<std::string>& recordable_variables(neuron_model m);

// The parameters of NEST's iaf_psc_exp, iaf_psc_alpha, iaf_psc_delta, iaf_cond_exp and iaf_cond_alpha, with
// NEST's names and defaults (the document spells them C_m, tau_m, ...; iaf_defaults gives a
// model's). Times in ms, potentials in mV, currents in pA, capacitance in pF, conductance in
// nS. tau_syn_ex and tau_syn_in apply to iaf_psc_exp, iaf_psc_alpha and the conductance
// models; tau_m to the current-based ones; g_L, E_ex and E_in to the conductance models.
struct iaf_params {
    double c_m = 250;
    double tau_m = 10;
    double tau_syn_ex = 2;
    double tau_syn_in = 2;
    double t_ref = 2;
    double e_l = -70;
    double v_th = -55;
    double v_reset = -70;
    double i_e = 0;
    double g_l = 16.6667;
    double e_ex = 0;
    double e_in = -85;
};
bool operator==(const iaf_params& a, const iaf_params& b);
// NEST's defaults for model m: those above, but V_reset -60 mV and tau_syn_ex 0.2 ms for the
// conductance models, the aeif models' own (C_m 281 pF, g_L 30 nS, E_L -70.6 mV, V_th
// -50.4 mV, t_ref 0 ms), and hh_cond_exp_traub's (C_m 200 pF, g_L 10 nS, E_L -60 mV, E_in
// -80 mV, tau_syn_ex 5 ms, tau_syn_in 10 ms).
iaf_params iaf_defaults(neuron_model m);

// The adaptation and spike parameters of NEST's aeif_cond_exp and aeif_cond_alpha (Brette &
// Gerstner 2005), with
// NEST's names and defaults: Delta_T (mV; 0: no exponential term, spikes at V_th), tau_w
// (ms), a (nS), b (pA), V_peak (mV). Its other parameters are iaf_params'.
struct adex_params {
    double delta_t = 2;
    double tau_w = 144;
    double a = 4;
    double b = 80.5;
    double v_peak = 0;
};
bool operator==(const adex_params& a, const adex_params& b);

// The channels of NEST's hh_cond_exp_traub (Traub & Miles 1991), with NEST's names and
// defaults: g_Na, g_K (nS), E_Na, E_K (mV), and V_T (mV), which shifts the rate functions
// (a spike is a maximum of V_m at or above V_T + 30 mV). Its other parameters are iaf_params'.
struct hh_params {
    double g_na = 20000;
    double g_k = 6000;
    double e_na = 50;
    double e_k = -90;
    double v_t = -63;
};
bool operator==(const hh_params& a, const hh_params& b);

// The parameters of NEST's izhikevich, with NEST's names and defaults: a (1/ms), b (1/ms),
// c (mV), d (mV/ms), V_th (mV), V_min (mV; -inf: no lower bound), consistent_integration.
// Its I_e is iaf_params::i_e (the document's I_e).
struct izhikevich_params {
    double a = 0.02;
    double b = 0.2;
    double c = -65;
    double d = 8;
    double v_th = 30;
    double v_min = -HUGE_VAL;
    bool consistent_integration = true;
};
bool operator==(const izhikevich_params& a, const izhikevich_params& b);

// Model parameters. Defaults are those of the CUBA benchmark for `lif`; models ignore
// parameters they do not use. Times in ms, potentials in mV, refractory in ticks.
struct neuron_params {
    neuron_model model = neuron_model::linear;
    double bias = 0;
    double threshold = 0;  // step: y = u >= threshold
    double tau_m = 20;
    double v_rest = -49;
    double v_reset = -60;
    double v_th = -50;
    std::int32_t refractory = 0;
    double tau_e = 5;
    double tau_i = 10;
    double dt = 0.1;
    iaf_params iaf;  // iaf_psc_exp, iaf_psc_alpha, iaf_psc_delta (integrated with the network's dt)
    izhikevich_params izhikevich;  // izhikevich (I_e in iaf.i_e)
    adex_params adex;              // aeif_cond_exp, aeif_cond_alpha, beside iaf
    hh_params hh;                  // hh_cond_exp_traub, beside iaf
    // Initial membrane potential of a spiking model: v_init (default: its resting
    // potential), or uniform in [v_init, v_init_max) when v_init_max is set, or normal with
    // mean v_init and standard deviation v_init_std; drawn from (population seed, index).
    std::optional<double> v_init;
    std::optional<double> v_init_max;
    std::optional<double> v_init_std;
    // izhikevich: the initial recovery variable U_m (default 0, as NEST starts it).
    std::optional<double> u_init;
    // The time constant (ms) of the post-synaptic trace that stdp_synapse reads, a neuron
    // parameter as in NEST (its archiving node's tau_minus); spiking models only.
    double tau_minus = 20;
};
bool operator==(const neuron_params& a, const neuron_params& b);

struct neuron {
    std::string id;
    neuron_params params;
    source_location where;
};

// One listed spike of a <spike-source>: its member `index` spikes at `tick`.
struct spike_time {
    std::int64_t index = 0;
    std::int64_t tick = 0;
};
bool operator==(const spike_time& a, const spike_time& b);

// NEST's Gaussian growth curve of a synaptic element (growth_curve="gaussian", NEST's names
// and defaults): dz/dt = growth_rate * (2 exp(-((Ca - xi) / zeta)^2) - 1), xi = (eta + eps) / 2,
// zeta = (eta - eps) / (2 sqrt(ln 2)); z stays >= 0. growth_rate in elements per ms; eta and
// eps are calcium levels (eps: the set point, where growth stops). At each structural update
// a fraction tau_vacant of the vacant elements (floor(z) - connected, when > 0) is lost.
// `continuous`: z is reported as it is (true) or rounded down (false); both pair floor(z).
struct growth_curve {
    double growth_rate = 0.0001;
    double eta = 0.1;
    double eps = 0.7;
    bool continuous = true;
    double tau_vacant = 0.1;
    double z = 0;  // the elements each member starts with
};
bool operator==(const growth_curve& a, const growth_curve& b);

// A <synaptic-element> of a population: a kind of connection point (an axonal bouton or a
// dendritic spine, named by the user: Axon_ex, Den_in, ...) whose count per member follows
// its growth curve driven by the member's calcium.
struct synaptic_element {
    std::string name;
    growth_curve curve;
    source_location where;
};

// A <structural-synapse>: synapses may form between a vacant `pre_element` of one neuron and a
// vacant `post_element` of another (or the same), NEST's structural_plasticity_synapses entry;
// they have this weight and delay (a static synapse: synapse_model empty or a static one).
struct structural_synapse {
    std::string id;
    std::string pre_element, post_element;
    std::string synapse_model;
    double weight = 1;
    std::int64_t delay = 1;  // ticks; unused when delay_ms is set
    std::optional<double> delay_ms;
    source_location where;
};

// <structural-plasticity>: NEST's homeostatic structural plasticity (Butz & van Ooyen 2013).
// Every update_interval_ms (a whole number of ticks, from tick 0) synaptic elements are
// brought up to date, vacant ones paired at random into synapses and surplus connected ones
// deleted with their synapses, spec by spec in document order; draws from streams keyed by
// (seed, update, spec), so every partition makes the same synapses.
struct structural_plasticity {
    double update_interval_ms = 10000;
    std::uint64_t seed = 0;
    std::vector<structural_synapse> synapses;
    source_location where;
};

// A <population>, or a <spike-source> (params.model == spike_source): `size` members that
// take no input and put out, at each tick, the number of their spikes listed for it.
struct population {
    std::string id;
    std::int64_t size = 0;
    std::uint64_t seed = 0;
    neuron_params params;
    source_location where;
    // spike_source only. `spike_file` names a CSV (relative to the document) that the reader
    // loads into `spikes`; without it the spikes are inline <spike> children. Sorted by
    // tick, then index; a spike listed twice counts twice.
    std::string spike_file;
    std::vector<spike_time> spikes;
    // A Poisson spike source instead (`rate` given): member i spikes k ~ Poisson(rate_i dt /
    // 1000) times at each tick t with start <= t * dt < stop (ms), drawn from a stream keyed
    // by (seed, i, t). `rates` holds one rate for every member or one per member (Hz).
    std::vector<double> rates;
    double start = 0;
    std::optional<double> stop;
    // A spiking population's initial potential given per member (`v-init` with one value
    // per member, in mV): member i starts at v_inits[i]. Empty: params.v_init and its rule.
    std::vector<double> v_inits;
    // Structural plasticity: the members' synaptic elements, and their calcium (NEST's tau_Ca
    // in ms and beta_Ca, the jump per spike), which decays between spikes.
    std::vector<synaptic_element> synaptic_elements;
    double tau_ca = 10000;
    double beta_ca = 0.001;
};

struct synapse {
    std::string from, to;  // neuron references: `a` or `pop[i]`
    double weight = 1;
    std::int64_t delay = 1;  // ticks; unused when delay_ms is set
    source_location where;
    std::optional<double> delay_ms;  // the delay in ms, rounded to ticks against network::dt
    // The id of a <synapse-model>, or a model's name for its defaults (synapse_models.hpp);
    // empty: static_synapse.
    std::string synapse_model;
};

// A <synapse-model>: a synapse rule under NEST's name with parameters under NEST's names, as
// written (units as NEST's); projections and synapses name it by id. Parameters left out
// take the rule's defaults (synapse_models.hpp).
struct synapse_model {
    std::string id;
    std::string model;
    std::vector<std::pair<std::string, double>> params;  // in document order
    source_location where;
};

// A weight or a delay drawn per synapse: a <weight> or <delay> child of a projection. The
// parameters are as written (delays in ms); which ones a kind needs is checked by
// check_network: constant `value`; normal `mean`, `std`; uniform `min`, `max`; lognormal
// `mu`, `sigma` (of the underlying normal). `min` and `max` bound normal and lognormal draws.
struct distribution {
    distribution_kind kind = distribution_kind::constant;
    std::optional<double> value, mean, std, mu, sigma, min, max;
    source_location where;
};

// The connections of a kind="list" projection, one entry per connection: source and target
// as positions in the projection's `from` and `to`, the weight, the delay in ticks. Sorted by
// target, stably: a target's connections keep the order the list gives them, which is their
// canonical order (as if each were a <synapse> element, in that order).
struct connection_list {
    std::vector<std::uint32_t> sources, targets;
    std::vector<float> weights;
    std::vector<std::uint16_t> delays;
    std::size_t size() const { return sources.size(); }
};
bool operator==(const connection_list& a, const connection_list& b);

struct projection {
    std::string id;        // optional, unique among projections: how weights are asked for
    std::string from, to;  // group references: `a`, `pop`, `pop[i]`, `pop[i:j]`
    projection_kind kind = projection_kind::all;
    double weight = 1;
    std::int64_t delay = 1;
    std::optional<double> p;  // random: connection probability
    std::uint64_t seed = 0;
    bool autapses = true;  // may a neuron connect to itself
    // fixed_indegree: every target draws this many sources; with multapses a source may be
    // drawn more than once (parallel synapses), without them the sources are distinct.
    std::optional<std::int64_t> indegree;
    bool multapses = true;  // also for fixed_outdegree and fixed_total_number
    std::optional<std::int64_t> outdegree;  // fixed_outdegree: every source reaches this many targets
    std::optional<std::int64_t> total;      // fixed_total_number: the projection's synapses (n)
    std::optional<double> delay_ms;         // the delay in ms instead of `delay` ticks
    // Drawn per synapse instead of `weight` / `delay`.
    std::optional<distribution> weight_distribution, delay_distribution;
    // dense only
    dense_init init = dense_init::none;
    std::optional<double> scale;
    std::string weights_file;  // relative to the document
    std::optional<std::int64_t> rows, cols;
    bool split_rows = false;
    // list only: `connections_file` names a .npy file (relative to the document) that the
    // reader loads into `connections`; without it the connections are an inline
    // <connections> child.
    std::string connections_file;
    connection_list connections;
    source_location where;
    std::string synapse_model;  // as synapse::synapse_model
};

// A named list of neuron references at the lead: an input or an output.
struct port {
    std::string id;
    std::vector<std::string> neurons;
    source_location where;
};

// <poisson>: each neuron of `to` gets its own Poisson spike train of `rate` Hz; k spikes in a
// tick add k * weight to that tick's synaptic input. The count of neuron i at tick t is drawn
// from a stream keyed by (seed, i, t), so every partition draws the same spikes.
struct poisson_generator {
    std::vector<std::string> to;  // group references
    double rate = 0;              // Hz
    double weight = 1;
    std::uint64_t seed = 0;
    source_location where;
};

// A current generator, added to the external input of every neuron of `to` during the ticks
// t with start <= t * dt < stop (ms), in the unit of the target model's current (pA for
// NEST's models; the unit of u for the others):
// - <dc>: `amplitude`;
// - <ac>: offset + amplitude * sin(2 pi frequency t dt / 1000 + phase pi / 180), NEST's
//   ac_generator (frequency in Hz, phase in degrees);
// - <noise>: mean + std * N(0, 1), drawn afresh for each neuron every `interval_ms` (a whole
//   number of ticks, counted from tick 0; every tick without it) from a stream keyed by (seed, neuron, interval):
//   NEST's noise_generator, each target its own draws.
enum class current_shape { dc, ac, noise };
struct current_generator {
    current_shape shape = current_shape::dc;
    std::vector<std::string> to;  // group references
    double amplitude = 0;         // dc, ac
    double offset = 0, frequency = 0, phase = 0;   // ac
    double mean = 0, std = 0;                      // noise
    std::optional<double> interval_ms;             // noise; none: every tick
    std::uint64_t seed = 0;                        // noise
    double start = 0;
    std::optional<double> stop;  // none: forever
    source_location where;
};
const char* element_name(current_shape shape);  // "dc", "ac", "noise"

// A <record> element: the neurons whose spikes a run records. Without `neurons`, every
// neuron of a spiking model (is_spiking).
struct recording {
    std::optional<std::vector<std::string>> neurons;  // group references: `a`, `pop`, `pop[i:j]`
    source_location where;
    // State recording: with `variables` (recordable_variables of each neuron's model), these
    // are sampled every interval_ms (default: every tick) instead of the spikes.
    std::vector<std::string> variables;
    std::optional<double> interval_ms;
};

// Whether a <record> of the network records spikes (one without variables).
inline bool records_spikes(const std::vector<recording>& records) {
    for (const auto& r : records)
        if (r.variables.empty()) return true;
    return false;
}

// A synapse or projection, in document order (the canonical summation order).
struct connection_ref {
    enum class type { synapse, projection } kind;
    std::size_t index;  // into network::synapses or network::projections
};

// A <grow>: `add` new members join population `population` at `at_ms` (tick
// round(at_ms / dt)). An applied one is part of the network: its members are numbered after
// every neuron the network had before it (after the populations, then earlier grows, in
// document order), so no existing neuron's index changes, and the population's rules reach
// them (docs/simulation.md, "Growing populations"). The lead applies a scheduled one
// (applied false) when its tick comes, marking it applied in the document it keeps.
struct population_growth {
    std::string population;
    std::int64_t add = 0;
    double at_ms = 0;
    bool applied = false;
    source_location where;
};

struct network {
    std::string name;
    // The length of a tick in ms: what delays given in ms, spike times, rates and the
    // NEST-named models' integration step are measured against.
    double dt = 0.1;
    std::vector<neuron> neurons;
    std::vector<population> populations;
    std::vector<synapse_model> synapse_models;
    std::vector<synapse> synapses;
    std::vector<projection> projections;
    std::vector<connection_ref> connection_order;
    std::vector<port> inputs, outputs;
    std::vector<poisson_generator> poisson;  // in document order: the order they add in
    std::vector<current_generator> currents;  // <dc>, <ac> and <noise>, in document order
    std::vector<recording> records;
    std::optional<structural_plasticity> structural;
    // In document order, which is the order of their ticks (at_ms never decreases), the
    // applied ones first.
    std::vector<population_growth> grows;
    source_location where;
};

// A delay given in ms as ticks of `dt` ms: round half up. A relative tolerance of 1e-12
// lets decimal halves (0.15 ms at dt 0.1) round up although ms / dt falls just below them.
// Inline: a node rounds every drawn delay with it.
inline std::int64_t ticks_of_ms(double ms, double dt) {
    const double ticks = ms / dt * (1 + 1e-12) + 0.5;  // floored below
    if (std::isnan(ticks)) return 0;
    if (ticks >= 9.2e18) return std::numeric_limits<std::int64_t>::max();
    if (ticks <= -9.2e18) return std::numeric_limits<std::int64_t>::min();
    // floor() by truncation (floor is a call without SSE4.1, and a node floors every drawn delay).
    const auto truncated = static_cast<std::int64_t>(ticks);
    return truncated - (static_cast<double>(truncated) > ticks);
}
// The delay in ticks of an explicit synapse or of a projection with a constant delay.
std::int64_t delay_ticks(const synapse& s, double dt);
std::int64_t delay_ticks(const projection& p, double dt);
std::int64_t delay_ticks(const structural_synapse& s, double dt);

struct cluster_node {
    std::string id;
    std::string host = "127.0.0.1";
    std::int32_t port = 0;
    double capacity = 1;
    source_location where;
};

struct cluster_link {
    std::string from, to;
    double emulate_delay_ms = 0;
    std::optional<double> bandwidth_bps;  // declared capacity, bits per second (rate.hpp)
    source_location where;
};

struct cluster {
    std::string lead;
    std::vector<cluster_node> nodes;
    std::vector<cluster_link> links;
    source_location where;
};

// The most lanes a run may have (<run batch>).
inline constexpr std::int32_t max_batch = 4096;

struct run_settings {
    sync_mode sync = sync_mode::lockstep;
    send_mode send = send_mode::always;
    compress_mode compress = compress_mode::auto_;
    std::string clock;  // empty: the lead
    double tick_period_ms = 0;  // 0: free-running
    std::int64_t checkpoint_every = 0;
    std::int32_t checkpoint_keep = 3;
    std::int32_t fan_out = 3;
    // Lanes: independent copies of the network's state run side by side, one input pattern
    // each; dense projections run them as one matrix-matrix product.
    std::int32_t batch = 1;
    // weight-precision="half": every synapse weight is kept as the nearest IEEE binary16
    // value (2 bytes, not 4), the same on every node and path (docs/simulation.md, "Weights
    // in 16 bits"); dense projections and grown synapses keep theirs in 32 bits.
    bool half_weights = false;
    std::int32_t probes = 16;
    // Loaded probes per link and direction for its throughput (lead.hpp); 0: not measured.
    std::int32_t throughput_probes = 3;
    double window_factor = 1.5;
    double window_margin_ms = 0.5;
    double heartbeat_timeout_ms = 2000;
    // rebalance="auto": the lead re-balances by itself when the slowest node's compute time
    // per tick stays above rebalance_threshold x the nodes' mean for rebalance_after_ms, and
    // its moves pause the run for at most rebalance_pause_share of it: after a move that
    // paused it P, the next comes no sooner than P / rebalance_pause_share after it.
    bool rebalance_auto = false;
    double rebalance_threshold = 1.15;
    double rebalance_after_ms = 2000;
    double rebalance_pause_share = 0.02;
    source_location where;
};

// A neuron's recent spikes as plastic synapses read them: the ticks of its last spikes, oldest
// first, and a trace's value just after each. The trace is the neuron's K- (post, time
// constant tau_minus) or a source trace K+ of time constant `tau` ms (0: spike times only).
struct spike_trace {
    double tau = 0;
    bool post = false;
    std::vector<std::int64_t> ticks;
    std::vector<double> values;
};

struct neuron_state {
    std::string id;
    double output = 0;
    std::vector<double> state;
    std::vector<double> history;  // newest first
    source_location where;
    // Networks with plastic synapses only: the neuron's traces, and the state of its incoming
    // plastic synapses in canonical order, per synapse its stored weight, then its rule's values.
    std::vector<spike_trace> traces;
    std::vector<double> synapses;
    // Neurons with synaptic elements (structural plasticity) only: their growth, laid out as
    // sim::neuron_state's (docs/snapshots.md): calcium, elements and the grown synapses into it.
    std::vector<double> growth;
};

// The latest tick a state may be at (check_state): beyond any run (2^53 ticks of 0.1 ms are
// 28,000 years), and far enough below the clock's "for ever" (2^60) that every step from
// it still fits.
inline constexpr std::int64_t max_state_tick = std::int64_t{1} << 53;
// The most ticks a count may name wherever it enters (a run's or a step's ticks, the ticks
// between checkpoints): as many as a state may be at, so that a step from any state that
// can be continued still ends before the clock's "for ever".
inline constexpr std::int64_t max_tick_count = max_state_tick;
// The longest time a run setting may name (tick-period, window-margin, heartbeat-timeout):
// a day, so that every duration derived from one fits the clocks' tick counts.
inline constexpr double max_setting_ms = 86'400'000;
// The largest window-factor: a window of 1,000 measured latencies waits for ever already.
inline constexpr double max_window_factor = 1000;

struct snapshot_state {
    std::int64_t tick = 0;
    std::vector<neuron_state> neurons;
    source_location where;
};

// A whole DNNC document. Each part is optional in the file; commands say what they need.
struct document {
    std::string file;  // where it was read from, for messages and relative paths
    std::optional<network> net;
    std::optional<cluster> clu;
    std::optional<run_settings> run;
    std::optional<snapshot_state> state;
};

// One node's configuration (node.xsd), nested along the broadcast tree.
struct peer_route {
    std::string id;
    std::string host = "127.0.0.1";
    std::int32_t port = 0;
    std::vector<std::string> via;
    double latency_ms = 0;
    double emulate_delay_ms = 0;  // held back on everything sent to this peer (tests, demos)
    std::vector<std::int64_t> sends, receives;  // global neuron indices, ascending
    bool compress = false;  // signal packets to this peer go LZ4-compressed (plan/compression.hpp)
};

struct local_neuron {
    std::string id;
    std::int64_t index = 0;
    double window_ms = 0;
    std::uint64_t seed = 0;  // of its population
    bool report = false;     // an output: sent to the lead every tick
    bool record = false;     // its spikes are recorded: sent to the lead with each tick
    neuron_params params;
};

// The rows of a dense projection that live on one node (weights row-major): targets[k] is
// row rows[k] of a projection of projection_rows rows (rows empty: 0, 1, ...; projection_rows
// 0: as many as targets), which places it on the projection's row grid.
struct dense_rows {
    std::vector<std::int64_t> sources, targets;
    std::int64_t delay = 1;
    std::vector<float> weights;
    std::vector<std::int64_t> rows;
    std::int64_t projection_rows = 0;
};

struct node_config {
    std::string node, network, lead;
    std::string lead_host = "127.0.0.1";  // where tick reports go
    std::int32_t lead_port = 0;
    std::string lead_via;  // HOST:PORT of the sub-lead that carries this node's connections to the lead; empty: none
    std::string host = "127.0.0.1";
    std::int32_t port = 0;
    std::int32_t history = 1;  // ticks of output history kept: the network's longest delay
    // Names this installation of the network, the same on every node: the lead draws a new
    // one each time it installs configs, and nodes drop signals of any other (a packet
    // sent before the network was replaced or restored).
    std::uint64_t epoch = 0;
    run_settings run;
    std::vector<peer_route> peers;
    std::vector<local_neuron> neurons;
    // The network with only the synapses into this node's neurons and without dense
    // projections: expanding it gives this node's incoming synapses in canonical order.
    std::optional<model::network> share;
    std::vector<dense_rows> dense;
    std::vector<node_config> children;
};

// One packet of signals for one tick from one node to another (signals.xsd).
struct signal_value {
    std::string neuron;
    double value = 0;
};

struct signal_packet {
    std::string from, to;
    std::int64_t tick = 0;
    bool complete = true;
    std::vector<signal_value> signals;
};

#define DNNC_DECLARE_EQ(T) bool operator==(const T& a, const T& b); \
    inline bool operator!=(const T& a, const T& b) { return !(a == b); }
DNNC_DECLARE_EQ(neuron)
DNNC_DECLARE_EQ(population)
DNNC_DECLARE_EQ(synapse)
DNNC_DECLARE_EQ(synapse_model)
DNNC_DECLARE_EQ(distribution)
DNNC_DECLARE_EQ(projection)
DNNC_DECLARE_EQ(port)
DNNC_DECLARE_EQ(synaptic_element)
DNNC_DECLARE_EQ(structural_synapse)
DNNC_DECLARE_EQ(structural_plasticity)
DNNC_DECLARE_EQ(poisson_generator)
DNNC_DECLARE_EQ(current_generator)
DNNC_DECLARE_EQ(recording)
DNNC_DECLARE_EQ(population_growth)
DNNC_DECLARE_EQ(connection_ref)
DNNC_DECLARE_EQ(network)
DNNC_DECLARE_EQ(cluster_node)
DNNC_DECLARE_EQ(cluster_link)
DNNC_DECLARE_EQ(cluster)
DNNC_DECLARE_EQ(run_settings)
DNNC_DECLARE_EQ(spike_trace)
DNNC_DECLARE_EQ(neuron_state)
DNNC_DECLARE_EQ(snapshot_state)
DNNC_DECLARE_EQ(document)
DNNC_DECLARE_EQ(peer_route)
DNNC_DECLARE_EQ(local_neuron)
DNNC_DECLARE_EQ(dense_rows)
DNNC_DECLARE_EQ(node_config)
DNNC_DECLARE_EQ(signal_value)
DNNC_DECLARE_EQ(signal_packet)
#undef DNNC_DECLARE_EQ
inline bool operator!=(const neuron_params& a, const neuron_params& b) { return !(a == b); }

}  // namespace dnnc::model
