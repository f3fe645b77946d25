// Parsing and writing the three DNNC documents: values read as written, defaults applied,
// and parse(serialize(x)) == x.
#include "dnnc/model/check.hpp"
#include "dnnc/model/synapse_models.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

using namespace dnnc::model;
using namespace dnnc::protocol;

namespace {
const char* const xor_doc = R"(<?xml version="1.0"?>
<dnnc xmlns="urn:dnnc:1">
  <network name="xor" dt="0.25">
    <neuron id="a" model="linear"/>
    <neuron id="b"/>
    <neuron id="h1" model="step" threshold="0.5" bias="-0.25"/>
    <population id="exc" size="8" model="lif" tau-m="20" v-rest="-49" v-reset="-60"
                v-th="-50" refractory="50" tau-e="5" tau-i="10" dt="0.1" v-init="-60" v-init-max="-50" seed="4"/>
    <synapse from="a" to="h1" weight="1.0" delay="1"/>
    <projection from="exc" to="exc" kind="random" p="0.5" weight="1.62" delay="2" seed="1" autapses="false"/>
    <synapse from="b" to="exc[3]" weight="-0.1"/>
    <projection from="exc[0:4]" to="h1" kind="all"/>
    <projection from="exc" to="exc[0:2]" kind="fixed-indegree" indegree="3" multapses="false" seed="2"/>
    <projection from="exc" to="exc" kind="dense" init="normal" scale="0.05" seed="7" split="rows"/>
    <projection from="exc" to="exc" kind="fixed-outdegree" outdegree="2" seed="3" delay-ms="0.75">
      <weight distribution="normal" mean="1" std="0.5" min="0"/>
    </projection>
    <synapse from="a" to="b" delay-ms="0.5"/>
    <projection from="exc" to="h1" kind="fixed-total-number" n="5" multapses="false">
      <delay distribution="lognormal" mu="0" sigma="0.5" min="0.3" max="4"/>
      <weight distribution="uniform" min="-1" max="1"/>
    </projection>
    <input id="x" neurons="a b"/>
    <output id="y" neurons="h1 exc[0] exc[1]"/>
  </network>
  <cluster lead="n0">
    <node id="n0" host="127.0.0.1" port="7100" capacity="2"/>
    <node id="n1" port="7101"/>
    <link from="n0" to="n1" emulate-delay="1.5" bandwidth="2.5 Gbit/s"/>
  </cluster>
  <run sync="window" send="nonzero" clock="n1" tick-period="2.5" checkpoint-every="100" throughput-probes="0" compress="always"
       rebalance="auto" rebalance-threshold="1.3" rebalance-after="5000" rebalance-pause-share="0.25"
       weight-precision="half"/>
</dnnc>
)";
}  // namespace

