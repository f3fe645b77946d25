// Snapshot files: XML and binary round trips, checksums, atomic writes, and the check that
// a state fits its network.
#include "dnnc/model/check.hpp"
#include "dnnc/protocol/frame.hpp"
#include "dnnc/protocol/snapshot.hpp"
#include "dnnc/protocol/xml.hpp"
#include "snapshot_docs.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

using namespace dnnc;
using namespace dnnc::model;
using namespace dnnc::protocol;
using namespace dnnc::protocol::test;


TEST_CASE("neuron states round-trip through their binary form") {
    const std::vector<indexed_state> states{{0, 1.5f, {}, {2, 3}, {{20, true, {4, 8}, {1, 1.25}}, {0, false, {}, {}}}, {0.5f, 0.25f}, {}},
                                            {7, 0, {-60, 1, 2, 4}, {}, {}, {}, {}}};
    const auto back = decode_states(encode_states(states));
    REQUIRE(back.size() == 2);
    CHECK(back[1].index == 7);
    CHECK(back[1].variables == states[1].variables);
    CHECK(back[0].history == states[0].history);
    CHECK(back[0].traces == states[0].traces);
    CHECK(back[0].synapses == states[0].synapses);
    CHECK(back[1].traces.empty());
    const auto bytes = encode_states(states);
    CHECK_THROWS_AS(decode_states(bytes.substr(0, bytes.size() - 1)), protocol_error);
}

TEST_CASE("a trace's side byte other than 0 or 1 is damage, not a post trace (decoding stays the inverse of encoding)") {
    const std::vector<indexed_state> states{{0, 0, {}, {}, {{20, true, {4}, {1}}}, {}, {}}};
    std::string bytes = encode_states(states);
    // count, index, output, variable count, history count, trace count, tau: then the side.
    const std::size_t side = 8 + 4 + 4 + 1 + 2 + 1 + 8;
    REQUIRE(bytes[side] == 1);
    bytes[side] = 2;
    CHECK_THROWS_WITH(decode_states(bytes), Catch::Contains("trace side"));
}

TEST_CASE("snapshots round-trip as XML and as binary") {
    scratch s;
    const document doc = snapshot_doc();
    for (const char* name : {"snap.xml", "snap.dnncs"}) {
        INFO(name);
        save_snapshot(doc, s.path(name));
        const document back = load_snapshot(s.path(name));
        CHECK(back == doc);
        const auto net = expand(*back.net, back.file);
        const auto states = states_of(back, net);
        CHECK(states[2].output == 1.0f);
        CHECK(states[1].variables[0] == -60.5f);
        CHECK(states[1].traces == doc.state->neurons[1].traces);
        CHECK(states[1].synapses == std::vector<float>{0.5f, 0.1f});
    }
}

TEST_CASE("a binary snapshot of format 2, written before synapses could learn, still loads") {
    scratch s;
    const document doc = snapshot_doc(false);
    const std::string path = s.path("format2.dnncs");
    std::ofstream(path, std::ios::binary) << legacy_snapshot(doc, 2);
    const document back = load_snapshot(path);
    CHECK(back.state == doc.state);
    save_snapshot(back, s.path("again.dnncs"));
    CHECK(load_snapshot(s.path("again.dnncs")).state == doc.state);
}

TEST_CASE("a trace must be ordered, before the state's tick, and as long in values as in ticks") {
    for (const auto& bad : std::vector<spike_trace>{{20, false, {9, 3}, {1, 1}}, {20, false, {3, 12}, {1, 1}},
                                                    {20, false, {3}, {}}, {-1, false, {}, {}}, {20, true, {-1}, {1}}}) {
        document doc = snapshot_doc();
        doc.state->neurons[2].traces = {bad};
        CHECK_THROWS_WITH(check_document(doc), Catch::Contains("state of 'p[1]': a trace needs"));
    }
}

