#pragma once
// A small snapshot document, format-2 and format-3 files of it, one of a network with
// structural plasticity, and a scratch folder, for the snapshot tests.
#include "dnnc/protocol/frame.hpp"
#include "dnnc/protocol/snapshot.hpp"
#include "dnnc/protocol/xml.hpp"

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

namespace dnnc::protocol::test {
inline const char* const network_text = R"(<dnnc xmlns="urn:dnnc:1">
  <network name="s">
    <neuron id="a"/>
    <population id="p" size="3" model="lif" refractory="4"/>
    <synapse from="a" to="p[0]" delay="3"/>
  </network>
  <cluster lead="n0"><node id="n0" port="7000"/></cluster>
</dnnc>)";

// `plastic`: with a trace and synapse values, as a network with plastic synapses has.
inline model::document snapshot_doc(bool plastic = true) {
    model::document doc = parse_document(network_text, "s.xml");
    doc.state = model::snapshot_state{12, {}, {}};
    doc.state->neurons.push_back({"a", 0.5, {}, {0.25, -1}, {}, {}, {}, {}});
    for (int i = 0; i < 3; ++i)
        doc.state->neurons.push_back({"p[" + std::to_string(i) + "]", i == 1 ? 1.0 : 0.0, {-60.5, 0.125, -0.75, 3}, {0, 1}, {}, {}, {}, {}});
    if (plastic) {
        doc.state->neurons[0].traces = {{20, false, {3, 9}, {1, 1.7408182206817179}}};
        doc.state->neurons[1].traces = {{16.5, true, {}, {}}, {0, false, {11}, {1}}};
        doc.state->neurons[1].synapses = {0.5, 0.1000000014901161193847656};
    }
    return doc;
}

// A binary snapshot as an older format wrote it: format 2 (before synapses could learn: no
// traces, no synapse values) or 3 (before synapses could grow: no growth).
inline std::string legacy_snapshot(const model::document& doc, std::uint32_t format) {
    model::document without = doc;
    without.state.reset();
    const std::string xml = serialize(without);
    std::string out("DNNCSNAP");
    auto put = [&](auto value) { out.append(reinterpret_cast<const char*>(&value), sizeof value); };
    put(format);
    put(std::uint64_t{xml.size()});
    out += xml;
    put(std::int64_t{doc.state->tick});
    put(std::uint64_t{doc.state->neurons.size()});
    const auto net = expand_neurons(*doc.net);
    for (const auto& n : doc.state->neurons) {
        put(static_cast<std::uint32_t>(*net.find(n.id)));
        put(static_cast<float>(n.output));
        put(static_cast<std::uint8_t>(n.state.size()));
        for (double v : n.state) put(static_cast<float>(v));
        put(static_cast<std::uint16_t>(n.history.size()));
        for (double v : n.history) put(static_cast<float>(v));
        if (format < 3) continue;
        put(static_cast<std::uint8_t>(n.traces.size()));
        for (const auto& t : n.traces) {
            put(t.tau);
            put(static_cast<std::uint8_t>(t.post ? 1 : 0));
            put(static_cast<std::uint32_t>(t.ticks.size()));
            for (std::size_t k = 0; k < t.ticks.size(); ++k) {
                put(t.ticks[k]);
                put(t.values[k]);
            }
        }
        put(static_cast<std::uint64_t>(n.synapses.size()));
        for (double v : n.synapses) put(static_cast<float>(v));
    }
    return out + sha256(out);
}

// A network with structural plasticity: a neuron without synaptic elements ('a'), three
// with two element kinds (E[0..2], global indices 1..3) and one pairing; its state at tick
// 300 with growth: E[0] -> E[1] lives (seq 0), E[2] -> E[1] died at 200 (seq 1) but its row
// is still held, so E[1] lists both.
inline const char* const growing_text = R"(<dnnc xmlns="urn:dnnc:1">
  <network name="g">
    <neuron id="a"/>
    <population id="E" size="3" model="iaf_psc_alpha" seed="1">
      <synaptic-element name="Den_ex" growth_rate="0.0001" eta="0" eps="0.05" continuous="false"/>
      <synaptic-element name="Axon_ex" growth_rate="0.0001" eta="0" eps="0.05" continuous="false"/>
    </population>
    <poisson to="E" rate="10000" weight="6.2" seed="3"/>
    <structural-plasticity structural_plasticity_update_interval="10" seed="4">
      <structural-synapse id="s" pre_synaptic_element="Axon_ex" post_synaptic_element="Den_ex" weight="585" delay-ms="1"/>
    </structural-plasticity>
  </network>
</dnnc>)";

inline model::document growing_doc() {
    model::document doc = parse_document(growing_text, "g.xml");
    const auto history = static_cast<std::size_t>(longest_delay(*doc.net) - 1);
    const auto variables = state_variable_names(model::neuron_model::iaf_psc_alpha).size();
    doc.state = model::snapshot_state{300, {}, {}};
    doc.state->neurons.push_back({"a", 0.5, {}, std::vector<double>(history, 0.25), {}, {}, {}, {}});
    const std::vector<std::vector<double>> growth{
        {0.25, 290, 2, 1.5, 2.25, 0, 1, 0},
        {0.125, 290, 2, 3.5, 0.5, 1, 0, 2, 1, 0, 0, 100, -1, 3, 0, 1, 100, 200},
        {0.0625, 290, 2, 0.75, 1.0, 0, 0, 0}};
    for (int i = 0; i < 3; ++i) {
        model::neuron_state n;
        n.id = "E[" + std::to_string(i) + "]";
        n.output = i == 1 ? 1.0 : 0.0;
        n.state.assign(variables, 0);
        n.history.assign(history, 0);
        n.growth = growth[static_cast<std::size_t>(i)];
        doc.state->neurons.push_back(std::move(n));
    }
    return doc;
}

struct scratch {
    std::filesystem::path dir = std::filesystem::temp_directory_path() / ("dnnc-snap-" + std::to_string(std::random_device{}()));
    scratch() { std::filesystem::create_directories(dir); }
    ~scratch() { std::filesystem::remove_all(dir); }
    std::string path(const std::string& name) const { return (dir / name).string(); }
};

inline std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace dnnc::protocol::test