TEST_CASE("a DNNC document is read with its values and defaults") {
    const document doc = parse_document(xor_doc, "xor.xml");
    REQUIRE(doc.net);
    const network& net = *doc.net;
    CHECK(net.name == "xor");
    CHECK(net.dt == 0.25);
    REQUIRE(net.neurons.size() == 3);
    CHECK(net.neurons[1].params.model == neuron_model::linear);
    CHECK(net.neurons[2].params.model == neuron_model::step);
    CHECK(net.neurons[2].params.threshold == 0.5);
    CHECK(net.neurons[2].params.bias == -0.25);
    CHECK(net.neurons[2].where.file == "xor.xml");
    CHECK(net.neurons[2].where.line == 6);
    CHECK(net.neurons[2].where.column == 5);
    REQUIRE(net.populations.size() == 1);
    CHECK(net.populations[0].size == 8);
    CHECK(net.populations[0].seed == 4);
    CHECK(net.populations[0].params.refractory == 50);
    CHECK(net.populations[0].params.v_init_max == -50.0);
    CHECK(net.populations[0].where.line == 7);
    REQUIRE(net.connection_order.size() == 9);
    CHECK(net.connection_order[2].kind == connection_ref::type::synapse);
    CHECK(net.connection_order[2].index == 1);
    CHECK(net.synapses[1].delay == 1);
    CHECK(net.synapses[1].weight == -0.1);
    CHECK(net.projections[0].kind == projection_kind::random);
    CHECK(net.projections[0].p == 0.5);
    CHECK_FALSE(net.projections[0].autapses);
    CHECK(net.projections[2].kind == projection_kind::fixed_indegree);
    CHECK(net.projections[2].indegree == 3);
    CHECK_FALSE(net.projections[2].multapses);
    CHECK(net.projections[1].multapses);
    CHECK_FALSE(net.projections[1].indegree);
    CHECK(net.projections[3].kind == projection_kind::dense);
    CHECK(net.projections[3].init == dense_init::normal);
    CHECK(net.projections[3].split_rows);
    CHECK(net.projections[4].kind == projection_kind::fixed_outdegree);
    CHECK(net.projections[4].outdegree == 2);
    CHECK(net.projections[4].delay_ms == 0.75);
    REQUIRE(net.projections[4].weight_distribution);
    CHECK(net.projections[4].weight_distribution->kind == distribution_kind::normal);
    CHECK(net.projections[4].weight_distribution->std == 0.5);
    CHECK(net.projections[4].weight_distribution->min == 0.0);
    CHECK_FALSE(net.projections[4].weight_distribution->max);
    CHECK_FALSE(net.projections[4].delay_distribution);
    CHECK(net.synapses[2].delay_ms == 0.5);
    CHECK_FALSE(net.synapses[1].delay_ms);
    CHECK(net.projections[5].kind == projection_kind::fixed_total_number);
    CHECK(net.projections[5].total == 5);
    REQUIRE(net.projections[5].delay_distribution);
    CHECK(net.projections[5].delay_distribution->kind == distribution_kind::lognormal);
    CHECK(net.projections[5].delay_distribution->sigma == 0.5);
    CHECK(net.projections[5].weight_distribution->kind == distribution_kind::uniform);
    CHECK(delay_ticks(net.projections[4], net.dt) == 3);  // 0.75 ms at dt 0.25
    CHECK(delay_ticks(net.synapses[2], net.dt) == 2);
    CHECK(net.outputs[0].neurons == std::vector<std::string>{"h1", "exc[0]", "exc[1]"});
    REQUIRE(doc.clu);
    CHECK(doc.clu->nodes[1].host == "127.0.0.1");
    CHECK(doc.clu->nodes[1].capacity == 1);
    CHECK(doc.clu->links[0].emulate_delay_ms == 1.5);
    CHECK(doc.clu->links[0].bandwidth_bps == 2.5e9);
    REQUIRE(doc.run);
    CHECK(doc.run->sync == sync_mode::window);
    CHECK(doc.run->send == send_mode::nonzero);
    CHECK(doc.run->clock == "n1");
    CHECK(doc.run->fan_out == 3);
    CHECK(doc.run->probes == 16);
    CHECK(doc.run->throughput_probes == 0);
    CHECK(doc.run->compress == compress_mode::always);
    CHECK(doc.run->rebalance_auto);
    CHECK(doc.run->rebalance_threshold == 1.3);
    CHECK(doc.run->rebalance_after_ms == 5000);
    CHECK(doc.run->rebalance_pause_share == 0.25);
    CHECK(doc.run->half_weights);
    CHECK_FALSE(run_settings{}.half_weights);
}

TEST_CASE("a DNNC document round-trips through serialize") {
    const document doc = parse_document(xor_doc, "xor.xml");
    const std::string text = serialize(doc);
    const document again = parse_document(text, "again.xml");
    CHECK(again == doc);
    CHECK(serialize(again) == text);
}