TEST_CASE("a damaged binary snapshot is refused: checksum, truncation, magic") {
    scratch s;
    save_snapshot(snapshot_doc(), s.path("good.dnncs"));
    const std::string bytes = slurp(s.path("good.dnncs"));
    auto write = [&](const std::string& name, const std::string& b) {
        std::ofstream(s.path(name), std::ios::binary) << b;
        return s.path(name);
    };
    std::string flipped = bytes;
    flipped[bytes.size() / 2] ^= 0x20;
    CHECK_THROWS_WITH(load_snapshot(write("flipped.dnncs", flipped)), Catch::Contains("checksum mismatch"));
    CHECK_THROWS_WITH(load_snapshot(write("short.dnncs", bytes.substr(0, bytes.size() - 10))), Catch::Contains("damaged snapshot"));
    CHECK_THROWS_WITH(load_snapshot(write("magic.dnncs", "NOTASNAP" + bytes.substr(8))), Catch::Contains("magic"));
    CHECK_THROWS_WITH(load_snapshot(write("empty.dnncs", "")), Catch::Contains("damaged snapshot"));
    // Format 1 (one random stream per projection), checksum intact: refused, not misread.
    std::string old_format = bytes.substr(0, bytes.size() - 32);
    old_format[8] = 1;
    old_format += sha256(old_format);
    CHECK_THROWS_WITH(load_snapshot(write("format1.dnncs", old_format)), Catch::Contains("snapshot format 1"));
}

// Found with fuzz_snapshot (tests/fuzz/corpus/snapshot/neuron-count-wraps and
// duplicate-population-id): the decoder numbered the neurons of the embedded network
// before anything had checked it, and a repeated id or sizes whose sum wraps made it try
// to number 2^63 neurons (std::length_error, not a dnnc::error).
TEST_CASE("a binary snapshot's network is checked before its neurons are numbered") {
    auto sealed = [](const std::string& populations) {
        const std::string xml = "<dnnc xmlns=\"urn:dnnc:1\"><network name=\"s\">" + populations + "</network></dnnc>";
        std::string bytes = "DNNCSNAP";
        const auto put = [&](auto v) { bytes.append(reinterpret_cast<const char*>(&v), sizeof v); };
        put(std::uint32_t{2});
        put(std::uint64_t{xml.size()});
        bytes += xml;
        put(std::int64_t{0});
        put(std::uint64_t{0});
        return bytes + sha256(bytes);
    };
    const std::string big = "<population id=\"q\" size=\"9223372036854775807\"/>";
    CHECK_THROWS_WITH(decode_binary_snapshot(sealed("<population id=\"p\" size=\"1\"/>"
                                                    "<population id=\"p\" size=\"9223372036854775807\"/>"),
                                             "dup.dnncs"),
                      Catch::Contains("duplicate id 'p'"));
    CHECK_THROWS_WITH(decode_binary_snapshot(sealed(big + "<population id=\"r\" size=\"9223372036854775807\"/>"
                                                          "<population id=\"s\" size=\"2\"/>"),
                                             "wrap.dnncs"),
                      Catch::Contains("neurons; the limit is"));
    CHECK(decode_binary_snapshot(sealed("<population id=\"p\" size=\"2\"/>"), "fine.dnncs").net->populations.size() == 1);
    // Found with fuzz_snapshot (tests/fuzz/corpus/snapshot/huge-network-no-states): a few bytes
    // that claim 10^8 neurons made the decoder number them all before it found no state.
    CHECK_THROWS_WITH(decode_binary_snapshot(sealed("<population id=\"p\" size=\"100000000\"/>"), "huge.dnncs"),
                      Catch::Contains("it holds 0 neuron states for a network of 100000000 neurons"));
}

TEST_CASE("a state that does not fit its network is a located error") {
    const document base = snapshot_doc();
    const auto net = expand(*base.net, base.file);
    {
        document d = base;
        d.state->neurons.pop_back();
        CHECK_THROWS_WITH(states_of(d, net), Catch::Contains("lacks neuron 'p[2]'"));
    }
    {
        document d = base;
        d.state->neurons[0].history = {1};
        CHECK_THROWS_WITH(states_of(d, net), Catch::Contains("history must hold at least 2 past outputs"));
    }
    {
        document d = base;
        d.state->neurons[1].state.pop_back();
        CHECK_THROWS_WITH(states_of(d, net), Catch::Contains("4 state variables"));
    }
    {
        document d = base;
        d.state->neurons.push_back({"p[0]", 0, {0, 0, 0, 0}, {0, 0}, {}, {}, {}, {}});
        CHECK_THROWS_WITH(states_of(d, net), Catch::Contains("given twice"));
    }
    // Unknown neurons and missing ticks are caught when the document is read.
    const std::string text = serialize(base);
    std::string unknown = text;
    unknown.replace(unknown.find("id=\"p[2]\""), 9, "id=\"p[9]\"");
    CHECK_THROWS_WITH(check_document(parse_document(unknown, "u.xml")), Catch::Contains("index 9 is out of range"));
    std::string no_tick = text;
    no_tick.replace(no_tick.find(" tick=\"12\""), 10, "");
    CHECK_THROWS_WITH(parse_document(no_tick, "t.xml"), Catch::Contains("tick"));
}

