#include "dnnc/model/model.hpp"

#include <cmath>
#include <limits>
#include <tuple>

namespace dnnc::model {

const char* to_string(neuron_model m) {
    switch (m) {
    case neuron_model::linear: return "linear";
    case neuron_model::step: return "step";
    case neuron_model::sigmoid: return "sigmoid";
    case neuron_model::tanh: return "tanh";
    case neuron_model::relu: return "relu";
    case neuron_model::lif: return "lif";
    case neuron_model::iaf_psc_exp: return "iaf_psc_exp";
    case neuron_model::iaf_psc_delta: return "iaf_psc_delta";
    case neuron_model::iaf_psc_alpha: return "iaf_psc_alpha";
    case neuron_model::izhikevich: return "izhikevich";
    case neuron_model::iaf_cond_exp: return "iaf_cond_exp";
    case neuron_model::iaf_cond_alpha: return "iaf_cond_alpha";
    case neuron_model::aeif_cond_exp: return "aeif_cond_exp";
    case neuron_model::aeif_cond_alpha: return "aeif_cond_alpha";
    case neuron_model::hh_cond_exp_traub: return "hh_cond_exp_traub";
    case neuron_model::spike_source: return "spike-source";
    }
    return "?";
}

const std::vector<std::string>& state_variable_names(neuron_model m) {
    static const std::vector<std::string> none;
    static const std::vector<std::string> lif{"v", "ge", "gi", "refractory"};
    static const std::vector<std::string> psc_exp{"V_m", "i_syn_ex", "i_syn_in", "refractory"};
    static const std::vector<std::string> psc_delta{"V_m", "refractory"};
    static const std::vector<std::string> izhikevich{"V_m", "U_m"};
    static const std::vector<std::string> cond_exp{"V_m", "g_ex", "g_in", "refractory"};
    static const std::vector<std::string> cond_alpha{"V_m", "g_ex", "g_in", "dg_ex", "dg_in", "refractory"};
    static const std::vector<std::string> aeif{"V_m", "g_ex", "g_in", "w", "refractory"};
    static const std::vector<std::string> aeif_alpha{"V_m", "g_ex", "g_in", "w", "dg_ex", "dg_in", "refractory"};
    static const std::vector<std::string> hh{"V_m", "g_ex", "g_in", "Act_m", "Inact_h", "Act_n", "refractory"};
    static const std::vector<std::string> psc_alpha{"V_m", "i_syn_ex", "i_syn_in", "di_syn_ex", "di_syn_in", "refractory"};
    switch (m) {
    case neuron_model::lif: return lif;
    case neuron_model::iaf_psc_exp: return psc_exp;
    case neuron_model::iaf_psc_delta: return psc_delta;
    case neuron_model::iaf_psc_alpha: return psc_alpha;
    case neuron_model::izhikevich: return izhikevich;
    case neuron_model::iaf_cond_exp: return cond_exp;
    case neuron_model::iaf_cond_alpha: return cond_alpha;
    case neuron_model::aeif_cond_exp: return aeif;
    case neuron_model::aeif_cond_alpha: return aeif_alpha;
    case neuron_model::hh_cond_exp_traub: return hh;
    default: return none;
    }
}

const std::vector<std::string>& recordable_variables(neuron_model m) {
    static const std::vector<std::string> none;
    static const std::vector<std::string> lif{"v", "ge", "gi"};
    static const std::vector<std::string> psc{"V_m", "I_syn_ex", "I_syn_in"};
    static const std::vector<std::string> psc_delta{"V_m"};
    static const std::vector<std::string> izhikevich{"V_m", "U_m"};
    static const std::vector<std::string> cond{"V_m", "g_ex", "g_in"};
    static const std::vector<std::string> aeif{"V_m", "g_ex", "g_in", "w"};
    static const std::vector<std::string> hh{"V_m", "g_ex", "g_in", "Act_m", "Inact_h", "Act_n"};
    switch (m) {
    case neuron_model::lif: return lif;
    case neuron_model::iaf_psc_exp:
    case neuron_model::iaf_psc_alpha: return psc;
    case neuron_model::iaf_psc_delta: return psc_delta;
    case neuron_model::izhikevich: return izhikevich;
    case neuron_model::iaf_cond_exp:
    case neuron_model::iaf_cond_alpha: return cond;
    case neuron_model::aeif_cond_exp:
    case neuron_model::aeif_cond_alpha: return aeif;
    case neuron_model::hh_cond_exp_traub: return hh;
    default: return none;
    }
}

const char* to_string(projection_kind k) {
    switch (k) {
    case projection_kind::all: return "all";
    case projection_kind::one_to_one: return "one-to-one";
    case projection_kind::random: return "random";
    case projection_kind::fixed_indegree: return "fixed-indegree";
    case projection_kind::fixed_outdegree: return "fixed-outdegree";
    case projection_kind::fixed_total_number: return "fixed-total-number";
    case projection_kind::dense: return "dense";
    case projection_kind::list: return "list";
    }
    return "?";
}

const char* to_string(dense_init i) {
    switch (i) {
    case dense_init::none: return "";
    case dense_init::normal: return "normal";
    case dense_init::uniform: return "uniform";
    case dense_init::zeros: return "zeros";
    }
    return "?";
}

const char* to_string(distribution_kind d) {
    switch (d) {
    case distribution_kind::constant: return "constant";
    case distribution_kind::normal: return "normal";
    case distribution_kind::uniform: return "uniform";
    case distribution_kind::lognormal: return "lognormal";
    }
    return "?";
}

std::int64_t delay_ticks(const synapse& s, double dt) { return s.delay_ms ? ticks_of_ms(*s.delay_ms, dt) : s.delay; }
std::int64_t delay_ticks(const projection& p, double dt) { return p.delay_ms ? ticks_of_ms(*p.delay_ms, dt) : p.delay; }
std::int64_t delay_ticks(const structural_synapse& s, double dt) { return s.delay_ms ? ticks_of_ms(*s.delay_ms, dt) : s.delay; }

const char* to_string(sync_mode s) { return s == sync_mode::lockstep ? "lockstep" : "window"; }
const char* to_string(send_mode s) { return s == send_mode::always ? "always" : "nonzero"; }
const char* to_string(compress_mode c) {
    return c == compress_mode::auto_ ? "auto" : c == compress_mode::always ? "always" : "never";
}

// Equality compares values only: source locations and the file name are not part of a
// document's meaning.
bool operator==(const iaf_params& a, const iaf_params& b) {
    auto t = [](const iaf_params& p) {
        return std::tie(p.c_m, p.tau_m, p.tau_syn_ex, p.tau_syn_in, p.t_ref, p.e_l, p.v_th, p.v_reset, p.i_e, p.g_l, p.e_ex,
                        p.e_in);
    };
    return t(a) == t(b);
}
iaf_params iaf_defaults(neuron_model m) {
    iaf_params p;
    if (is_cond(m)) {
        p.v_reset = -60;
        p.tau_syn_ex = 0.2;
    }
    if (is_adex(m)) {
        p.c_m = 281;
        p.g_l = 30;
        p.e_l = -70.6;
        p.v_th = -50.4;
        p.t_ref = 0;
    }
    if (is_hh(m)) {
        p.c_m = 200;
        p.g_l = 10;
        p.e_l = -60;
        p.e_in = -80;
        p.tau_syn_ex = 5;
        p.tau_syn_in = 10;
    }
    return p;
}
bool operator==(const adex_params& a, const adex_params& b) {
    auto t = [](const adex_params& p) { return std::tie(p.delta_t, p.tau_w, p.a, p.b, p.v_peak); };
    return t(a) == t(b);
}
bool operator==(const hh_params& a, const hh_params& b) {
    auto t = [](const hh_params& p) { return std::tie(p.g_na, p.g_k, p.e_na, p.e_k, p.v_t); };
    return t(a) == t(b);
}
bool operator==(const izhikevich_params& a, const izhikevich_params& b) {
    auto t = [](const izhikevich_params& p) { return std::tie(p.a, p.b, p.c, p.d, p.v_th, p.v_min, p.consistent_integration); };
    return t(a) == t(b);
}
bool operator==(const neuron_params& a, const neuron_params& b) {
    auto t = [](const neuron_params& p) {
        return std::tie(p.model, p.bias, p.threshold, p.tau_m, p.v_rest, p.v_reset, p.v_th,
                        p.refractory, p.tau_e, p.tau_i, p.dt, p.iaf, p.izhikevich, p.adex, p.hh, p.v_init, p.v_init_max, p.v_init_std, p.u_init, p.tau_minus);
    };
    return t(a) == t(b);
}
bool operator==(const neuron& a, const neuron& b) {
    return a.id == b.id && a.params == b.params;
}
bool operator==(const spike_time& a, const spike_time& b) { return a.index == b.index && a.tick == b.tick; }
bool operator==(const population& a, const population& b) {
    auto t = [](const population& p) {
        return std::tie(p.id, p.size, p.seed, p.params, p.spike_file, p.spikes, p.rates, p.start, p.stop, p.v_inits,
                        p.synaptic_elements, p.tau_ca, p.beta_ca);
    };
    return t(a) == t(b);
}
bool operator==(const growth_curve& a, const growth_curve& b) {
    auto t = [](const growth_curve& c) { return std::tie(c.growth_rate, c.eta, c.eps, c.continuous, c.tau_vacant, c.z); };
    return t(a) == t(b);
}
bool operator==(const synaptic_element& a, const synaptic_element& b) { return a.name == b.name && a.curve == b.curve; }
bool operator==(const structural_synapse& a, const structural_synapse& b) {
    auto t = [](const structural_synapse& s) {
        return std::tie(s.id, s.pre_element, s.post_element, s.synapse_model, s.weight, s.delay, s.delay_ms);
    };
    return t(a) == t(b);
}
bool operator==(const structural_plasticity& a, const structural_plasticity& b) {
    return std::tie(a.update_interval_ms, a.seed, a.synapses) == std::tie(b.update_interval_ms, b.seed, b.synapses);
}
bool operator==(const synapse& a, const synapse& b) {
    return std::tie(a.from, a.to, a.weight, a.delay, a.delay_ms, a.synapse_model) ==
           std::tie(b.from, b.to, b.weight, b.delay, b.delay_ms, b.synapse_model);
}
bool operator==(const synapse_model& a, const synapse_model& b) {
    return std::tie(a.id, a.model, a.params) == std::tie(b.id, b.model, b.params);
}
bool operator==(const distribution& a, const distribution& b) {
    auto t = [](const distribution& d) { return std::tie(d.kind, d.value, d.mean, d.std, d.mu, d.sigma, d.min, d.max); };
    return t(a) == t(b);
}
bool operator==(const projection& a, const projection& b) {
    auto t = [](const projection& p) {
        return std::tie(p.id, p.from, p.to, p.kind, p.weight, p.delay, p.p, p.seed, p.autapses, p.indegree, p.multapses, p.outdegree,
                        p.total, p.delay_ms, p.weight_distribution, p.delay_distribution, p.init,
                        p.scale, p.weights_file, p.rows, p.cols, p.split_rows, p.connections_file, p.connections, p.synapse_model);
    };
    return t(a) == t(b);
}
bool operator==(const connection_list& a, const connection_list& b) {
    return std::tie(a.sources, a.targets, a.weights, a.delays) == std::tie(b.sources, b.targets, b.weights, b.delays);
}
bool operator==(const port& a, const port& b) {
    return a.id == b.id && a.neurons == b.neurons;
}
bool operator==(const poisson_generator& a, const poisson_generator& b) {
    return std::tie(a.to, a.rate, a.weight, a.seed) == std::tie(b.to, b.rate, b.weight, b.seed);
}
const char* element_name(current_shape shape) {
    switch (shape) {
        case current_shape::dc: return "dc";
        case current_shape::ac: return "ac";
        case current_shape::noise: return "noise";
    }
    return "dc";
}
bool operator==(const current_generator& a, const current_generator& b) {
    auto t = [](const current_generator& g) {
        return std::tie(g.shape, g.to, g.amplitude, g.offset, g.frequency, g.phase, g.mean, g.std, g.interval_ms, g.seed, g.start,
                        g.stop);
    };
    return t(a) == t(b);
}
bool operator==(const recording& a, const recording& b) {
    return std::tie(a.neurons, a.variables, a.interval_ms) == std::tie(b.neurons, b.variables, b.interval_ms);
}
bool operator==(const connection_ref& a, const connection_ref& b) {
    return a.kind == b.kind && a.index == b.index;
}
bool operator==(const population_growth& a, const population_growth& b) {
    return std::tie(a.population, a.add, a.at_ms, a.applied) == std::tie(b.population, b.add, b.at_ms, b.applied);
}
bool operator==(const network& a, const network& b) {
    auto t = [](const network& n) {
        return std::tie(n.name, n.dt, n.neurons, n.populations, n.synapse_models, n.synapses, n.projections,
                        n.connection_order, n.inputs, n.outputs, n.poisson, n.currents, n.records, n.structural, n.grows);
    };
    return t(a) == t(b);
}
bool operator==(const cluster_node& a, const cluster_node& b) {
    return std::tie(a.id, a.host, a.port, a.capacity) == std::tie(b.id, b.host, b.port, b.capacity);
}
bool operator==(const cluster_link& a, const cluster_link& b) {
    return std::tie(a.from, a.to, a.emulate_delay_ms, a.bandwidth_bps) == std::tie(b.from, b.to, b.emulate_delay_ms, b.bandwidth_bps);
}
bool operator==(const cluster& a, const cluster& b) {
    return std::tie(a.lead, a.nodes, a.links) == std::tie(b.lead, b.nodes, b.links);
}
bool operator==(const run_settings& a, const run_settings& b) {
    auto t = [](const run_settings& r) {
        return std::tie(r.sync, r.send, r.compress, r.clock, r.tick_period_ms, r.checkpoint_every,
                        r.checkpoint_keep, r.fan_out, r.batch, r.half_weights, r.probes, r.throughput_probes, r.window_factor,
                        r.window_margin_ms, r.heartbeat_timeout_ms, r.rebalance_auto, r.rebalance_threshold,
                        r.rebalance_after_ms, r.rebalance_pause_share);
    };
    return t(a) == t(b);
}
bool operator==(const spike_trace& a, const spike_trace& b) {
    return std::tie(a.tau, a.post, a.ticks, a.values) == std::tie(b.tau, b.post, b.ticks, b.values);
}
bool operator==(const neuron_state& a, const neuron_state& b) {
    return std::tie(a.id, a.output, a.state, a.history, a.traces, a.synapses, a.growth) ==
           std::tie(b.id, b.output, b.state, b.history, b.traces, b.synapses, b.growth);
}
bool operator==(const snapshot_state& a, const snapshot_state& b) {
    return a.tick == b.tick && a.neurons == b.neurons;
}
bool operator==(const document& a, const document& b) {
    return std::tie(a.net, a.clu, a.run, a.state) == std::tie(b.net, b.clu, b.run, b.state);
}
bool operator==(const peer_route& a, const peer_route& b) {
    return std::tie(a.id, a.host, a.port, a.via, a.latency_ms, a.emulate_delay_ms, a.sends, a.receives, a.compress) ==
           std::tie(b.id, b.host, b.port, b.via, b.latency_ms, b.emulate_delay_ms, b.sends, b.receives, b.compress);
}
bool operator==(const local_neuron& a, const local_neuron& b) {
    return std::tie(a.id, a.index, a.window_ms, a.seed, a.report, a.record, a.params) ==
           std::tie(b.id, b.index, b.window_ms, b.seed, b.report, b.record, b.params);
}
bool operator==(const dense_rows& a, const dense_rows& b) {
    return std::tie(a.sources, a.targets, a.delay, a.weights, a.rows, a.projection_rows) ==
           std::tie(b.sources, b.targets, b.delay, b.weights, b.rows, b.projection_rows);
}
bool operator==(const node_config& a, const node_config& b) {
    auto t = [](const node_config& c) {
        return std::tie(c.node, c.network, c.lead, c.lead_host, c.lead_port, c.lead_via, c.host, c.port, c.history, c.epoch, c.run, c.peers,
                        c.neurons, c.share, c.dense, c.children);
    };
    return t(a) == t(b);
}
bool operator==(const signal_value& a, const signal_value& b) {
    return a.neuron == b.neuron && a.value == b.value;
}
bool operator==(const signal_packet& a, const signal_packet& b) {
    return std::tie(a.from, a.to, a.tick, a.complete, a.signals) ==
           std::tie(b.from, b.to, b.tick, b.complete, b.signals);
}

}  // namespace dnnc::model