TEST_CASE("NEST's models and the generators are read as written, and round-trip") {
    const char* const text = R"(<dnnc xmlns="urn:dnnc:1"><network name="nest" dt="0.25">
    <population id="e" size="4" model="iaf_psc_exp" C_m="200" tau_m="15" tau_syn_ex="0.5" tau_syn_in="3" t_ref="1.5"
                E_L="-65" V_th="-50" V_reset="-68" I_e="12.5" v-init="-58" v-init-std="10" seed="3"/>
    <neuron id="d" model="iaf_psc_delta" tau_m="20" bias="1"/>
    <population id="a" size="2" model="iaf_psc_alpha" C_m="120" tau_syn_ex="0.8" tau_syn_in="4" V_reset="-60" I_e="5"
                v-init="-71.5 -60.25"/>
    <population id="z" size="2" model="izhikevich" a="0.1" b="0.25" c="-55" d="0.05" V_th="25" V_min="-90" I_e="4"
                consistent_integration="false" v-init="-70" u-init="-14"/>
    <neuron id="zd" model="izhikevich"/>
    <population id="g" size="2" model="iaf_cond_exp" g_L="20" E_ex="5" E_in="-80" C_m="200" tau_syn_in="5" V_th="-50"/>
    <neuron id="gd" model="iaf_cond_exp"/>
    <neuron id="ga" model="iaf_cond_alpha" E_in="-75" tau_syn_ex="0.5"/>
    <neuron id="ad" model="aeif_cond_exp" a="2" b="60" Delta_T="0" tau_w="100" V_peak="20" E_L="-65"/>
    <record neurons="ad g[1]" variables="V_m g_ex" interval-ms="0.5"/>
    <neuron id="l" model="lif" v-init="-60" v-init-std="2"/>
    <neuron id="aa" model="aeif_cond_alpha" a="1" b="40" tau_syn_ex="1" V_peak="-30"/>
    <neuron id="hh" model="hh_cond_exp_traub" g_Na="18000" g_K="5000" E_Na="55" E_K="-85" V_T="-60" E_L="-65" t_ref="1"/>
    <neuron id="hd" model="hh_cond_exp_traub"/>
    <poisson to="e d" rate="8000" weight="87.8" seed="12"/>
    <poisson to="e[1:3]" rate="0.5"/>
    <dc to="l" amplitude="-2.5" start="10" stop="20.5"/>
    <dc to="e" amplitude="300"/>
  </network></dnnc>)";
    const document doc = parse_document(text, "nest.xml");
    const auto& e = doc.net->populations[0].params;
    CHECK(e.model == neuron_model::iaf_psc_exp);
    CHECK(e.iaf.c_m == 200);
    CHECK(e.iaf.tau_m == 15);
    CHECK(e.iaf.tau_syn_ex == 0.5);
    CHECK(e.iaf.tau_syn_in == 3);
    CHECK(e.iaf.t_ref == 1.5);
    CHECK(e.iaf.e_l == -65);
    CHECK(e.iaf.v_th == -50);
    CHECK(e.iaf.v_reset == -68);
    CHECK(e.iaf.i_e == 12.5);
    CHECK(e.v_init_std == 10.0);
    const auto& d = doc.net->neurons[0].params;
    CHECK(d.model == neuron_model::iaf_psc_delta);
    CHECK(d.iaf.tau_m == 20);
    CHECK(d.iaf.c_m == 250);  // NEST's defaults
    CHECK(d.iaf.v_th == -55);
    CHECK(d.iaf.t_ref == 2);
    CHECK(d.tau_m == 20);  // lif's tau-m keeps its own default, unused here
    const auto& a = doc.net->populations[1].params;
    CHECK(a.model == neuron_model::iaf_psc_alpha);
    CHECK(a.iaf.c_m == 120);
    CHECK(a.iaf.tau_syn_ex == 0.8);
    CHECK(a.iaf.tau_syn_in == 4);
    CHECK(a.iaf.v_reset == -60);
    CHECK(a.iaf.i_e == 5);
    CHECK(a.iaf.tau_m == 10);
    CHECK_FALSE(a.v_init);  // given per member:
    CHECK(doc.net->populations[1].v_inits == std::vector<double>{-71.5, -60.25});
    const auto& z = doc.net->populations[2].params;
    CHECK(z.model == neuron_model::izhikevich);
    CHECK(z.izhikevich.a == 0.1);
    CHECK(z.izhikevich.b == 0.25);
    CHECK(z.izhikevich.c == -55);
    CHECK(z.izhikevich.d == 0.05);
    CHECK(z.izhikevich.v_th == 25);
    CHECK(z.iaf.v_th == -55);  // V_th is izhikevich's own
    CHECK(z.izhikevich.v_min == -90);
    CHECK(z.iaf.i_e == 4);
    CHECK_FALSE(z.izhikevich.consistent_integration);
    CHECK(z.u_init == -14);
    CHECK_FALSE(doc.net->neurons[1].params.u_init);
    const auto& zd = doc.net->neurons[1].params.izhikevich;  // NEST's defaults
    CHECK(zd.a == 0.02);
    CHECK(zd.b == 0.2);
    CHECK(zd.c == -65);
    CHECK(zd.d == 8);
    CHECK(zd.v_th == 30);
    CHECK(zd.v_min == -HUGE_VAL);
    CHECK(zd.consistent_integration);
    const auto& g = doc.net->populations[3].params.iaf;
    CHECK(doc.net->populations[3].params.model == neuron_model::iaf_cond_exp);
    CHECK(g.g_l == 20);
    CHECK(g.e_ex == 5);
    CHECK(g.e_in == -80);
    CHECK(g.c_m == 200);
    CHECK(g.tau_syn_in == 5);
    CHECK(g.v_th == -50);
    const auto& gd = doc.net->neurons[2].params.iaf;  // NEST's defaults for iaf_cond_exp
    CHECK(gd.g_l == 16.6667);
    CHECK(gd.e_ex == 0);
    CHECK(gd.e_in == -85);
    CHECK(gd.v_reset == -60);
    CHECK(gd.tau_syn_ex == 0.2);
    CHECK(gd.tau_syn_in == 2);
    CHECK(gd.c_m == 250);
    const auto& ga = doc.net->neurons[3].params;
    CHECK(ga.model == neuron_model::iaf_cond_alpha);
    CHECK(ga.iaf.e_in == -75);
    CHECK(ga.iaf.tau_syn_ex == 0.5);
    CHECK(ga.iaf.v_reset == -60);
    const auto& ad = doc.net->neurons[4].params;
    CHECK(ad.model == neuron_model::aeif_cond_exp);
    CHECK(ad.adex == adex_params{0, 100, 2, 60, 20});
    CHECK(ad.iaf.e_l == -65);
    CHECK(ad.iaf.c_m == 281);
    CHECK(ad.iaf.g_l == 30);
    CHECK(ad.iaf.t_ref == 0);
    CHECK(ad.izhikevich == izhikevich_params{});
    const auto& aa = doc.net->neurons[6].params;
    CHECK(aa.model == neuron_model::aeif_cond_alpha);
    CHECK(aa.adex == adex_params{2, 144, 1, 40, -30});
    CHECK(aa.iaf.c_m == 281);
    CHECK(aa.iaf.tau_syn_ex == 1);
    CHECK(aa.iaf.tau_syn_in == 2);
    const auto& hh = doc.net->neurons[7].params;
    CHECK(hh.model == neuron_model::hh_cond_exp_traub);
    CHECK(hh.hh == hh_params{18000, 5000, 55, -85, -60});
    CHECK(hh.iaf.e_l == -65);
    CHECK(hh.iaf.t_ref == 1);
    const auto& hd = doc.net->neurons[8].params;  // NEST's defaults for hh_cond_exp_traub
    CHECK(hd.hh == hh_params{});
    CHECK(hd.iaf.c_m == 200);
    CHECK(hd.iaf.g_l == 10);
    CHECK(hd.iaf.e_l == -60);
    CHECK(hd.iaf.e_in == -80);
    CHECK(hd.iaf.tau_syn_ex == 5);
    CHECK(hd.iaf.tau_syn_in == 10);
    CHECK(hd.iaf.t_ref == 2);
    REQUIRE(doc.net->records.size() == 1);
    CHECK(doc.net->records[0].variables == std::vector<std::string>{"V_m", "g_ex"});
    CHECK(doc.net->records[0].interval_ms == 0.5);
    REQUIRE(doc.net->poisson.size() == 2);
    CHECK(doc.net->poisson[0].to == std::vector<std::string>{"e", "d"});
    CHECK(doc.net->poisson[0].rate == 8000);
    CHECK(doc.net->poisson[0].weight == 87.8);
    CHECK(doc.net->poisson[0].seed == 12);
    CHECK(doc.net->poisson[1].weight == 1);
    REQUIRE(doc.net->currents.size() == 2);
    CHECK(doc.net->currents[0].start == 10);
    CHECK(doc.net->currents[0].stop == 20.5);
    CHECK(doc.net->currents[1].start == 0);
    CHECK_FALSE(doc.net->currents[1].stop);
    const std::string written = serialize(doc);
    CHECK(parse_document(written, "again.xml") == doc);
    CHECK(written.find("tau-m") == std::string::npos);
    CHECK(written.find("<neuron id=\"gd\" model=\"iaf_cond_exp\"/>") != std::string::npos);  // defaults left out
    CHECK(written.find("<neuron id=\"hd\" model=\"hh_cond_exp_traub\"/>") != std::string::npos);
    CHECK(written.find("tau_syn_ex=\"0.5\"") != std::string::npos);
}