// A refractory count of 3e9 once became -2147483648 in the engine and was written back by
// every later snapshot; -1e9 was taken as it was.
TEST_CASE("every restored value is range-checked against its neuron's model") {
    const document base = snapshot_doc();
    const auto net = expand(*base.net, base.file);
    CHECK(states_of(base, net).size() == 4);
    auto refused = [&](auto change, const std::string& why) {
        document d = base;
        change(d.state->neurons);
        CHECK_THROWS_WITH(states_of(d, net), Catch::Contains(why));
    };
    for (const auto& [left, text] : std::vector<std::pair<double, std::string>>{{-1e9, "-1e+09"}, {3e9, "3e+09"}, {-1, "-1"}, {5, "5"}, {2.5, "2.5"}})
        refused([left = left](auto& n) { n[2].state[3] = left; },
                "state of 'p[1]': refractory " + text + " must be a whole number of ticks in 0..4");
    refused([](auto& n) { n[1].output = 0.5; }, "state of 'p[0]': the output 0.5 must be 0 or 1");
    refused([](auto& n) { n[3].history[1] = -1; }, "state of 'p[2]': history value 2 -1 must be 0 or 1");
    // A linear neuron's outputs may be any finite number; the lif's whole counts 0..4 are fine.
    document fine = base;
    fine.state->neurons[0].output = -1e30;
    fine.state->neurons[1].state[3] = 4;
    fine.state->neurons[2].state[3] = 0;
    CHECK(states_of(fine, net).size() == 4);
}

TEST_CASE("a NEST model's refractory count is bounded by t_ref in ticks, and sigmoid, tanh and relu outputs by their ranges") {
    const document doc = parse_document(R"(<dnnc xmlns="urn:dnnc:1">
  <network name="s" dt="0.5">
    <neuron id="e" model="iaf_psc_exp" t_ref="2"/>
    <neuron id="s" model="sigmoid"/>
    <neuron id="t" model="tanh"/>
    <neuron id="r" model="relu"/>
  </network>
</dnnc>)",
                                        "m.xml");
    const auto net = expand(*doc.net, doc.file);
    auto states = [&](double refractory, double sigmoid, double tanh, double relu) {
        document d = doc;
        d.state = snapshot_state{0, {}, {}};
        d.state->neurons = {{"e", 0, {-70, 0, 0, refractory}, {}, {}, {}, {}, {}},
                            {"s", sigmoid, {}, {}, {}, {}, {}, {}},
                            {"t", tanh, {}, {}, {}, {}, {}, {}},
                            {"r", relu, {}, {}, {}, {}, {}, {}}};
        return states_of(d, net);
    };
    CHECK(states(4, 1, -1, 7).size() == 4);
    CHECK_THROWS_WITH(states(5, 0.5, 0, 0), Catch::Contains("refractory 5 must be a whole number of ticks in 0..4"));
    CHECK_THROWS_WITH(states(0, 1.5, 0, 0), Catch::Contains("must lie in 0..1 (sigmoid)"));
    CHECK_THROWS_WITH(states(0, 0, -2, 0), Catch::Contains("must lie in -1..1 (tanh)"));
    CHECK_THROWS_WITH(states(0, 0, 0, -0.5), Catch::Contains("must be >= 0 (relu)"));
}

TEST_CASE("aeif_cond_exp's state: conductances >= 0, w within NEST's bound, refractory within t_ref in ticks") {
    const document doc = parse_document(R"(<dnnc xmlns="urn:dnnc:1">
  <network name="s" dt="0.5"><neuron id="a" model="aeif_cond_exp" t_ref="1"/></network>
</dnnc>)",
                                        "a.xml");
    const auto net = expand(*doc.net, doc.file);
    auto states = [&](double g_ex, double g_in, double w, double refractory) {
        document d = doc;
        d.state = snapshot_state{0, {{"a", 0, {-65, g_ex, g_in, w, refractory}, {}, {}, {}, {}, {}}}, {}};
        return states_of(d, net);
    };
    CHECK(states(3, 0, -1e6, 2).size() == 1);
    CHECK(states(0, 1, 1e6, 0).size() == 1);
    CHECK_THROWS_WITH(states(-0.5, 0, 0, 0), Catch::Contains("state of 'a': g_ex -0.5 must be >= 0 (nS)"));
    CHECK_THROWS_WITH(states(0, -2, 0, 0), Catch::Contains("state of 'a': g_in -2 must be >= 0 (nS)"));
    CHECK_THROWS_WITH(states(0, 0, 2e6, 0), Catch::Contains("state of 'a': w 2e+06 must lie in -1e6..1e6 pA"));
    CHECK_THROWS_WITH(states(0, 0, 0, 3), Catch::Contains("refractory 3 must be a whole number of ticks in 0..2"));
    CHECK_THROWS_WITH(states(0, 0, 0, 0.5), Catch::Contains("refractory 0.5 must be a whole number"));
}

