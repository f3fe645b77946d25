// Writes the generated seeds of the fuzz corpus: frames, signal packets, neuron states and
// binary snapshots, each encoded by the library and prefixed by the set-up byte its
// target reads (fuzz_frame.cpp, fuzz_snapshot.cpp), and a node config and an XML signal
// packet as the writer writes them. Run once when a format changes:
//   build-fuzz/tests/fuzz/fuzz_seeds tests/fuzz/corpus
#include "dnnc/protocol/frame.hpp"
#include "dnnc/protocol/signal_codec.hpp"
#include "dnnc/protocol/snapshot.hpp"
#include "dnnc/protocol/xml.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

using namespace dnnc::model;
using namespace dnnc::protocol;
namespace fs = std::filesystem;

void write(const fs::path& dir, const std::string& name, const std::string& bytes) {
    fs::create_directories(dir);
    std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw dnnc::io_error("cannot write " + (dir / name).string());
}

std::string byte(unsigned v) { return std::string(1, static_cast<char>(v)); }

void frames(const fs::path& dir) {
    const frame hello{message_type::hello, 0, 1, ""};
    const frame status{message_type::status, 0, 7, ""};
    const frame submit{message_type::submit, replace_flag, 42, "<dnnc xmlns=\"urn:dnnc:1\"/>"};
    const frame control{message_type::control, 0, 9, R"({"command":"step","ticks":10})"};
    const std::string secret = "fuzz-secret";  // the one fuzz_frame.cpp uses
    // Set-up byte: bit 0 the secret, bits 1-7 the piece size minus one.
    write(dir, "plain-one-piece", byte(0xFE) + encode_frame(submit));
    write(dir, "plain-stream-bytewise", byte(0x00) + encode_frame(hello) + encode_frame(status) + encode_frame(control));
    write(dir, "plain-stream-pieces-of-7", byte(6 << 1) + encode_frame(control) + encode_frame(submit));
    write(dir, "tagged-one-piece", byte(0xFF) + encode_frame(submit, secret));
    write(dir, "tagged-stream-pieces-of-3", byte((2 << 1) | 1) + encode_frame(hello, secret) + encode_frame(control, secret));
    write(dir, "tagged-without-secret", byte(0xFE) + encode_frame(status, secret));
    write(dir, "untagged-with-secret", byte(0xFF) + encode_frame(status));
    std::string wrong_tag = encode_frame(control, secret);
    wrong_tag.back() = static_cast<char>(wrong_tag.back() ^ 1);
    write(dir, "wrong-tag", byte(0xFF) + wrong_tag);
    write(dir, "truncated", byte(0xFE) + encode_frame(submit).substr(0, 30));
}

void signals(const fs::path& dir) {
    binary_signals dense{"n0", 3, 17, true, {0.5f, -1.0f, 0.0f, 2.25f}, {}};
    binary_signals sparse{"node-1", 1, 1000, false, {}, {{0, 1.0f}, {5, -0.5f}, {4096, 3.0f}}};
    binary_signals empty{"", 0, 0, true, {}, {}};
    write(dir, "dense", encode_signals(dense));
    write(dir, "sparse", encode_signals(sparse));
    write(dir, "empty", encode_signals(empty));
    write(dir, "truncated", encode_signals(dense).substr(0, 20));
    std::string version1 = encode_signals(sparse);
    version1[0] = 1;
    write(dir, "old-version", version1);
}

const char* const snapshot_network = R"(<dnnc xmlns="urn:dnnc:1">
  <network name="s">
    <neuron id="a"/>
    <population id="p" size="3" model="lif"/>
    <synapse from="a" to="p[0]" delay="3"/>
    <input id="x" neurons="a"/>
    <output id="y" neurons="p[0:2]"/>
  </network>
  <cluster lead="n0"><node id="n0" port="7000"/></cluster>
</dnnc>)";

void snapshots(const fs::path& dir) {
    document doc = parse_document(snapshot_network, "s.xml");
    doc.state = snapshot_state{12, {}, {}};
    doc.state->neurons.push_back({"a", 0.5, {}, {0.25, -1}, {}});
    for (int i = 0; i < 3; ++i)
        doc.state->neurons.push_back(
            {"p[" + std::to_string(i) + "]", i == 1 ? 1.0 : 0.0, {-60.5, 0.125, -0.75, 3}, {0, 1}, {}});
    const std::string sealed = encode_binary_snapshot(doc, expand_neurons(*doc.net));
    const std::string body = sealed.substr(0, sealed.size() - 32);
    // Set-up byte: 0 states, 1 a whole snapshot, 2 a snapshot whose checksum the target adds.
    write(dir, "snapshot-sealed", byte(1) + sealed);
    write(dir, "snapshot-body", byte(2) + body);
    write(dir, "snapshot-body-truncated", byte(2) + body.substr(0, body.size() - 7));
    const std::vector<indexed_state> states{{0, 1.5f, {}, {2, 3}}, {7, 0, {-60, 1, 2, 4}, {}}, {3, -0.25f, {1}, {}}};
    write(dir, "states", byte(0) + encode_states(states));
    write(dir, "states-empty", byte(0) + encode_states({}));
    write(dir, "states-truncated", byte(0) + encode_states(states).substr(0, 21));
}

void xml(const fs::path& dir) {
    const document doc = parse_document(snapshot_network, "s.xml");
    node_config child;
    child.node = "n1";
    child.network = "s";
    child.lead = "n0";
    child.port = 7001;
    child.neurons.push_back({"p[1]", 2, 0.5, 7, false, true, doc.net->populations[0].params});
    node_config c;
    c.node = "n0";
    c.network = "s";
    c.lead = "n0";
    c.port = 7000;
    c.history = 3;
    c.epoch = 99;
    c.peers.push_back({"n1", "127.0.0.1", 7001, {"n1"}, 0.25, 0, {0}, {2}});
    c.neurons.push_back({"a", 0, 0.5, 0, true, false, doc.net->neurons[0].params});
    c.share = *doc.net;
    // A list projection's share travels inline, in binary (base64).
    projection listed;
    listed.from = "p";
    listed.to = "p";
    listed.kind = projection_kind::list;
    listed.connections = {{2, 0, 1}, {0, 1, 1}, {0.5f, -1.5f, 2}, {1, 3, 2}};
    c.share->connection_order.push_back({connection_ref::type::projection, c.share->projections.size()});
    c.share->projections.push_back(listed);
    c.dense.push_back({{0}, {1, 2}, 1, {0.5f, -0.5f}, {0, 1}, 2});
    c.children.push_back(child);
    write(dir, "generated-node-config.xml", serialize(c));
    write(dir, "generated-signals.xml", serialize(signal_packet{"n0", "n1", 5, true, {{"a", 1.0}, {"p[2]", -0.5}}}));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    const fs::path corpus = argv[1];
    frames(corpus / "frame");
    signals(corpus / "signals");
    snapshots(corpus / "snapshot");
    xml(corpus / "xml");
    return 0;
}