TEST_CASE("synapse models, projection ids and tau_minus are read as written, and round-trip") {
    const char* const text = R"(<dnnc xmlns="urn:dnnc:1"><network name="plastic">
    <population id="E" size="8" model="iaf_psc_exp" tau_minus="33.7"/>
    <neuron id="s" model="lif"/>
    <projection id="E_E" from="E" to="E" kind="all" weight="40" synapse-model="ee"/>
    <synapse-model id="ee" model="stdp_synapse" Wmax="100.5" tau_plus="16.8" mu_plus="0" mu_minus="0"/>
    <synapse-model id="short" model="tsodyks2_synapse" U="0.2" tau_fac="1500"/>
    <synapse from="s" to="E[2]" weight="3" synapse-model="short"/>
    <projection from="E" to="s" kind="all" synapse-model="vogels_sprekeler_synapse" weight="0.5" seed="1"/>
    <synapse from="E[0]" to="s"/>
  </network></dnnc>)";
    const document doc = parse_document(text, "plastic.xml");
    const network& net = *doc.net;
    CHECK(net.populations[0].params.tau_minus == 33.7);
    CHECK(net.neurons[0].params.tau_minus == 20);  // NEST's default
    REQUIRE(net.synapse_models.size() == 2);
    const synapse_model& ee = net.synapse_models[0];
    CHECK(ee.id == "ee");
    CHECK(ee.model == "stdp_synapse");
    CHECK(ee.where.line == 5);
    // In document order, not the catalogue's.
    using params = std::vector<std::pair<std::string, double>>;
    CHECK(ee.params == params{{"Wmax", 100.5}, {"tau_plus", 16.8}, {"mu_plus", 0}, {"mu_minus", 0}});
    CHECK(net.synapse_models[1].params == params{{"U", 0.2}, {"tau_fac", 1500}});
    CHECK(net.projections[0].id == "E_E");
    CHECK(net.projections[0].synapse_model == "ee");
    CHECK(net.projections[1].id.empty());
    CHECK(net.projections[1].synapse_model == "vogels_sprekeler_synapse");
    CHECK(net.synapses[0].synapse_model == "short");
    CHECK(net.synapses[1].synapse_model.empty());
    CHECK_NOTHROW(check_document(doc));

    const std::string written = serialize(doc);
    const document again = parse_document(written, "again.xml");
    CHECK(again == doc);
    CHECK(serialize(again) == written);
    CHECK_THAT(written, Catch::Contains(R"(<synapse-model id="ee" model="stdp_synapse" Wmax="100.5" tau_plus="16.8" mu_plus="0" mu_minus="0"/>)"));
    CHECK_THAT(written, Catch::Contains(R"(tau_minus="33.7")"));
    CHECK_THAT(written, !Catch::Contains(R"(tau_minus="20")"));  // defaults are left out
    CHECK_THAT(written, !Catch::Contains(R"(synapse-model="")"));

    // A node receives its synapse models in its share, through the same writer and reader.
    node_config config;
    config.node = "n0";
    config.network = "plastic";
    config.lead = "n0";
    config.port = 7100;
    config.neurons.push_back({"E[0]", 0, 0, 0, false, false, net.populations[0].params});
    config.share = net;
    const node_config received = parse_node_config(serialize(config));
    CHECK(received == config);
    REQUIRE(received.share);
    CHECK(received.share->synapse_models == net.synapse_models);
    CHECK(received.neurons[0].params.tau_minus == 33.7);
}