TEST_CASE("aeif_cond_exp's state, w included, round-trips as XML and as binary") {
    scratch s;
    document doc = parse_document(R"(<dnnc xmlns="urn:dnnc:1">
  <network name="s"><population id="A" size="2" model="aeif_cond_exp" t_ref="0.5"/></network>
</dnnc>)",
                                  "a.xml");
    doc.state = snapshot_state{7, {{"A[0]", 1, {-60, 2.5, 0.75, 161.25, 5}, {}, {}, {}, {}, {}},
                                   {"A[1]", 0, {-52.125, 0, 3, -12.5, 0}, {}, {}, {}, {}, {}}}, {}};
    for (const char* name : {"adex.xml", "adex.dnncs"}) {
        INFO(name);
        save_snapshot(doc, s.path(name));
        const document back = load_snapshot(s.path(name));
        CHECK(back == doc);
        const auto states = states_of(back, expand(*back.net, back.file));
        CHECK(states[0].variables == std::vector<float>{-60, 2.5f, 0.75f, 161.25f, 5});
        CHECK(states[1].variables[3] == -12.5f);
    }
}

TEST_CASE("hh_cond_exp_traub's state: seven variables, gates >= 0, refractory within t_ref in ticks") {
    const document doc = parse_document(R"(<dnnc xmlns="urn:dnnc:1">
  <network name="s" dt="0.5"><neuron id="h" model="hh_cond_exp_traub" t_ref="1"/></network>
</dnnc>)",
                                        "h.xml");
    const auto net = expand(*doc.net, doc.file);
    auto states = [&](std::vector<double> variables) {
        document d = doc;
        d.state = snapshot_state{0, {{"h", 0, std::move(variables), {}, {}, {}, {}, {}}}, {}};
        return states_of(d, net);
    };
    CHECK(states({-65, 1, 2, 0.05, 0.6, 0.3, 2}).size() == 1);
    CHECK_THROWS_WITH(states({-65, 1, 2, 0.05, 0.6, 0.3}),
                      Catch::Contains("state of 'h': a hh_cond_exp_traub neuron has 7 state variables (V_m g_ex g_in Act_m "
                                      "Inact_h Act_n refractory), found 6"));
    CHECK_THROWS_WITH(states({-65, 1, 2, -0.05, 0.6, 0.3, 0}), Catch::Contains("state of 'h': Act_m -0.05 must be >= 0"));
    CHECK_THROWS_WITH(states({-65, 1, 2, 0.05, 0.6, -1, 0}), Catch::Contains("state of 'h': Act_n -1 must be >= 0"));
    CHECK_THROWS_WITH(states({-65, -1, 2, 0.05, 0.6, 0.3, 0}), Catch::Contains("state of 'h': g_ex -1 must be >= 0 (nS)"));
    CHECK_THROWS_WITH(states({-65, 1, 2, 0.05, 0.6, 0.3, 3}), Catch::Contains("refractory 3 must be a whole number of ticks in 0..2"));
}

