// synapse_rows: each target's row equals what expand() stores for it (sources, weights,
// delays, canonical order), counts equal row sizes, and elements report their weight and
// delay; on every example and on each connection rule.
#include "dnnc/protocol/expand.hpp"
#include "dnnc/protocol/rows.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

using namespace dnnc;
using namespace dnnc::protocol;

namespace {
network parse_network(const std::string& body) {
    const std::string text = "<dnnc xmlns=\"urn:dnnc:1\"><network name=\"t\">" + body + "</network></dnnc>";
    return *parse_document(text, "t.xml").net;
}

// Every row of `rows` against expand()'s, and the counts.
void check_rows(const network& net, const std::string& file) {
    const auto whole = expand(net, file);
    const synapse_rows rows(net);
    REQUIRE(rows.neuron_count() == whole.neuron_count());
    REQUIRE(rows.element_count() == net.connection_order.size());
    std::uint64_t total = 0;
    for (neuron_index t = 0; t < whole.neuron_count(); ++t) {
        INFO("target " << whole.neuron_name(t));
        auto s = whole.in_begin[t];
        bool same = true;
        std::size_t last_element = 0;
        rows.for_each(t, [&](neuron_index source, float weight, std::uint16_t delay, std::size_t element) {
            same = same && s < whole.in_begin[t + 1] && whole.in_source[s] == source && whole.in_weight[s] == weight &&
                   whole.in_delay[s] == delay && element >= last_element;
            const auto u = rows.uniform(element);
            same = same && u && u->weight == weight && u->delay == delay;
            last_element = element;
            ++s;
        });
        CHECK(same);
        CHECK(s == whole.in_begin[t + 1]);
        const auto n = whole.in_begin[t + 1] - whole.in_begin[t];
        CHECK(rows.count(t) == n);
        std::uint64_t by_element = 0;
        rows.for_each_element(t, [&](std::size_t element, std::uint64_t count) {
            CHECK(count > 0);
            CHECK(rows.count(t, element) == count);
            by_element += count;
        });
        CHECK(by_element == n);
        total += n;
    }
    CHECK(total == whole.synapse_count());
}
}  // namespace

TEST_CASE("synapse rows equal expand()'s rows on every example") {
    for (const auto& entry : std::filesystem::directory_iterator(std::string(DNNC_SOURCE_DIR) + "/examples")) {
        if (!entry.is_directory()) continue;
        for (const auto& file : std::filesystem::directory_iterator(entry.path())) {
            if (file.path().extension() != ".xml") continue;
            const auto doc = load_document(file.path().string());
            if (!doc.net) continue;
            INFO(file.path().string());
            check_rows(*doc.net, doc.file);
        }
    }
}

TEST_CASE("synapse rows equal expand()'s rows for each connection rule") {
    SECTION("random, with and without autapses, p = 1, slices") {
        check_rows(parse_network(R"(<population id="p" size="300"/><population id="q" size="50"/>
            <projection from="p" to="p" kind="random" p="0.05" seed="3" weight="0.5" delay="2"/>
            <projection from="p[10:60]" to="p[0:100]" kind="random" p="0.3" seed="4" autapses="false" weight="-1"/>
            <projection from="q" to="p[250:300]" kind="random" p="1" autapses="false"/>
            <projection from="q" to="q" kind="random" p="0"/>)"),
                   "t.xml");
    }
    SECTION("all and one-to-one, autapses on and off") {
        check_rows(parse_network(R"(<population id="p" size="20"/><population id="q" size="20"/>
            <projection from="p" to="p" kind="all" autapses="false" weight="2"/>
            <projection from="p[5:15]" to="p[0:10]" kind="all"/>
            <projection from="p" to="q" kind="one-to-one" delay="3"/>
            <projection from="q" to="q" kind="one-to-one" autapses="false"/>
            <projection from="q" to="q" kind="one-to-one"/>)"),
                   "t.xml");
    }
    SECTION("explicit synapses between and around projections, autapses, dense skipped") {
        check_rows(parse_network(R"(<neuron id="a"/><neuron id="b"/><population id="p" size="6"/>
            <synapse from="a" to="p[2]" weight="0.25"/>
            <synapse from="p[2]" to="p[2]" weight="3" delay="4"/>
            <projection from="p" to="p[1:4]" kind="all" weight="0.5"/>
            <synapse from="b" to="p[2]" weight="-1"/>
            <projection from="a" to="p" kind="dense" init="normal" seed="1"/>
            <synapse from="b" to="a" weight="7"/>
            <projection from="p" to="p" kind="random" p="0.5" seed="9"/>
            <synapse from="a" to="p[2]" weight="0.25"/>)"),
                   "t.xml");
        const auto net = parse_network(R"(<neuron id="a"/><population id="p" size="2"/>
            <projection from="a" to="p" kind="dense" init="zeros"/><synapse from="a" to="p[1]" weight="2" delay="5"/>)");
        const synapse_rows rows(net);
        CHECK(rows.is_dense(0));
        CHECK_FALSE(rows.uniform(0));
        CHECK(rows.uniform(1)->weight == 2.0f);
        CHECK(rows.uniform(1)->delay == 5);
        CHECK(rows.count(1) == 0);
        CHECK(rows.count(2) == 1);
    }
}

TEST_CASE("fixed in-degree: every target draws exactly its sources, distinct without multapses, never itself without autapses") {
    const auto net = parse_network(R"(<population id="p" size="40"/><population id="q" size="30"/>
        <projection from="p" to="q" kind="fixed-indegree" indegree="25" seed="3" weight="0.5"/>
        <projection from="p" to="p" kind="fixed-indegree" indegree="39" multapses="false" autapses="false" seed="4"/>
        <projection from="q[0:5]" to="p" kind="fixed-indegree" indegree="12" seed="5" delay="2"/>)");
    check_rows(net, "t.xml");
    const synapse_rows rows(net);
    bool repeats_with_multapses = false;
    for (neuron_index t = 0; t < 70; ++t) {
        std::vector<std::vector<neuron_index>> sources(3);
        rows.for_each(t, [&](neuron_index source, float, std::uint16_t, std::size_t element) { sources[element].push_back(source); });
        for (const auto& s : sources) CHECK(std::is_sorted(s.begin(), s.end()));
        if (t >= 40) {  // q: 25 from p, drawn with repeats allowed
            REQUIRE(sources[0].size() == 25);
            CHECK(sources[0].back() < 40);
            repeats_with_multapses |= std::adjacent_find(sources[0].begin(), sources[0].end()) != sources[0].end();
            CHECK(rows.count(t) == 25);
            continue;
        }
        // p: 39 distinct others (every other member of p), and 12 from q[0:5] (repeats forced)
        REQUIRE(sources[1].size() == 39);
        CHECK(std::adjacent_find(sources[1].begin(), sources[1].end()) == sources[1].end());
        CHECK(std::find(sources[1].begin(), sources[1].end(), t) == sources[1].end());
        REQUIRE(sources[2].size() == 12);
        CHECK(sources[2].front() >= 40);
        CHECK(sources[2].back() < 45);
        CHECK(rows.count(t) == 51);
    }
    CHECK(repeats_with_multapses);  // 25 draws from 40: some target gets a source twice
}

TEST_CASE("synapse rows refuse a reference to no neuron with its location") {
    network net = parse_network(R"(<population id="p" size="3"/>
        <projection from="p" to="p" kind="all"/>)");
    net.projections[0].to = "nothing";
    try {
        const synapse_rows rows(net);
        FAIL("built");
    } catch (const config_error& e) {
        CHECK(e.problems().front().where.line == 2);
    }
}