TEST_CASE("every parameter of every synapse model in the catalogue is read, checked and written") {
    for (const auto& model : synapse_model_catalog()) {
        INFO(model.name);
        std::string element = std::string(R"(<synapse-model id="m" model=")") + model.name + "\"";
        for (const auto& p : model.parameters) element += std::string(" ") + p.name + "=\"" + std::to_string(p.fallback) + "\"";
        const std::string text = R"(<dnnc xmlns="urn:dnnc:1"><network name="c"><population id="P" size="2" model="iaf_psc_delta"/>)" +
                                 element + R"(/><projection from="P" to="P" kind="all" synapse-model="m"/></network></dnnc>)";
        const document doc = parse_document(text, "c.xml");
        REQUIRE(doc.net->synapse_models.size() == 1);
        CHECK(doc.net->synapse_models[0].params.size() == model.parameters.size());
        CHECK_NOTHROW(check_document(doc));
        CHECK(parse_document(serialize(doc), "c2.xml") == doc);
    }
}

TEST_CASE("numbers round-trip exactly, including extremes") {
    document doc;
    doc.net.emplace();
    doc.net->name = "n";
    for (double w : {0.1, 1.0 / 3.0, 1e-300, -2.5e300, std::numeric_limits<double>::denorm_min(), 123456789.123456789}) {
        doc.net->connection_order.push_back({connection_ref::type::synapse, doc.net->synapses.size()});
        doc.net->synapses.push_back({"a", "a", w, 3, {}, {}, {}});
    }
    doc.net->neurons.push_back({"a", {}, {}});
    doc.state = snapshot_state{42, {{"a", 0.7, {-60.25, 1e-7, 0, 3}, {1, 0.5, std::nan("")}, {}, {}, {}, {}}}, {}};
    const document again = parse_document(serialize(doc), "n.xml");
    CHECK(again.net == doc.net);
    REQUIRE(again.state);
    CHECK(again.state->tick == 42);
    CHECK(again.state->neurons[0].state == doc.state->neurons[0].state);
    CHECK(std::isnan(again.state->neurons[0].history[2]));
}

