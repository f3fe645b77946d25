// Expanding compact forms: numbering, canonical order, rule-based projections, determinism,
// dense weights from init rules and files.
#include "dnnc/model/expand.hpp"
#include "parse_network.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

using namespace dnnc;
using namespace dnnc::model;

namespace {
using test::parse_network;

std::vector<neuron_index> sources_of(const expanded_network& e, neuron_index target) {
    return {e.in_source.begin() + static_cast<std::ptrdiff_t>(e.in_begin[target]),
            e.in_source.begin() + static_cast<std::ptrdiff_t>(e.in_begin[target + 1])};
}
}  // namespace

TEST_CASE("neurons are numbered explicit first, then population members") {
    const auto e = expand(parse_network(R"(<population id="p" size="3"/><neuron id="a"/><neuron id="b"/>)"), "t.xml");
    REQUIRE(e.neuron_count() == 5);
    CHECK(e.neuron_name(0) == "a");
    CHECK(e.neuron_name(1) == "b");
    CHECK(e.neuron_name(2) == "p[0]");
    CHECK(e.neuron_name(4) == "p[2]");
    CHECK(e.find("p[2]") == 4u);
    CHECK(e.find("b") == 1u);
    CHECK_FALSE(e.find("p"));
    CHECK_FALSE(e.find("p[3]"));
    CHECK_FALSE(e.find("a[0]"));
    CHECK_FALSE(e.find("zz"));
}

TEST_CASE("incoming synapses keep document order, then source order within a projection") {
    const auto e = expand(parse_network(R"(
        <neuron id="a"/><neuron id="b"/><population id="p" size="3"/>
        <synapse from="b" to="p[1]" weight="2" delay="3"/>
        <projection from="p" to="p[1:3]" kind="all" weight="0.5"/>
        <synapse from="a" to="p[1]" weight="-1"/>)"),
                          "t.xml");
    REQUIRE(e.synapse_count() == 1 + 6 + 1);
    // p[1] = index 3: b, then p[0..2] (indices 2, 3, 4), then a.
    CHECK(sources_of(e, 3) == std::vector<neuron_index>{1, 2, 3, 4, 0});
    CHECK(e.in_weight[e.in_begin[3]] == 2.0f);
    CHECK(e.in_delay[e.in_begin[3]] == 3);
    CHECK(e.in_weight[e.in_begin[3] + 4] == -1.0f);
    CHECK(sources_of(e, 4) == std::vector<neuron_index>{2, 3, 4});
    CHECK(sources_of(e, 2).empty());
}

TEST_CASE("one-to-one and all-to-all honour autapses") {
    const auto e = expand(parse_network(R"(
        <population id="p" size="4"/><population id="q" size="4"/>
        <projection from="p" to="q" kind="one-to-one"/>
        <projection from="p" to="p" kind="all" autapses="false"/>
        <projection from="q" to="q" kind="one-to-one" autapses="false"/>)"),
                          "t.xml");
    CHECK(e.synapse_count() == 4 + 12);
    CHECK(sources_of(e, 4 + 2) == std::vector<neuron_index>{2});
    CHECK(sources_of(e, 1) == std::vector<neuron_index>{0, 2, 3});
}

TEST_CASE("random projections are deterministic for a seed and have the expected density") {
    const std::string body = R"(<population id="p" size="400"/>
        <projection from="p" to="p" kind="random" p="0.05" seed="11"/>)";
    const auto a = expand(parse_network(body), "t.xml");
    const auto b = expand(parse_network(body), "t.xml");
    CHECK(a.in_source == b.in_source);
    CHECK(a.in_begin == b.in_begin);
    const double expected = 400.0 * 400.0 * 0.05;
    CHECK(std::abs(static_cast<double>(a.synapse_count()) - expected) < 5 * std::sqrt(expected));
    // Sources of each target ascend, as the canonical order requires.
    for (neuron_index t = 0; t < 400; ++t) {
        const auto s = sources_of(a, t);
        CHECK(std::is_sorted(s.begin(), s.end()));
    }
    const auto c = expand(parse_network(R"(<population id="p" size="400"/>
        <projection from="p" to="p" kind="random" p="0.05" seed="12"/>)"),
                          "t.xml");
    CHECK(c.in_source != a.in_source);
}

TEST_CASE("random projections with p = 0 and p = 1 are exact, autapses excluded on request") {
    const auto e = expand(parse_network(R"(<population id="p" size="30"/>
        <projection from="p" to="p" kind="random" p="0"/>
        <projection from="p" to="p" kind="random" p="1" autapses="false"/>)"),
                          "t.xml");
    CHECK(e.synapse_count() == 30 * 29);
}

TEST_CASE("ports expand populations and slices") {
    const auto e = expand(parse_network(R"(<neuron id="a"/><population id="p" size="5"/>
        <input id="x" neurons="a p[1:3]"/><output id="y" neurons="p"/>)"),
                          "t.xml");
    REQUIRE(e.inputs.size() == 1);
    CHECK(e.inputs[0].neurons == std::vector<neuron_index>{0, 2, 3});
    CHECK(e.outputs[0].neurons.size() == 5);
}

