// Writing DNNC documents. A streaming writer rather than a DOM serializer: snapshots of
// 10M-synapse networks must not need the whole tree in memory. Attributes equal to their
// schema default are left out; numbers are written in their shortest exact form, so that
// parse(serialize(x)) == x. The round-trip tests validate the output against the schemas.
#include "dnnc/protocol/xml.hpp"
#include "dnnc/protocol/rate.hpp"

#include "connection_list.hpp"
#include "text.hpp"

namespace dnnc::protocol {
using namespace model;  // the values this codec reads and writes
namespace {

class xml_out {
public:
    explicit xml_out(std::string& out) : out_(out) {}

    void open(const char* name, bool root = false) {
        close_start_tag();
        indent();
        out_ += '<';
        out_ += name;
        if (root) out_ += " xmlns=\"urn:dnnc:1\"";
        open_ = true;
        stack_.push_back(name);
        has_children_.push_back(false);
    }
    void close() {
        const char* name = stack_.back();
        const bool children = has_children_.back();
        stack_.pop_back();
        has_children_.pop_back();
        if (open_) {
            out_ += "/>\n";
            open_ = false;
            return;
        }
        if (children) indent();
        out_ += "</";
        out_ += name;
        out_ += ">\n";
    }
    void attr(const char* name, const std::string& value) {
        out_ += ' ';
        out_ += name;
        out_ += "=\"";
        escape(value);
        out_ += '"';
    }
    void attr(const char* name, double value) { attr(name, text::from_double(value)); }
    void attr(const char* name, std::int64_t value) { attr(name, std::to_string(value)); }
    void attr(const char* name, std::uint64_t value) { attr(name, std::to_string(value)); }
    void attr(const char* name, std::int32_t value) { attr(name, std::to_string(value)); }
    void attr_if(const char* name, double value, double fallback) {
        if (!(value == fallback)) attr(name, value);
    }
    template <typename T>
    void attr_if(const char* name, const std::optional<T>& value) {
        if (value) attr(name, *value);
    }
    void attr_if(const char* name, const std::string& value) {
        if (!value.empty()) attr(name, value);
    }
    void words(const char* name, const std::vector<std::string>& items) {
        std::string joined;
        for (const auto& item : items) joined += (joined.empty() ? "" : " ") + item;
        attr(name, joined);
    }
    void integers(const char* name, const std::vector<std::int64_t>& items) {
        if (items.empty()) return;
        std::string joined;
        for (auto i : items) {
            if (!joined.empty()) joined += ' ';
            joined += std::to_string(i);
        }
        attr(name, joined);
    }
    void reals(const char* name, const std::vector<double>& items) {
        if (items.empty()) return;
        std::string joined;
        for (double d : items) joined += (joined.empty() ? "" : " ") + text::from_double(d);
        attr(name, joined);
    }
    // An element holding only `text`, which needs no escaping (base64).
    void text_element(const char* name, const std::string& text) {
        close_start_tag();
        indent();
        out_ += '<';
        out_ += name;
        out_ += '>';
        out_ += text;
        out_ += "</";
        out_ += name;
        out_ += ">\n";
    }

private:
    void close_start_tag() {
        if (open_) {
            out_ += ">\n";
            open_ = false;
        }
        if (!has_children_.empty()) has_children_.back() = true;
    }
    void indent() { out_.append(2 * stack_.size(), ' '); }
    void escape(const std::string& s) {
        for (char c : s) {
            switch (c) {
            case '&': out_ += "&amp;"; break;
            case '<': out_ += "&lt;"; break;
            case '>': out_ += "&gt;"; break;
            case '"': out_ += "&quot;"; break;
            case '\n': out_ += "&#10;"; break;
            case '\t': out_ += "&#9;"; break;
            case '\r': out_ += "&#13;"; break;
            default: out_ += c;
            }
        }
    }