TEST_CASE("record elements round-trip, with and without their neurons") {
    const char* const text = R"(<dnnc xmlns="urn:dnnc:1"><network name="r">
  <neuron id="a" model="lif"/><population id="P" size="20" model="lif"/>
  <record neurons="P[0:10] a"/>
  <record/>
</network></dnnc>)";
    const document doc = parse_document(text, "r.xml");
    REQUIRE(doc.net->records.size() == 2);
    CHECK(doc.net->records[0].neurons == std::vector<std::string>{"P[0:10]", "a"});
    CHECK_FALSE(doc.net->records[1].neurons);
    CHECK(parse_document(serialize(doc), "r2.xml") == doc);
    document other = doc;
    other.net->records[1].neurons = std::vector<std::string>{"P"};
    CHECK_FALSE(other == doc);
    CHECK_FALSE(parse_document(serialize(other), "r3.xml") == doc);
}

TEST_CASE("spike sources round-trip: inline spikes as the same ticks, a file by its name") {
    const char* const inline_text = R"(<dnnc xmlns="urn:dnnc:1"><network name="s" dt="0.025">
  <spike-source id="src" size="4"><spike t-ms="0.3" index="3"/><spike t-ms="0.0125" index="1"/><spike t-ms="0.3" index="3"/></spike-source>
  <population id="p" size="4" model="iaf_psc_delta"/>
  <projection from="src" to="p" kind="one-to-one" weight="2"/>
</network></dnnc>)";
    const document doc = parse_document(inline_text, "s.xml");
    const auto& source = doc.net->populations.at(0);
    CHECK(source.params.model == neuron_model::spike_source);
    REQUIRE(source.spikes.size() == 3);
    CHECK(source.spikes[0] == spike_time{1, 1});  // 0.5 ticks round up; sorted by tick
    CHECK(source.spikes[1] == spike_time{3, 12});
    CHECK(source.spikes[2] == spike_time{3, 12});
    const auto text = serialize(doc);
    CHECK_THAT(text, Catch::Contains("<spike-source"));
    CHECK(parse_document(text, "s2.xml") == doc);

    const auto dir = std::filesystem::temp_directory_path() / ("dnnc-spikes-" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "in.csv") << "t_ms,index\n0.3,3\n0.0125,1\n0.3,3\n";
    const std::string with_file = R"(<dnnc xmlns="urn:dnnc:1"><network name="s" dt="0.025">
  <spike-source id="src" size="4" file="in.csv"/>
  <population id="p" size="4" model="iaf_psc_delta"/>
  <projection from="src" to="p" kind="one-to-one" weight="2"/>
