// Binary snapshot files a state at a time: the writer gives the bytes the whole-document
// encoder gives, the reader gives back the states in order and checks the checksum after the
// last, formats 2 and 3 still read, growth reads back, a writer that does not finish leaves no file, and a file's
// states are checked as states_of checks a document's.
#include "dnnc/protocol/snapshot_file.hpp"

#include "dnnc/model/expand.hpp"
#include "snapshot_docs.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

using namespace dnnc;
using namespace dnnc::model;
using namespace dnnc::protocol;
using namespace dnnc::protocol::test;

namespace {

// Writes `doc`'s state with a snapshot_writer, in the document's order.
void write_streamed(const document& doc, const std::string& path) {
    const auto net = expand_neurons(*doc.net);
    snapshot_writer out(path, doc, doc.state->tick, doc.state->neurons.size());
    for (const auto& n : doc.state->neurons) {
        indexed_state s{*net.find(n.id), static_cast<float>(n.output), {}, {}, n.traces, {}, n.growth};
        s.variables.assign(n.state.begin(), n.state.end());
        s.history.assign(n.history.begin(), n.history.end());
        s.synapses.assign(n.synapses.begin(), n.synapses.end());
        out.add(s);
    }
    out.commit();
}

std::vector<indexed_state> read_all(const std::string& path) {
    snapshot_reader in(path);
    std::vector<indexed_state> states;
    for (indexed_state s; in.next(s);) states.push_back(s);
    CHECK(states.size() == in.count());
    return states;
}

}  // namespace

TEST_CASE("a snapshot written a state at a time is the one encoded whole, and reads back a state at a time") {
    scratch s;
    const document doc = snapshot_doc();
    const auto path = s.path("streamed.dnncs");
    write_streamed(doc, path);
    CHECK(slurp(path) == encode_binary_snapshot(doc, expand_neurons(*doc.net)));
    snapshot_reader in(path);
    CHECK(in.doc().net == doc.net);
    CHECK(in.doc().state->tick == 12);
    CHECK(in.doc().state->neurons.empty());
    const auto expected = states_of(doc, expand_neurons(*doc.net));
    const auto states = read_all(path);
    REQUIRE(states.size() == expected.size());
    for (std::size_t i = 0; i < states.size(); ++i) {
        CHECK(states[i].index == expected[i].index);
        CHECK(states[i].variables == expected[i].variables);
        CHECK(states[i].history == expected[i].history);
        CHECK(states[i].traces == expected[i].traces);
        CHECK(states[i].synapses == expected[i].synapses);
    }
    CHECK(check_snapshot_file(path).state->tick == 12);
}

TEST_CASE("a format 2 snapshot reads a state at a time, without traces or synapse values") {
    scratch s;
    const document doc = snapshot_doc(false);
    const auto path = s.path("format2.dnncs");
    std::ofstream(path, std::ios::binary) << legacy_snapshot(doc, 2);
    const auto states = read_all(path);
    REQUIRE(states.size() == 4);
    CHECK(states[1].variables == std::vector<float>{-60.5f, 0.125f, -0.75f, 3});
    CHECK(states[1].traces.empty());
    CHECK(check_snapshot_file(path).state->tick == 12);
}

TEST_CASE("a format 3 snapshot reads a state at a time, without growth, and one with growth reads it back") {
    scratch s;
    {
        const document doc = snapshot_doc();
        const auto path = s.path("format3.dnncs");
        std::ofstream(path, std::ios::binary) << legacy_snapshot(doc, 3);
        const auto states = read_all(path);
        REQUIRE(states.size() == 4);
        CHECK(states[1].traces == doc.state->neurons[1].traces);
        CHECK(states[1].synapses == std::vector<float>{0.5f, 0.1f});
        CHECK(states[1].growth.empty());
        CHECK(check_snapshot_file(path).state->tick == 12);
    }
    const document doc = growing_doc();
    const auto path = s.path("growing.dnncs");
    write_streamed(doc, path);
    CHECK(slurp(path) == encode_binary_snapshot(doc, expand_neurons(*doc.net)));
    const auto states = read_all(path);
    REQUIRE(states.size() == 4);
    CHECK(states[0].growth.empty());
    for (std::size_t i = 1; i < 4; ++i) CHECK(states[i].growth == doc.state->neurons[i].growth);
    CHECK(check_snapshot_file(path).state->tick == 300);
    document bad = doc;
    bad.state->neurons[2].growth[17] = 301;
    write_streamed(bad, s.path("bad.dnncs"));
    CHECK_THROWS_WITH(check_snapshot_file(s.path("bad.dnncs")), Catch::Contains("state of 'E[1]': growth synapse 2: dies 301"));
}

TEST_CASE("a damaged snapshot file is refused by the time its last state is read, and an unfinished writer leaves no file") {
    scratch s;
    const document doc = snapshot_doc();
    const auto path = s.path("good.dnncs");
    write_streamed(doc, path);
    const std::string bytes = slurp(path);
    auto write = [&](const std::string& name, const std::string& b) {
        std::ofstream(s.path(name), std::ios::binary) << b;
        return s.path(name);
    };
    std::string flipped = bytes;
    flipped[bytes.size() - 49] ^= 0x20;  // a history value of the last state: it decodes, the checksum does not match
    CHECK_THROWS_WITH(read_all(write("flipped.dnncs", flipped)), Catch::Contains("checksum mismatch"));
    CHECK_THROWS_WITH(check_snapshot_file(s.path("flipped.dnncs")), Catch::Contains("checksum mismatch"));
    CHECK_THROWS_WITH(read_all(write("short.dnncs", bytes.substr(0, bytes.size() - 10))), Catch::Contains("damaged snapshot"));
    CHECK_THROWS_WITH(snapshot_reader(write("magic.dnncs", "NOTASNAP" + bytes.substr(8))), Catch::Contains("magic"));
    CHECK_THROWS_WITH(snapshot_reader(write("empty.dnncs", "")), Catch::Contains("damaged snapshot"));
    {
        snapshot_writer unfinished(s.path("unfinished.dnncs"), doc, 12, 4);
        CHECK_THROWS_WITH(unfinished.commit(), Catch::Contains("given 0 states"));
    }
    CHECK_FALSE(std::filesystem::exists(s.path("unfinished.dnncs")));
    CHECK(std::distance(std::filesystem::directory_iterator(s.dir), {}) == 5);  // no temporary file left either
}

TEST_CASE("a snapshot file's states are checked as a document's are, a state at a time") {
    scratch s;
    const document base = snapshot_doc();
    auto refused = [&](auto change, const std::string& why) {
        document d = base;
        change(d.state->neurons);
        write_streamed(d, s.path("bad.dnncs"));
        CHECK_THROWS_WITH(check_snapshot_file(s.path("bad.dnncs")), Catch::Contains(why));
    };
    refused([](auto& n) { n[2].state[3] = 5; }, "state of 'p[1]': refractory 5 must be a whole number of ticks in 0..4");
    refused([](auto& n) { n[1].output = 0.5; }, "the output 0.5 must be 0 or 1");
    refused([](auto& n) { n[0].history = {1}; }, "history must hold at least 2 past outputs");
    refused([](auto& n) { n[3].state[0] = INFINITY; }, "every value must be a finite number");
    refused([](auto& n) { n[0].traces[0].ticks = {9, 3}; }, "a trace needs a time constant >= 0");
    refused([](auto& n) { n.pop_back(); }, "lacks neuron 'p[2]'");
    refused([](auto& n) { n.push_back(n[1]); }, "given twice");
}
