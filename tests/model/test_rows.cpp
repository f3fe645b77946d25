// synapse_rows: each target's row equals what expand() stores for it (sources, weights,
// delays, canonical order), counts equal row sizes, and elements report their weight and
// delay; on every example and on each connection rule; a document's drawn values stay
// those it always had.
#include "dnnc/model/expand.hpp"
#include "dnnc/model/rows.hpp"
#include "dnnc/protocol/xml.hpp"
#include "parse_network.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>
#include <filesystem>

using namespace dnnc;
using namespace dnnc::model;
using namespace dnnc::protocol;

namespace {
using test::parse_network;

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
            const auto u = rows.uniform(element);  // absent for drawn weights or delays
            same = same && (!u || (u->weight == weight && u->delay == delay));
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

// Every row of `net` as (element, source, weight, delay), drawn by a synapse_rows object
// that was asked for `targets` only (or for every target).
using synapse_row = std::vector<std::tuple<std::size_t, neuron_index, float, std::uint16_t>>;
synapse_row row_of(const synapse_rows& rows, neuron_index t) {
    synapse_row row;
    rows.for_each(t, [&](neuron_index source, float weight, std::uint16_t delay, std::size_t element) {
        row.emplace_back(element, source, weight, delay);
    });
    return row;
}

TEST_CASE("fixed out-degree: every source reaches exactly K targets, distinct without multapses, never itself without autapses") {
    const auto net = parse_network(R"(<population id="p" size="40"/><population id="q" size="30"/>
        <projection from="p" to="q" kind="fixed-outdegree" outdegree="25" seed="3" weight="0.5"/>
        <projection from="p" to="p" kind="fixed-outdegree" outdegree="39" multapses="false" autapses="false" seed="4"/>
        <projection from="q[0:5]" to="p[0:3]" kind="fixed-outdegree" outdegree="12" seed="5" delay="2"/>)");
    check_rows(net, "t.xml");
    const synapse_rows rows(net);
    std::vector<std::vector<std::uint64_t>> out(3, std::vector<std::uint64_t>(70, 0));  // per element, per source
    std::vector<std::vector<std::uint64_t>> self_or_repeat(3, std::vector<std::uint64_t>(1, 0));
    bool repeats_with_multapses = false;
    for (neuron_index t = 0; t < 70; ++t) {
        std::vector<std::vector<neuron_index>> sources(3);
        rows.for_each(t, [&](neuron_index source, float, std::uint16_t, std::size_t element) {
            sources[element].push_back(source);
            ++out[element][source];
        });
        for (const auto& s : sources) CHECK(std::is_sorted(s.begin(), s.end()));
        repeats_with_multapses |= std::adjacent_find(sources[0].begin(), sources[0].end()) != sources[0].end();
        CHECK(std::adjacent_find(sources[1].begin(), sources[1].end()) == sources[1].end());
        CHECK(std::find(sources[1].begin(), sources[1].end(), t) == sources[1].end());
        if (t >= 40) CHECK(sources[1].empty());
        if (t >= 3) CHECK(sources[2].empty());
    }
    for (neuron_index s = 0; s < 40; ++s) {
        CHECK(out[0][s] == 25);
        CHECK(out[1][s] == 39);  // every other member of p
    }
    for (neuron_index s = 40; s < 45; ++s) CHECK(out[2][s] == 12);  // 12 onto 3 targets: repeats forced
    CHECK(repeats_with_multapses);  // 25 draws onto 30 targets: some source lands twice
    CHECK(rows.outdegree_synapses(0) == 1000);
    CHECK(rows.outdegree_synapses(1) == 40 * 39);
    CHECK(rows.outdegree_synapses(2) == 60);
}

TEST_CASE("fixed total number: exactly n synapses, spread evenly, distinct pairs without multapses") {
    const auto net = parse_network(R"(<population id="p" size="200"/><population id="q" size="7"/>
        <projection from="p" to="p" kind="fixed-total-number" n="40000" seed="3" autapses="false"/>
        <projection from="q" to="q" kind="fixed-total-number" n="42" multapses="false" autapses="false" seed="4"/>
        <projection from="p[0:3]" to="q[0:2]" kind="fixed-total-number" n="6" multapses="false" seed="5"/>
        <projection from="q" to="p" kind="fixed-total-number" n="0" seed="6"/>)");
    check_rows(net, "t.xml");
    const synapse_rows rows(net);
    std::uint64_t total[4] = {};
    double sum_squares = 0;
    for (neuron_index t = 0; t < 207; ++t) {
        std::vector<std::vector<neuron_index>> sources(4);
        rows.for_each(t, [&](neuron_index source, float, std::uint16_t, std::size_t element) { sources[element].push_back(source); });
        for (std::size_t e = 0; e < 4; ++e) total[e] += sources[e].size();
        CHECK(std::find(sources[0].begin(), sources[0].end(), t) == sources[0].end());
        if (t < 200) sum_squares += static_cast<double>(sources[0].size()) * static_cast<double>(sources[0].size());
        if (t >= 200) {
            // 42 of the 7 x 6 pairs: every other member of q, once each.
            CHECK(sources[1].size() == 6);
            CHECK(std::adjacent_find(sources[1].begin(), sources[1].end()) == sources[1].end());
            CHECK(std::find(sources[1].begin(), sources[1].end(), t) == sources[1].end());
        }
        if (t == 200 || t == 201) CHECK(sources[2] == std::vector<neuron_index>{0, 1, 2});  // all 6 pairs
    }
    CHECK(total[0] == 40000);
    CHECK(total[1] == 42);
    CHECK(total[2] == 6);
    CHECK(total[3] == 0);
    // In-degrees are multinomial: mean 200, variance about 200 (1 - 1/200).
    const double variance = sum_squares / 200 - 200.0 * 200.0;
    CHECK(variance > 150);
    CHECK(variance < 260);
}

TEST_CASE("a node's rows equal the whole network's rows for its targets, whatever the rule") {
    const auto net = parse_network(R"(<population id="p" size="300"/><population id="q" size="100"/>
        <projection from="p" to="q" kind="fixed-outdegree" outdegree="20" seed="3" multapses="false">
          <weight distribution="normal" mean="1" std="0.5" min="0"/><delay distribution="uniform" min="0.1" max="2"/></projection>
        <projection from="q" to="p" kind="fixed-total-number" n="5000" seed="4">
          <weight distribution="lognormal" mu="0" sigma="1"/></projection>
        <projection from="p" to="p" kind="fixed-outdegree" outdegree="3" autapses="false" seed="5" delay-ms="0.25"/>
        <projection from="q" to="q" kind="random" p="0.1" seed="6"><delay distribution="normal" mean="1" std="0.3" min="0.05"/></projection>)");
    const synapse_rows whole(net);
    std::vector<neuron_index> mine;
    for (neuron_index t = 0; t < 400; t += 3) mine.push_back(t);
    const synapse_rows node(net, mine);
    for (const auto t : mine) CHECK(row_of(node, t) == row_of(whole, t));
    CHECK(row_of(node, 1).empty() == false);  // other rules still give rows for any target
    for (neuron_index t = 1; t < 400; t += 3)
        node.for_each(t, [&](neuron_index, float, std::uint16_t, std::size_t element) { CHECK(element != 0); CHECK(element != 2); });
}

TEST_CASE("drawn weights and delays: moments, bounds, signs, ticks") {
    const auto net = parse_network(R"(<population id="p" size="400"/>
        <projection from="p" to="p" kind="fixed-indegree" indegree="100" seed="1">
          <weight distribution="normal" mean="87.8" std="8.78" min="0"/><delay distribution="normal" mean="1.5" std="0.75" min="0.05"/></projection>
        <projection from="p" to="p" kind="fixed-indegree" indegree="100" seed="2">
          <weight distribution="normal" mean="-351.2" std="35.12" max="0"/><delay distribution="uniform" min="0.4" max="1.2"/></projection>
        <projection from="p" to="p" kind="fixed-indegree" indegree="25" seed="3">
          <weight distribution="lognormal" mu="0.5" sigma="0.25" min="1" max="3"/><delay distribution="constant" value="0.75"/></projection>
        <projection from="p" to="p" kind="fixed-indegree" indegree="25" seed="4" delay-ms="0.15">
          <weight distribution="uniform" min="-2" max="3"/></projection>)");
    check_rows(net, "t.xml");
    CHECK(longest_delay(net) == 15 + 75);  // mean + 10 std of the first delays, in ticks of 0.1 ms
    const synapse_rows rows(net);
    struct moments {
        double n = 0, sum = 0, squares = 0, low = 1e300, high = -1e300;
        void add(double x) {
            ++n, sum += x, squares += x * x;
            low = std::min(low, x), high = std::max(high, x);
        }
        double mean() const { return sum / n; }
        double std() const { return std::sqrt(squares / n - mean() * mean()); }
    };
    std::vector<moments> weights(4), delays(4);
    for (neuron_index t = 0; t < 400; ++t)
        rows.for_each(t, [&](neuron_index, float weight, std::uint16_t delay, std::size_t e) {
            weights[e].add(weight);
            delays[e].add(delay);
        });
    // Normal bounded far out: the moments of the normal itself.
    CHECK(weights[0].mean() == Approx(87.8).epsilon(0.01));
    CHECK(weights[0].std() == Approx(8.78).epsilon(0.03));
    CHECK(weights[0].low > 0);
    CHECK(weights[1].mean() == Approx(-351.2).epsilon(0.01));
    CHECK(weights[1].high <= 0);
    // Delays in ticks of 0.1 ms: the normal truncated at 0.05 ms (1.93 std below its mean),
    // whose mean and std are those of a truncated normal; at least 1 tick.
    const double alpha = (0.05 - 1.5) / 0.75, phi = std::exp(-alpha * alpha / 2) / std::sqrt(2 * M_PI),
                 kept = 0.5 * std::erfc(alpha / std::sqrt(2.0)), lambda = phi / kept;
    CHECK(delays[0].mean() == Approx(10 * (1.5 + 0.75 * lambda)).epsilon(0.01));
    CHECK(delays[0].std() == Approx(10 * 0.75 * std::sqrt(1 + alpha * lambda - lambda * lambda)).epsilon(0.03));
    CHECK(delays[0].low >= 1);
    CHECK(delays[1].low == 4);
    CHECK(delays[1].high == 12);
    CHECK(delays[1].mean() == Approx(8).epsilon(0.02));
    // Lognormal redrawn into [1, 3]; constant 0.75 ms is 8 ticks (7.5 rounds up), as is delay-ms 0.15 (1.5).
    CHECK(weights[2].low >= 1);
    CHECK(weights[2].high <= 3);
    CHECK(weights[2].mean() > 1.6);
    CHECK(weights[2].mean() < 1.9);
    CHECK(delays[2].low == 8);
    CHECK(delays[2].high == 8);
    CHECK(delays[3].low == 2);
    CHECK(delays[3].high == 2);
    CHECK(weights[3].mean() == Approx(0.5).margin(0.06));
    CHECK(weights[3].std() == Approx(5 / std::sqrt(12.0)).epsilon(0.03));
    CHECK(weights[3].low >= -2);
    CHECK(weights[3].high < 3);
    CHECK_FALSE(rows.uniform(0));
    CHECK_FALSE(rows.uniform(3));
}

TEST_CASE("a row's weights drawn alone are for_each's, and passing over some leaves the others unchanged") {
    // Weights whose values may be passed over without drawing (normal far from its bound,
    // uniform, constant, a fixed weight) and ones that may be redrawn (near bounds), with
    // delays drawn beside some.
    const auto net = parse_network(R"(<population id="p" size="300"/>
        <projection from="p" to="p" kind="fixed-indegree" indegree="90" seed="1">
          <weight distribution="normal" mean="87.8" std="8.78" min="0"/><delay distribution="normal" mean="1.5" std="0.75" min="0.05"/></projection>
        <projection from="p" to="p" kind="random" p="0.2" seed="2">
          <weight distribution="lognormal" mu="0.5" sigma="0.25" min="1" max="3"/></projection>
        <projection from="p" to="p" kind="fixed-total-number" n="6000" seed="3">
          <weight distribution="uniform" min="-2" max="3"/><delay distribution="uniform" min="0.4" max="1.2"/></projection>
        <projection from="p" to="p" kind="all" weight="0.5"><delay distribution="constant" value="0.75"/></projection>
        <projection from="p" to="p" kind="fixed-indegree" indegree="20" seed="4">
          <weight distribution="constant" value="-1.25"/></projection>)");
    const synapse_rows rows(net);
    std::size_t skipped = 0;
    for (neuron_index t = 0; t < 300; t += 7)
        for (std::size_t e = 0; e < rows.element_count(); ++e) {
            std::vector<float> expected;
            rows.for_each_of(t, e, [&](neuron_index, float weight, std::uint16_t, std::size_t) { expected.push_back(weight); });
            synapse_rows::row_weights all(rows, t, e), some(rows, t, e);
            for (std::size_t i = 0; i < expected.size(); ++i) {
                const float x = all.next();
                REQUIRE(std::memcmp(&x, &expected[i], sizeof x) == 0);
            }
            // Every third weight read, the others passed over in runs of 1 and 2.
            for (std::size_t i = 2; i < expected.size(); i += 3) {
                some.skip(i % 2 == 0 ? 2 : 1);
                if (i % 2 != 0) some.next();  // one passed over, one read and dropped
                const float x = some.next();
                REQUIRE(std::memcmp(&x, &expected[i], sizeof x) == 0);
                skipped += 2;
            }
            // Every 23rd read: passes beyond what was drawn ahead.
            synapse_rows::row_weights far(rows, t, e);
            for (std::size_t i = 22; i < expected.size(); i += 23) {
                far.skip(22);
                const float x = far.next();
                REQUIRE(std::memcmp(&x, &expected[i], sizeof x) == 0);
            }
        }
    CHECK(skipped > 10000);
}

TEST_CASE("a seed draws the network it always drew: the scaled microcircuit's rows, hashed") {
    // Sources, weights' bits, delays and elements of all 2,988,807 synapses (FNV-1a), as the
    // draws made them one by one before they were drawn in batches (12c6596): snapshots and
    // runs of a document keep meaning the same network.
    const auto doc = load_document(std::string(DNNC_SOURCE_DIR) + "/examples/microcircuit/microcircuit_scaled.xml");
    const synapse_rows rows(*doc.net);
    std::uint64_t hash = 1469598103934665603ULL, synapses = 0;
    auto mix = [&hash](std::uint64_t v) { hash = (hash ^ v) * 1099511628211ULL; };
    for (neuron_index t = 0; t < rows.neuron_count(); ++t)
        rows.for_each(t, [&](neuron_index source, float weight, std::uint16_t delay, std::size_t element) {
            std::uint32_t bits;
            std::memcpy(&bits, &weight, sizeof bits);
            mix(source), mix(bits), mix(delay), mix(element);
            ++synapses;
        });
    CHECK(synapses == 2988807);
    CHECK(hash == 0x414135f979b2234bULL);
}

TEST_CASE("drawn positions are the stream's draws, sorted, less the skipped position") {
    // Pools from below the draws to far above them (short rows go to std::sort, longer ones to
    // the radix sort), with and without multapses, with and without a skipped position.
    for (const std::uint64_t size : {1, 2, 63, 64, 65, 1000, 20000, 1000000})
        for (const std::uint64_t k : {1, 3, 50, 700})
            for (const bool multapses : {true, false})
                for (const std::uint64_t skipped : {std::uint64_t{0}, size / 2, size}) {
                    const std::uint64_t pool = size - (skipped < size ? 1 : 0);
                    std::vector<std::uint64_t> expected;
                    splitmix64 rng(size * 1000 + k);
                    if (multapses) {
                        for (std::uint64_t i = 0; pool > 0 && i < k; ++i) expected.push_back(rng.below(pool));
                    } else {
                        for (std::uint64_t j = pool - std::min(k, pool); j < pool; ++j) {
                            const std::uint64_t t = rng.below(j + 1);
                            expected.push_back(std::find(expected.begin(), expected.end(), t) != expected.end() ? j : t);
                        }
                    }
                    std::sort(expected.begin(), expected.end());
                    for (auto& x : expected)
                        if (x >= skipped) ++x;
                    std::vector<std::uint64_t> got;
                    synapse_rows::draw_positions(size * 1000 + k, size, skipped, k, multapses, got);
                    INFO("size " << size << ", k " << k << ", multapses " << multapses << ", skipped " << skipped);
                    CHECK(got == expected);
                }
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