</network></dnnc>)";
    const auto from_file = parse_document(with_file, (dir / "doc.xml").string());
    CHECK(from_file.net->populations.at(0).spikes == source.spikes);  // read relative to the document
    CHECK(from_file.net->populations.at(0).spike_file == "in.csv");
    const auto written = serialize(from_file);
    CHECK_THAT(written, Catch::Contains("file=\"in.csv\""));
    CHECK_THAT(written, !Catch::Contains("<spike "));
    CHECK(parse_document(written, (dir / "again.xml").string()) == from_file);
    std::filesystem::remove_all(dir);
}

TEST_CASE("a snapshot state and a cluster-only document round-trip") {
    const char* const text = R"(<dnnc xmlns="urn:dnnc:1">
  <network name="s"><population id="p" size="3" model="lif"/></network>
  <state tick="17">
    <neuron id="p[0]" output="1" state="-60 0.5 0 3" history="1 0"/>
    <neuron id="p[2]" output="0"/>
  </state>
</dnnc>)";
    const document doc = parse_document(text, "s.xml");
    REQUIRE(doc.state);
    CHECK(doc.state->tick == 17);
    CHECK(doc.state->neurons[0].state == std::vector<double>{-60, 0.5, 0, 3});
    CHECK(doc.state->neurons[1].history.empty());
    CHECK(parse_document(serialize(doc), "s2.xml") == doc);

    const document only_cluster = parse_document(
        R"(<dnnc xmlns="urn:dnnc:1"><cluster lead="a"><node id="a" port="9000"/></cluster></dnnc>)", "c.xml");
    CHECK_FALSE(only_cluster.net);
    REQUIRE(only_cluster.clu);
    CHECK(parse_document(serialize(only_cluster), "c2.xml") == only_cluster);
}

TEST_CASE("a node config with nested subtree configs round-trips") {
    node_config leaf;
    leaf.node = "n2";
    leaf.network = "xor";
    leaf.lead = "n0";
    leaf.port = 7102;
    leaf.neurons.push_back({"exc[3]", 5, 1.25, 99, true, true, {}});
    leaf.neurons.push_back({"exc[4]", 6, 0, 99, false, true, {}});
    leaf.share = parse_document(xor_doc, "xor.xml").net;
    leaf.dense.push_back({{0, 1}, {5}, 2, {0.1f, -2.5e-7f}, {3}, 7});

    node_config mid = leaf;
    mid.node = "n1";
    mid.port = 7101;
    mid.host = "127.0.0.2";
    mid.lead_host = "10.0.0.1";
    mid.lead_port = 7100;
    mid.lead_via = "10.0.0.3:7103";  // reached through a sub-lead
    mid.run.sync = sync_mode::window;
    mid.run.compress = compress_mode::never;
    mid.peers.push_back({"n2", "127.0.0.1", 7102, {"n1", "n2"}, 0.75, 2.5, {1, 4, 9}, {0, 2}, true});
    mid.children.push_back(leaf);

    node_config root = leaf;
    root.node = "n0";
    root.children = {mid, leaf};
    const std::string text = serialize(root);
    const node_config again = parse_node_config(text);
    CHECK(again == root);
    REQUIRE(again.children.size() == 2);
    CHECK(again.children[0].children.size() == 1);
    CHECK(again.children[0].peers[0].via == std::vector<std::string>{"n1", "n2"});
    CHECK(again.children[0].peers[0].compress);
    CHECK(again.children[0].run.compress == compress_mode::never);
    CHECK(again.children[0].lead_via == "10.0.0.3:7103");
    CHECK(again.children[1].lead_via.empty());
}

TEST_CASE("a signal packet round-trips, empty or not") {
    signal_packet packet{"n0", "n1", 12, true, {{"a", 0.5}, {"exc[10]", -1e-9}}};
    CHECK(parse_signal_packet(serialize(packet)) == packet);
    signal_packet empty{"n1", "n0", 13, false, {}};
    const auto again = parse_signal_packet(serialize(empty));
    CHECK(again == empty);
    CHECK_FALSE(again.complete);
}

TEST_CASE("a document in another schema's shape is rejected by each reader") {
    node_config c;
    c.node = "n0";
    c.network = "x";
    c.lead = "n0";
    c.port = 1;
    CHECK_THROWS_AS(parse_document(serialize(c), "c.xml"), dnnc::config_error);
    CHECK_THROWS_AS(parse_signal_packet(xor_doc), dnnc::config_error);
    CHECK_THROWS_AS(parse_node_config(xor_doc), dnnc::config_error);
}