TEST_CASE("aeif_cond_alpha's and hh_cond_exp_traub's states round-trip as XML and as binary") {
    scratch s;
    document doc = parse_document(R"(<dnnc xmlns="urn:dnnc:1">
  <network name="s"><neuron id="a" model="aeif_cond_alpha" t_ref="0.5"/><neuron id="h" model="hh_cond_exp_traub"/></network>
</dnnc>)",
                                  "ah.xml");
    doc.state = snapshot_state{7, {{"a", 1, {-60, 2.5, 0.75, 161.25, 1.5, 0.25, 5}, {}, {}, {}, {}, {}},
                                   {"h", 0, {-52.125, 0, 3, 0.0625, 0.5, 0.375, 20}, {}, {}, {}, {}, {}}}, {}};
    for (const char* name : {"ah.xml", "ah.dnncs"}) {
        INFO(name);
        save_snapshot(doc, s.path(name));
        const document back = load_snapshot(s.path(name));
        CHECK(back == doc);
        const auto states = states_of(back, expand(*back.net, back.file));
        CHECK(states[0].variables == std::vector<float>{-60, 2.5f, 0.75f, 161.25f, 1.5f, 0.25f, 5});
        CHECK(states[1].variables == std::vector<float>{-52.125f, 0, 3, 0.0625f, 0.5f, 0.375f, 20});
    }
}

TEST_CASE("a snapshot or document file longer than the bound is refused before it is read") {
    scratch s;
    for (const auto* name : {"big.dnncs", "big.xml"}) {
        std::ofstream(s.path(name)) << "DNNCSNAP";
        std::filesystem::resize_file(s.path(name), max_document_bytes + 1);  // sparse: no disk, no time
        CHECK_THROWS_WITH(load_snapshot(s.path(name)), Catch::Contains(s.path(name) + ": the file is longer than 1024 MiB"));
    }
    CHECK_THROWS_WITH(load_document(s.path("big.xml")), Catch::Contains("byte 1073741825 is past the limit"));
}

TEST_CASE("an atomic write replaces the file whole and leaves no temporary behind") {
    scratch s;
    const auto target = s.path("ckpt.xml");
    write_atomically(target, "old");
    write_atomically(target, "new contents");
    CHECK(slurp(target) == "new contents");
    std::size_t files = 0;
    for (const auto& e : std::filesystem::directory_iterator(s.dir)) (void)e, ++files;
    CHECK(files == 1);
    CHECK_THROWS_AS(write_atomically(s.path("missing-dir/x.xml"), "x"), io_error);
}

TEST_CASE("a path removed at exit goes with everything in it, also when the scope ends by an exception") {
    scratch s;
    std::filesystem::create_directories(s.path("run/sub"));
    std::ofstream(s.path("run/sub/a.xml")) << "x";
    std::ofstream(s.path("one.dnncs")) << "y";
    try {
        const removed_at_exit folder(s.path("run")), file(s.path("one.dnncs")), missing(s.path("never-made"));
        CHECK(folder.path() == s.path("run"));
        throw io_error("the scope fails");
    } catch (const io_error&) {
    }
    CHECK_FALSE(std::filesystem::exists(s.path("run")));
    CHECK_FALSE(std::filesystem::exists(s.path("one.dnncs")));
}

TEST_CASE("a neuron's growth round-trips through the states' binary form") {
    const std::vector<indexed_state> states{{0, 1, {}, {}, {}, {}, {0.125, 290, 2, 1.5, 2.25, 0, 1, 0}},
                                            {3, 0, {-60}, {}, {}, {0.5f}, {}}};
    const auto bytes = encode_states(states);
    const auto back = decode_states(bytes);
    REQUIRE(back.size() == 2);
    CHECK(back[0].growth == states[0].growth);
    CHECK(back[1].growth.empty());
    CHECK(back[1].synapses == states[1].synapses);
    CHECK_THROWS_AS(decode_states(bytes.substr(0, bytes.size() - 1)), protocol_error);
}

TEST_CASE("snapshots with growth round-trip as XML and as binary, bit for bit") {
    scratch s;
    document doc = growing_doc();
    doc.state->neurons[1].growth[0] = 0.1 + 0.2;  // no short decimal
    doc.state->neurons[2].growth[3] = 1.0 / 3.0;
    for (const char* name : {"grow.xml", "grow.dnncs"}) {
        INFO(name);
        save_snapshot(doc, s.path(name));
        const document back = load_snapshot(s.path(name));
        CHECK(back == doc);
        const auto net = expand(*back.net, back.file);
        const auto states = states_of(back, net);
        CHECK(states[0].growth.empty());
        for (std::size_t i = 1; i < 4; ++i) CHECK(states[i].growth == doc.state->neurons[i].growth);
    }
    // Growth is part of a state's equality.
    document other = doc;
    other.state->neurons[2].growth.back() = 199;
    CHECK_FALSE(other == doc);
    CHECK(serialize(doc).find("growth=\"0.125 290 2 3.5 0.5 1 0 2 1 0 0 100 -1 3 0 1 100 200\"") == std::string::npos);
    CHECK(serialize(growing_doc()).find("growth=\"0.125 290 2 3.5 0.5 1 0 2 1 0 0 100 -1 3 0 1 100 200\"") != std::string::npos);
}