    std::string& out_;
    std::vector<const char*> stack_;
    std::vector<bool> has_children_;
    bool open_ = false;
};

void write_params(xml_out& x, const neuron_params& p) {
    neuron_params d;
    d.iaf = iaf_defaults(p.model);
    x.attr("model", to_string(p.model));
    x.attr_if("bias", p.bias, d.bias);
    x.attr_if("threshold", p.threshold, d.threshold);
    x.attr_if("tau-m", p.tau_m, d.tau_m);
    x.attr_if("v-rest", p.v_rest, d.v_rest);
    x.attr_if("v-reset", p.v_reset, d.v_reset);
    x.attr_if("v-th", p.v_th, d.v_th);
    if (p.refractory != d.refractory) x.attr("refractory", p.refractory);
    x.attr_if("tau-e", p.tau_e, d.tau_e);
    x.attr_if("tau-i", p.tau_i, d.tau_i);
    x.attr_if("dt", p.dt, d.dt);
    x.attr_if("C_m", p.iaf.c_m, d.iaf.c_m);
    x.attr_if("tau_m", p.iaf.tau_m, d.iaf.tau_m);
    x.attr_if("tau_syn_ex", p.iaf.tau_syn_ex, d.iaf.tau_syn_ex);
    x.attr_if("tau_syn_in", p.iaf.tau_syn_in, d.iaf.tau_syn_in);
    x.attr_if("t_ref", p.iaf.t_ref, d.iaf.t_ref);
    x.attr_if("E_L", p.iaf.e_l, d.iaf.e_l);
    x.attr_if("V_th", p.iaf.v_th, d.iaf.v_th);
    x.attr_if("V_reset", p.iaf.v_reset, d.iaf.v_reset);
    x.attr_if("I_e", p.iaf.i_e, d.iaf.i_e);
    x.attr_if("g_L", p.iaf.g_l, d.iaf.g_l);
    x.attr_if("E_ex", p.iaf.e_ex, d.iaf.e_ex);
    x.attr_if("E_in", p.iaf.e_in, d.iaf.e_in);
    x.attr_if("a", p.izhikevich.a, d.izhikevich.a);
    x.attr_if("b", p.izhikevich.b, d.izhikevich.b);
    x.attr_if("c", p.izhikevich.c, d.izhikevich.c);
    x.attr_if("d", p.izhikevich.d, d.izhikevich.d);
    x.attr_if("V_th", p.izhikevich.v_th, d.izhikevich.v_th);
    x.attr_if("V_min", p.izhikevich.v_min, d.izhikevich.v_min);
    if (!p.izhikevich.consistent_integration) x.attr("consistent_integration", std::string("false"));
    x.attr_if("Delta_T", p.adex.delta_t, d.adex.delta_t);
    x.attr_if("tau_w", p.adex.tau_w, d.adex.tau_w);
    x.attr_if("a", p.adex.a, d.adex.a);
    x.attr_if("b", p.adex.b, d.adex.b);
    x.attr_if("V_peak", p.adex.v_peak, d.adex.v_peak);
    x.attr_if("g_Na", p.hh.g_na, d.hh.g_na);
    x.attr_if("g_K", p.hh.g_k, d.hh.g_k);
    x.attr_if("E_Na", p.hh.e_na, d.hh.e_na);
    x.attr_if("E_K", p.hh.e_k, d.hh.e_k);
    x.attr_if("V_T", p.hh.v_t, d.hh.v_t);
    x.attr_if("v-init", p.v_init);
    x.attr_if("v-init-max", p.v_init_max);
    x.attr_if("v-init-std", p.v_init_std);
    x.attr_if("u-init", p.u_init);
    x.attr_if("tau_minus", p.tau_minus, d.tau_minus);
}

void write_run(xml_out& x, const run_settings& r) {
    const run_settings d;
    x.open("run");
    if (r.sync != d.sync) x.attr("sync", to_string(r.sync));
    if (r.send != d.send) x.attr("send", to_string(r.send));
    if (r.compress != d.compress) x.attr("compress", to_string(r.compress));
    x.attr_if("clock", r.clock);
    x.attr_if("tick-period", r.tick_period_ms, d.tick_period_ms);
    if (r.checkpoint_every != d.checkpoint_every) x.attr("checkpoint-every", r.checkpoint_every);
    if (r.checkpoint_keep != d.checkpoint_keep) x.attr("checkpoint-keep", r.checkpoint_keep);
    if (r.fan_out != d.fan_out) x.attr("fan-out", r.fan_out);
    if (r.batch != d.batch) x.attr("batch", r.batch);
    if (r.half_weights) x.attr("weight-precision", std::string("half"));
    if (r.probes != d.probes) x.attr("probes", r.probes);
    if (r.throughput_probes != d.throughput_probes) x.attr("throughput-probes", r.throughput_probes);
    x.attr_if("window-factor", r.window_factor, d.window_factor);
    x.attr_if("window-margin", r.window_margin_ms, d.window_margin_ms);
    x.attr_if("heartbeat-timeout", r.heartbeat_timeout_ms, d.heartbeat_timeout_ms);
    if (r.rebalance_auto) x.attr("rebalance", std::string("auto"));
    x.attr_if("rebalance-threshold", r.rebalance_threshold, d.rebalance_threshold);
    x.attr_if("rebalance-after", r.rebalance_after_ms, d.rebalance_after_ms);
    x.attr_if("rebalance-pause-share", r.rebalance_pause_share, d.rebalance_pause_share);
    x.close();
}

void write_distribution(xml_out& x, const char* name, const distribution& d) {
    x.open(name);
    x.attr("distribution", std::string(to_string(d.kind)));
    x.attr_if("value", d.value);
    x.attr_if("mean", d.mean);
    x.attr_if("std", d.std);
    x.attr_if("mu", d.mu);
    x.attr_if("sigma", d.sigma);
    x.attr_if("min", d.min);
    x.attr_if("max", d.max);
    x.close();
}

// A spike source names its file, or lists its spikes (as ms, which read back as the same
// ticks).
void write_spike_source(xml_out& x, const population& p, double dt) {
    x.open("spike-source");
    x.attr("id", p.id);
    x.attr("size", p.size);
    x.attr_if("file", p.spike_file);
    if (!p.rates.empty()) {
        x.reals("rate", p.rates);
        if (p.seed != 0) x.attr("seed", p.seed);
        x.attr_if("start", p.start, 0.0);
        x.attr_if("stop", p.stop);
    }
    if (p.spike_file.empty())
        for (const auto& s : p.spikes) {
            x.open("spike");
            x.attr("t-ms", static_cast<double>(s.tick) * dt);
            x.attr("index", s.index);
            x.close();
        }
    x.close();
}

void write_synaptic_element(xml_out& x, const synaptic_element& e) {
    const growth_curve d;
    x.open("synaptic-element");
    x.attr("name", e.name);
    x.attr_if("growth_rate", e.curve.growth_rate, d.growth_rate);
    x.attr_if("eta", e.curve.eta, d.eta);
    x.attr_if("eps", e.curve.eps, d.eps);
    if (e.curve.continuous != d.continuous) x.attr("continuous", std::string(e.curve.continuous ? "true" : "false"));
    x.attr_if("tau_vacant", e.curve.tau_vacant, d.tau_vacant);
    x.attr_if("z", e.curve.z, d.z);
    x.close();
}

// The weight, delay and synapse model of a <synapse> or a <structural-synapse>, where not the defaults.
template <class S>
void write_synapse_attributes(xml_out& x, const S& s) {
    x.attr_if("weight", s.weight, 1.0);
    if (s.delay != 1) x.attr("delay", s.delay);
    x.attr_if("delay-ms", s.delay_ms);
    x.attr_if("synapse-model", s.synapse_model);
}

void write_structural_plasticity(xml_out& x, const structural_plasticity& sp) {
    const structural_plasticity d;
    x.open("structural-plasticity");
    x.attr_if("structural_plasticity_update_interval", sp.update_interval_ms, d.update_interval_ms);
    if (sp.seed != 0) x.attr("seed", sp.seed);
    for (const auto& s : sp.synapses) {
        x.open("structural-synapse");
        x.attr("id", s.id);
        x.attr("pre_synaptic_element", s.pre_element);
        x.attr("post_synaptic_element", s.post_element);
        write_synapse_attributes(x, s);
        x.close();
    }
    x.close();
}

void write_network(xml_out& x, const network& net) {
    x.open("network");
    x.attr("name", net.name);
    x.attr_if("dt", net.dt, 0.1);
    // Neurons and populations first, then synapse models, then connections in their
    // (canonical) order, then generators, ports and records; grows last, in their order.
    for (const auto& n : net.neurons) {
        x.open("neuron");
        x.attr("id", n.id);
        write_params(x, n.params);
        x.close();
    }
    for (const auto& p : net.populations) {
        if (p.params.model == neuron_model::spike_source) {
            write_spike_source(x, p, net.dt);
            continue;
        }
        x.open("population");
        x.attr("id", p.id);
        x.attr("size", p.size);
        if (p.seed != 0) x.attr("seed", p.seed);
        write_params(x, p.params);
        if (!p.v_inits.empty()) x.reals("v-init", p.v_inits);
        const population defaults;
        x.attr_if("tau_Ca", p.tau_ca, defaults.tau_ca);
        x.attr_if("beta_Ca", p.beta_ca, defaults.beta_ca);
        for (const auto& e : p.synaptic_elements) write_synaptic_element(x, e);
        x.close();
    }
    for (const auto& m : net.synapse_models) {
        x.open("synapse-model");
        x.attr("id", m.id);
        x.attr("model", m.model);
        for (const auto& [name, value] : m.params) x.attr(name.c_str(), value);
        x.close();
    }
    for (const auto& ref : net.connection_order) {
        if (ref.kind == connection_ref::type::synapse) {
            const synapse& s = net.synapses[ref.index];
            x.open("synapse");
            x.attr("from", s.from);
            x.attr("to", s.to);
            write_synapse_attributes(x, s);
            x.close();
            continue;
        }
        const projection& p = net.projections[ref.index];
        x.open("projection");
        x.attr_if("id", p.id);
        x.attr("from", p.from);
        x.attr("to", p.to);
        x.attr("kind", to_string(p.kind));
        x.attr_if("weight", p.weight, 1.0);
        if (p.delay != 1) x.attr("delay", p.delay);
        x.attr_if("delay-ms", p.delay_ms);
        x.attr_if("p", p.p);
        if (p.seed != 0) x.attr("seed", p.seed);
        if (!p.autapses) x.attr("autapses", std::string("false"));
        x.attr_if("indegree", p.indegree);
        if (!p.multapses) x.attr("multapses", std::string("false"));
        x.attr_if("outdegree", p.outdegree);
        x.attr_if("n", p.total);
        if (p.init != dense_init::none) x.attr("init", to_string(p.init));
        x.attr_if("scale", p.scale);
        x.attr_if("weights", p.weights_file);
        x.attr_if("rows", p.rows);
        x.attr_if("cols", p.cols);
        if (p.split_rows) x.attr("split", std::string("rows"));
        x.attr_if("connections", p.connections_file);
        x.attr_if("synapse-model", p.synapse_model);
        if (p.weight_distribution) write_distribution(x, "weight", *p.weight_distribution);
        if (p.delay_distribution) write_distribution(x, "delay", *p.delay_distribution);
        // A list read from no file (a node's share of one, a snapshot's) is written inline.
        if (p.kind == projection_kind::list && p.connections_file.empty())
            x.text_element("connections", encode_connections(p.connections));
        x.close();
    }
    for (const auto& g : net.poisson) {
        x.open("poisson");
        x.words("to", g.to);
        x.attr("rate", g.rate);
        x.attr_if("weight", g.weight, 1.0);
        if (g.seed != 0) x.attr("seed", g.seed);
        x.close();
    }
    for (const auto& g : net.currents) {
        x.open(element_name(g.shape));
        x.words("to", g.to);
        switch (g.shape) {
            case current_shape::dc: x.attr("amplitude", g.amplitude); break;
            case current_shape::ac:
                x.attr("amplitude", g.amplitude);
                x.attr("frequency", g.frequency);
                x.attr_if("phase", g.phase, 0.0);
                x.attr_if("offset", g.offset, 0.0);
                break;
            case current_shape::noise:
                x.attr_if("mean", g.mean, 0.0);
                x.attr("std", g.std);
                x.attr_if("dt-ms", g.interval_ms);
                if (g.seed != 0) x.attr("seed", g.seed);
                break;
        }
        x.attr_if("start", g.start, 0.0);
        x.attr_if("stop", g.stop);
        x.close();
    }
    for (const auto* ports : {&net.inputs, &net.outputs}) {
        for (const auto& port : *ports) {
            x.open(ports == &net.inputs ? "input" : "output");
            x.attr("id", port.id);
            x.words("neurons", port.neurons);
            x.close();
        }
    }
    for (const auto& r : net.records) {
        x.open("record");
        if (r.neurons) x.words("neurons", *r.neurons);
        if (!r.variables.empty()) x.words("variables", r.variables);
        x.attr_if("interval-ms", r.interval_ms);
        x.close();
    }
    if (net.structural) write_structural_plasticity(x, *net.structural);
    for (const auto& g : net.grows) {
        x.open("grow");
        x.attr("population", g.population);
        x.attr("add", g.add);
        x.attr_if("at-ms", g.at_ms, 0.0);
        if (g.applied) x.attr("applied", std::string("true"));
        x.close();
    }
    x.close();
}

void write_cluster(xml_out& x, const cluster& clu) {
    x.open("cluster");
    x.attr("lead", clu.lead);
    for (const auto& n : clu.nodes) {
        x.open("node");
        x.attr("id", n.id);
        if (n.host != "127.0.0.1") x.attr("host", n.host);
        x.attr("port", n.port);
        x.attr_if("capacity", n.capacity, 1.0);
        x.close();
    }
    for (const auto& l : clu.links) {
        x.open("link");
        x.attr("from", l.from);
        x.attr("to", l.to);
        x.attr_if("emulate-delay", l.emulate_delay_ms, 0.0);
        if (l.bandwidth_bps) x.attr("bandwidth", rate_text(*l.bandwidth_bps));
        x.close();
    }
    x.close();
}

void write_state(xml_out& x, const snapshot_state& state) {
    x.open("state");
    x.attr("tick", state.tick);
    for (const auto& n : state.neurons) {
        x.open("neuron");
        x.attr("id", n.id);
        x.attr("output", n.output);
        x.reals("state", n.state);
        x.reals("history", n.history);
        x.reals("synapses", n.synapses);
        x.reals("growth", n.growth);
        for (const auto& t : n.traces) {
            x.open("trace");
            x.attr("tau", t.tau);
            if (t.post) x.attr("post", std::string("true"));
            x.integers("ticks", t.ticks);
            x.reals("values", t.values);
            x.close();
        }
        x.close();
    }
    x.close();
}

void write_node_config(xml_out& x, const node_config& c, bool root) {
    x.open("node-config", root);
    x.attr("node", c.node);
    x.attr("network", c.network);
    x.attr("lead", c.lead);
    if (c.lead_host != "127.0.0.1") x.attr("lead-host", c.lead_host);
    if (c.lead_port != 0) x.attr("lead-port", c.lead_port);
    if (!c.lead_via.empty()) x.attr("lead-via", c.lead_via);
    if (c.host != "127.0.0.1") x.attr("host", c.host);
    x.attr("port", c.port);
    if (c.history != 1) x.attr("history", c.history);
    if (c.epoch != 0) x.attr("epoch", c.epoch);
    write_run(x, c.run);
    for (const auto& p : c.peers) {
        x.open("peer");
        x.attr("id", p.id);
        if (p.host != "127.0.0.1") x.attr("host", p.host);
        x.attr("port", p.port);
        if (!p.via.empty()) x.words("via", p.via);
        x.attr_if("latency", p.latency_ms, 0.0);
        x.attr_if("emulate-delay", p.emulate_delay_ms, 0.0);
        if (p.compress) x.attr("compress", std::string("true"));
        x.integers("sends", p.sends);
        x.integers("receives", p.receives);
        x.close();
    }
    for (const auto& n : c.neurons) {
        x.open("neuron");
        x.attr("id", n.id);
        x.attr("index", n.index);
        x.attr_if("window", n.window_ms, 0.0);
        if (n.seed != 0) x.attr("seed", n.seed);
        if (n.report) x.attr("report", std::string("true"));
        if (n.record) x.attr("record", std::string("true"));
        write_params(x, n.params);
        x.close();
    }
    if (c.share) write_network(x, *c.share);
    for (const auto& d : c.dense) {
        x.open("dense");
        x.integers("sources", d.sources);
        x.integers("targets", d.targets);
        if (d.delay != 1) x.attr("delay", d.delay);
        x.reals("weights", std::vector<double>(d.weights.begin(), d.weights.end()));
        x.integers("rows", d.rows);
        if (d.projection_rows != 0) x.attr("projection-rows", d.projection_rows);
        x.close();
    }
    for (const auto& child : c.children) write_node_config(x, child, false);
    x.close();
}

constexpr const char* xml_declaration = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";

}  // namespace

std::string serialize(const document& doc) {
    std::string out = xml_declaration;
    xml_out x(out);
    x.open("dnnc", true);
    if (doc.net) write_network(x, *doc.net);
    if (doc.clu) write_cluster(x, *doc.clu);
    if (doc.run) write_run(x, *doc.run);
    if (doc.state) write_state(x, *doc.state);
    x.close();
    return out;
}

std::string serialize(const node_config& config) {
    std::string out = xml_declaration;
    xml_out x(out);
    write_node_config(x, config, true);
    return out;
}

std::string serialize(const signal_packet& packet) {
    std::string out = xml_declaration;
    xml_out x(out);
    x.open("signals", true);
    x.attr("from", packet.from);
    x.attr("to", packet.to);
    x.attr("tick", packet.tick);
    if (!packet.complete) x.attr("complete", std::string("false"));
    for (const auto& s : packet.signals) {
        x.open("s");
        x.attr("n", s.neuron);
        x.attr("v", s.value);
        x.close();
    }
    x.close();
    return out;
}

}  // namespace dnnc::protocol