TEST_CASE("dense projections become weight matrices from init rules, seeded") {
    const std::string body = R"(<population id="x" size="6"/><population id="y" size="4"/>
        <projection from="x" to="y" kind="dense" init="normal" scale="0.5" seed="3" rows="4" cols="6"/>
        <projection from="x" to="y" kind="dense" init="zeros"/>)";
    const auto e = expand(parse_network(body), "t.xml");
    REQUIRE(e.dense.size() == 2);
    CHECK(e.synapse_count() == 0);
    CHECK(e.dense[0].weights.size() == 24);
    CHECK(e.dense[0].sources.front() == 0);
    CHECK(e.dense[0].targets.front() == 6);
    CHECK(e.dense[0].element == 0);
    CHECK(e.dense[1].element == 1);
    CHECK(std::all_of(e.dense[1].weights.begin(), e.dense[1].weights.end(), [](float w) { return w == 0; }));
    CHECK(expand(parse_network(body), "t.xml").dense[0].weights == e.dense[0].weights);
}

TEST_CASE("dense weights load from raw float32 and .npy files relative to the document") {
    const auto dir = std::filesystem::temp_directory_path() / ("dnnc-expand-" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(dir);
    const std::vector<float> values{1, 2, 3, 4, 5, 6};
    std::ofstream(dir / "w.bin", std::ios::binary)
        .write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * 4));
    {
        std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
        header.append(118 - header.size(), ' ').push_back('\n');
        std::ofstream out(dir / "w.npy", std::ios::binary);
        out.write("\x93NUMPY\x01\x00", 8);
        const char length[2] = {static_cast<char>(header.size()), 0};
        out.write(length, 2);
        out << header;
        out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * 4));
    }
    const std::string doc = (dir / "net.xml").string();
    for (const char* file : {"w.bin", "w.npy"}) {
        INFO(file);
        const auto net = parse_network(std::string(R"(<population id="x" size="3"/><population id="y" size="2"/>
            <projection from="x" to="y" kind="dense" weights=")") + file + R"(" rows="2" cols="3"/>)");
        CHECK(expand(net, doc).dense[0].weights == values);
    }
    // Wrong shape and truncated files are located errors.
    const auto wrong = parse_network(R"(<population id="x" size="2"/><population id="y" size="3"/>
        <projection from="x" to="y" kind="dense" weights="w.npy"/>)");
    CHECK_THROWS_WITH(expand(wrong, doc), Catch::Contains("shape (2, 3) does not match"));
    const auto longer = parse_network(R"(<population id="x" size="4"/><population id="y" size="2"/>
        <projection from="x" to="y" kind="dense" weights="w.bin"/>)");
    CHECK_THROWS_WITH(expand(longer, doc), Catch::Contains("truncated"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("expansion limits stop oversized networks with a located error") {
    const auto net = parse_network(R"(<population id="p" size="2000"/>
        <projection from="p" to="p" kind="all"/>)");
    expand_limits limits;
    limits.max_synapses = 1'000'000;
    try {
        expand(net, "t.xml", limits);
        FAIL("expanded");
    } catch (const config_error& e) {
        CHECK(e.problems().front().where.line == 2);
        CHECK_THAT(e.what(), Catch::Contains("limit of 1000000 synapses"));
    }
}

TEST_CASE("a share expands the incoming synapses of its local neurons only, as the whole network does") {
    const auto net = parse_network(R"(<population id="p" size="40"/><neuron id="a"/>
        <synapse from="a" to="p[3]" weight="2"/>
        <projection from="p" to="p" kind="random" p="0.3" seed="7" weight="0.5" delay="2"/>
        <projection from="a" to="p" kind="all"/>
        <synapse from="p[1]" to="p[3]" weight="-1"/>)");
    const auto whole = expand(net, "t.xml");
    const std::vector<std::int64_t> local{1, 4, 5, 40};  // p[3] is index 4
    const auto share = expand_share(net, local);
    REQUIRE(share.neuron_count() == whole.neuron_count());
    for (neuron_index i = 0; i < whole.neuron_count(); ++i) {
        INFO(whole.neuron_name(i));
        const bool is_local = std::find(local.begin(), local.end(), i) != local.end();
        CHECK(sources_of(share, i) == (is_local ? sources_of(whole, i) : std::vector<neuron_index>{}));
        if (!is_local) continue;
        for (auto s = whole.in_begin[i], t = share.in_begin[i]; s < whole.in_begin[i + 1]; ++s, ++t) {
            CHECK(share.in_weight[t] == whole.in_weight[s]);
            CHECK(share.in_delay[t] == whole.in_delay[s]);
        }
    }
    CHECK_THROWS_WITH(expand_share(net, {41}), Catch::Contains("neuron index 41 lies outside the network's 41 neurons"));
    const auto dense = parse_network(R"(<population id="x" size="2"/><projection from="x" to="x" kind="dense" init="zeros"/>)");
    CHECK_THROWS_WITH(expand_share(dense, {0}), Catch::Contains("carries no dense projections"));
}

TEST_CASE("expanding the neurons alone numbers them as the whole expansion does, without connections") {
    const auto net = parse_network(R"(<neuron id="a"/><population id="p" size="30"/>
        <projection from="p" to="p" kind="random" p="0.5" seed="2"/>
        <projection from="a" to="p" kind="dense" init="normal"/>
        <output id="y" neurons="p[0:3]"/>)");
    const auto whole = expand(net, "t.xml");
    const auto neurons = expand_neurons(net);
    REQUIRE(neurons.neuron_count() == whole.neuron_count());
    for (neuron_index i = 0; i < whole.neuron_count(); ++i) CHECK(neurons.neuron_name(i) == whole.neuron_name(i));
    CHECK(neurons.synapse_count() == 0);
    CHECK(neurons.dense.empty());
    CHECK(neurons.outputs.size() == 1);
    CHECK(neurons.find("p[29]") == whole.find("p[29]"));
}