TEST_CASE("a binary snapshot of format 3, written before synapses could grow, still loads, its growth empty") {
    scratch s;
    const document doc = snapshot_doc();
    const std::string path = s.path("format3.dnncs");
    std::ofstream(path, std::ios::binary) << legacy_snapshot(doc, 3);
    const document back = load_snapshot(path);
    CHECK(back.state == doc.state);
    CHECK(states_of(back, expand(*back.net, back.file))[1].synapses == std::vector<float>{0.5f, 0.1f});
    save_snapshot(back, s.path("again.dnncs"));
    CHECK(load_snapshot(s.path("again.dnncs")).state == doc.state);
    // A format beyond this build's is refused, not misread.
    std::string future = slurp(s.path("again.dnncs"));
    future = future.substr(0, future.size() - 32);
    future[8] = 5;
    future += sha256(future);
    std::ofstream(s.path("future.dnncs"), std::ios::binary) << future;
    CHECK_THROWS_WITH(load_snapshot(s.path("future.dnncs")), Catch::Contains("unsupported format 5"));
}

TEST_CASE("growth that does not fit its neuron or its network is a located error") {
    const document base = growing_doc();
    const auto net = expand(*base.net, base.file);
    REQUIRE(states_of(base, net).size() == 4);
    auto refused = [&](auto change, const std::string& why) {
        INFO(why);
        document d = base;
        change(d.state->neurons);
        CHECK_THROWS_WITH(states_of(d, net), Catch::Contains(why));
    };
    refused([](auto& n) { n[0].growth = {0}; }, "state of 'a': growth given, but the neuron has no synaptic elements");
    refused([](auto& n) { n[2].growth.clear(); }, "state of 'E[1]': growth missing");
    refused([](auto& n) { n[1].growth.pop_back(); }, "state of 'E[0]': growth must hold at least 8 values");
    refused([](auto& n) { n[2].growth.pop_back(); }, "state of 'E[1]': growth counts 2 grown synapses, so it must hold 8 + 5 x that values, found 17");
    refused([](auto& n) { n[2].growth[7] = 1.5; }, "state of 'E[1]': growth counts 1.5 grown synapses");
    refused([](auto& n) { n[1].growth[0] = -0.25; }, "state of 'E[0]': growth calcium -0.25 must be >= 0");
    refused([](auto& n) { n[1].growth[1] = 301; }, "state of 'E[0]': growth ca_tick 301 must be a whole tick in 0..the state's tick");
    refused([](auto& n) { n[1].growth[2] = -1; }, "next_seq -1 must be a whole number >= 0");
    refused([](auto& n) { n[1].growth[4] = -1; }, "growth z -1 must be >= 0");
    refused([](auto& n) { n[1].growth[6] = 0.5; }, "growth connected 0.5 must be a whole number >= 0");
    refused([](auto& n) { n[2].growth[8] = 0; }, "state of 'E[1]': growth synapse 1: source 0 is no neuron with synaptic elements");
    refused([](auto& n) { n[2].growth[14] = 1; }, "synapse 2: pairing 1 must lie in 0..0");
    refused([](auto& n) { n[2].growth[10] = 2; }, "synapse 1: seq 2 must be a whole number below next_seq");
    refused([](auto& n) { n[2].growth[11] = 301; }, "synapse 1: born 301 must be a whole tick");
    refused([](auto& n) { n[2].growth[17] = 99; }, "synapse 2: dies 99 must be -1 (never) or a whole tick in born..the state's tick");
    refused([](auto& n) { n[2].growth[0] = NAN; }, "growth values must be finite numbers");
    // Located: an entry read from a file names its line.
    document located = parse_document(serialize(base), "g.xml");
    located.state->neurons[3].growth[0] = -1;
    CHECK_THROWS_WITH(states_of(located, net), Catch::Contains("g.xml:") && Catch::Contains("state of 'E[2]': growth calcium -1"));
    // check_document refuses values that are not finite.
    document infinite = base;
    infinite.state->neurons[1].growth[3] = INFINITY;
    CHECK_THROWS_WITH(check_document(infinite), Catch::Contains("state of 'E[0]': every growth value must be a finite number"));
}
