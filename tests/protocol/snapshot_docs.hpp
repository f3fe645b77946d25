#pragma once
// A small snapshot document, a format-2 file of it, and a scratch folder, for the snapshot
// tests.
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
inline document snapshot_doc(bool plastic = true) {
    document doc = parse_document(network_text, "s.xml");
    doc.state = snapshot_state{12, {}, {}};
    doc.state->neurons.push_back({"a", 0.5, {}, {0.25, -1}, {}, {}, {}});
    for (int i = 0; i < 3; ++i)
        doc.state->neurons.push_back({"p[" + std::to_string(i) + "]", i == 1 ? 1.0 : 0.0, {-60.5, 0.125, -0.75, 3}, {0, 1}, {}, {}, {}});
    if (plastic) {
        doc.state->neurons[0].traces = {{20, false, {3, 9}, {1, 1.7408182206817179}}};
        doc.state->neurons[1].traces = {{16.5, true, {}, {}}, {0, false, {11}, {1}}};
        doc.state->neurons[1].synapses = {0.5, 0.1000000014901161193847656};
    }
    return doc;
}

// A binary snapshot as format 2 wrote it (before synapses could learn): no traces, no
// synapse values.
inline std::string format2_snapshot(const document& doc) {
    document without = doc;
    without.state.reset();
    const std::string xml = serialize(without);
    std::string out("DNNCSNAP");
    auto put = [&](auto value) { out.append(reinterpret_cast<const char*>(&value), sizeof value); };
    put(std::uint32_t{2});
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
    }
    return out + sha256(out);
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
