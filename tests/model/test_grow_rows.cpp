// Rows of a grown network: applying a grow keeps every old row as it was (each connection
// element's synapses of an old target before the grow are the first ones of that element
// after it: same sources, weights and delays), a fixed in-degree row of a new target draws
// K synapses from the sources there were at its grow (a fixed out-degree source K targets
// from the targets there were at its own), grown members are named and found as
// P[k], the neuron count is the written one plus the grown members, and the planner places
// every neuron of a grown network.
#include "dnnc/model/check.hpp"
#include "dnnc/model/expand.hpp"
#include "dnnc/model/rows.hpp"
#include "dnnc/plan/plan.hpp"
#include "dnnc/protocol/xml.hpp"
#include "parse_network.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

using namespace dnnc;
using namespace dnnc::model;
using namespace dnnc::protocol;

namespace {

// A network of `body`, checked; its grows as written (scheduled unless applied="true").
network checked_network(const std::string& body) {
    network net = test::parse_network(body);
    check_network(net);
    return net;
}

// The same network with its first `n` grows applied.
network applied(network net, std::size_t n) {
    for (std::size_t g = 0; g < net.grows.size(); ++g) net.grows[g].applied = g < n;
    return net;
}

using synapse_of = std::tuple<neuron_index, float, std::uint16_t>;  // source, weight, delay

// Every synapse of target `t`, per connection element, in canonical order.
std::vector<std::vector<synapse_of>> row_by_element(const synapse_rows& rows, neuron_index t) {
    std::vector<std::vector<synapse_of>> row(rows.element_count());
    rows.for_each(t, [&](neuron_index source, float weight, std::uint16_t delay, std::size_t element) {
        row[element].emplace_back(source, weight, delay);
    });
    return row;
}

// `later` has `earlier`'s neurons first, and each old target's row of each element in
// `earlier` is the beginning of that element's row in `later`; synapse_rows agrees with
// expand(). Returns how many synapses old targets gained (new sources reaching them).
std::uint64_t check_rows_kept(const network& earlier, const network& later) {
    const auto before = expand(earlier, "t.xml");
    const auto after = expand(later, "t.xml");
    const synapse_rows rows_before(earlier), rows_after(later);
    REQUIRE(after.neuron_count() >= before.neuron_count());
    REQUIRE(rows_after.neuron_count() == after.neuron_count());
    std::uint64_t gained = 0;
    for (neuron_index t = 0; t < before.neuron_count(); ++t) {
        INFO("old target " << before.neuron_name(t));
        REQUIRE(after.neuron_name(t) == before.neuron_name(t));
        const auto old_row = row_by_element(rows_before, t);
        const auto new_row = row_by_element(rows_after, t);
        bool kept = true;
        for (std::size_t e = 0; e < old_row.size(); ++e) {
            kept = kept && new_row[e].size() >= old_row[e].size() &&
                   std::equal(old_row[e].begin(), old_row[e].end(), new_row[e].begin());
            gained += new_row[e].size() - std::min(new_row[e].size(), old_row[e].size());
        }
        CHECK(kept);
        // expand() stores what the rows give, old and new
        std::uint64_t s = after.in_begin[t];
        bool same = true;
        rows_after.for_each(t, [&](neuron_index source, float weight, std::uint16_t delay, std::size_t) {
            same = same && s < after.in_begin[t + 1] && after.in_source[s] == source && after.in_weight[s] == weight &&
                   after.in_delay[s] == delay;
            ++s;
        });
        CHECK(same);
        CHECK(s == after.in_begin[t + 1]);
    }
    return gained;
}

// Checks every step of applying `net`'s grows one by one; returns the synapses old targets
// gained over all steps.
std::uint64_t check_each_grow(const network& net) {
    std::uint64_t gained = 0;
    for (std::size_t n = 0; n < net.grows.size(); ++n) {
        INFO("applying grow " << n + 1 << " of " << net.grows.size());
        gained += check_rows_kept(applied(net, n), applied(net, n + 1));
    }
    return gained;
}

// The written size plus the members of the applied grows, and every grown member named
// P[k] and found by that name.
void check_names(const network& net, std::size_t written_neurons) {
    const auto e = expand(net, "t.xml");
    std::size_t grown = 0;
    for (const auto& g : net.grows)
        if (g.applied) grown += g.add;
    CHECK(e.neuron_count() == written_neurons + grown);
    for (neuron_index i = 0; i < e.neuron_count(); ++i) {
        const auto name = e.neuron_name(i);
        INFO(i << " " << name);
        const auto found = e.find(name);
        REQUIRE(found);
        CHECK(*found == i);
    }
}

// A .npy list of (source, target, weight, delay_ms) rows in a scratch folder.
std::string write_list(const std::vector<double>& values) {
    static const struct folder {
        std::filesystem::path path = std::filesystem::temp_directory_path() / ("dnnc-grow-rows-" + std::to_string(std::random_device{}()));
        folder() { std::filesystem::create_directories(path); }
        ~folder() {
            std::error_code ignored;
            std::filesystem::remove_all(path, ignored);
        }
    } dir;
    std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (" + std::to_string(values.size() / 4) + ", 4), }";
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    const auto path = (dir.path / "list.npy").string();
    std::ofstream out(path, std::ios::binary);
    out.write("\x93NUMPY\x01\x00", 8);
    const unsigned char length[2] = {static_cast<unsigned char>(header.size() & 0xFF), static_cast<unsigned char>(header.size() >> 8)};
    out.write(reinterpret_cast<const char*>(length), 2);
    out << header;
    for (double v : values) out.write(reinterpret_cast<const char*>(&v), 8);
    return path;
}

// E (30, explicit neurons a and b before it) and I (10); grows of E, I and E again.
const std::string two_populations = R"(<neuron id="a" model="iaf_psc_alpha"/><neuron id="b" model="iaf_psc_alpha"/>
    <population id="E" size="30" model="iaf_psc_alpha"/><population id="I" size="10" model="iaf_psc_alpha"/>)";
const std::string three_grows = R"(<grow population="E" add="7" at-ms="1"/><grow population="I" add="4" at-ms="2"/>
    <grow population="E" add="5" at-ms="3"/>)";

}  // namespace

TEST_CASE("a grow keeps every old row of each connection rule, new sources after the old ones") {
    struct rule_case {
        const char* name;
        std::string projections;
        bool old_targets_gain;  // whether new sources reach old targets
    };
    const std::vector<rule_case> cases{
        {"all", R"(<projection from="E" to="I" kind="all" weight="0.5" delay="2"/>
                   <projection from="E" to="E" kind="all" autapses="false" weight="-1"/>)", true},
        {"one-to-one", R"(<projection from="E" to="E" kind="one-to-one" weight="3"/>
                          <projection from="I" to="I" kind="one-to-one" autapses="false"/>)", false},
        {"random", R"(<projection from="E" to="E" kind="random" p="0.2" seed="3" weight="0.5" delay="2"/>
                      <projection from="I" to="E" kind="random" p="0.5" seed="4" autapses="false" weight="-2"/>)", true},
        {"fixed-indegree with multapses and autapses", R"(<projection from="E" to="E" kind="fixed-indegree" indegree="12" seed="5"/>
            <projection from="I" to="E" kind="fixed-indegree" indegree="6" seed="6" weight="-1" delay="3"/>)", false},
        {"fixed-indegree without multapses or autapses",
         R"(<projection from="E" to="E" kind="fixed-indegree" indegree="20" multapses="false" autapses="false" seed="7"/>
            <projection from="E" to="I" kind="fixed-indegree" indegree="29" multapses="false" seed="8"/>)", false},
        {"fixed-outdegree", R"(<projection from="E" to="I" kind="fixed-outdegree" outdegree="4" seed="9" weight="2"/>
            <projection from="E" to="E" kind="fixed-outdegree" outdegree="10" multapses="false" autapses="false" seed="10"/>)", true},
        {"drawn weights and delays", R"(<projection from="E" to="E" kind="random" p="0.3" seed="11">
              <weight distribution="normal" mean="2" std="0.5" min="0"/><delay distribution="uniform" min="0.1" max="2"/></projection>
            <projection from="I" to="E" kind="fixed-indegree" indegree="5" seed="12">
              <weight distribution="lognormal" mu="0" sigma="1"/><delay distribution="normal" mean="1.5" std="0.75" min="0.05"/></projection>
            <projection from="E" to="I" kind="all"><weight distribution="uniform" min="-1" max="1"/></projection>)", true},
        {"list", std::string(R"(<projection from="E" to="I" kind="list" connections=")") +
                     write_list({0, 0, 1.5, 1, 3, 0, -2, 2, 29, 9, 0.25, 0.5, 4, 9, 1, 1}) + "\"/>",
         false},
        {"explicit synapses", R"(<synapse from="a" to="E[3]" weight="0.25"/><synapse from="E[29]" to="b" weight="3" delay="4"/>
            <projection from="E" to="E" kind="all" weight="0.5"/><synapse from="I[9]" to="E[3]" weight="-1"/>)", true},
    };
    for (const auto& c : cases) {
        INFO(c.name);
        const auto net = checked_network(two_populations + c.projections + three_grows);
        const auto gained = check_each_grow(net);
        if (c.old_targets_gain)
            CHECK(gained > 0);
        else
            CHECK(gained == 0);
        check_names(applied(net, 3), 42);
    }
}

TEST_CASE("explicit synapses onto and from grown members P[k] join their rows, the old rows unchanged") {
    // E grew 7 (E[30..36] are neurons 42..48) and I 4 (I[10..13], 49..52); the synapses name them
    const auto net = checked_network(two_populations + R"(<grow population="E" add="7" applied="true"/>
        <grow population="I" add="4" applied="true"/><grow population="E" add="5" at-ms="3"/>
        <projection from="E" to="E" kind="all" weight="0.5"/>
        <synapse from="a" to="E[31]" weight="0.25" delay="2"/><synapse from="I[12]" to="E[3]" weight="-1"/>
        <synapse from="E[35]" to="I[10]" weight="4" delay="5"/>)");
    CHECK(check_rows_kept(net, applied(net, 3)) > 0);
    const auto e = expand(net, "t.xml");
    CHECK(e.neuron_count() == 42 + 7 + 4);
    CHECK(e.find("E[30]") == 42u);
    CHECK(e.find("E[36]") == 48u);
    CHECK(e.find("I[10]") == 49u);
    CHECK(e.find("I[13]") == 52u);
    CHECK_FALSE(e.find("E[37]"));
    CHECK_FALSE(e.find("I[14]"));
    CHECK(e.neuron_name(48) == "E[36]");
    CHECK(e.neuron_name(49) == "I[10]");

    const synapse_rows rows(net);
    const auto into_31 = row_by_element(rows, 43);
    REQUIRE(into_31[1].size() == 1);
    CHECK(into_31[1][0] == synapse_of{0, 0.25f, 2});
    const auto into_3 = row_by_element(rows, 5);
    REQUIRE(into_3[2].size() == 1);
    CHECK(std::get<0>(into_3[2][0]) == 51u);
    const auto into_i10 = row_by_element(rows, 49);
    REQUIRE(into_i10[3].size() == 1);
    CHECK(std::get<0>(into_i10[3][0]) == 47u);
    CHECK(into_i10[0].empty());

    // the all-to-all row of a grown member reaches every member of E, old and grown
    std::vector<neuron_index> sources;
    for (const auto& s : into_31[0]) sources.push_back(std::get<0>(s));
    std::vector<neuron_index> members;
    for (neuron_index i = 2; i < 32; ++i) members.push_back(i);
    for (neuron_index i = 42; i < 49; ++i) members.push_back(i);
    CHECK(sources == members);

    check_names(applied(net, 3), 42);
    const auto all = expand(applied(net, 3), "t.xml");
    CHECK(all.find("E[37]") == 53u);
    CHECK(all.neuron_name(57) == "E[41]");
}

TEST_CASE("a fixed in-degree row of a new target draws K sources from the sources there were at its grow") {
    for (const bool multapses : {true, false}) {
        INFO("multapses " << multapses);
        const std::string no_multapses = multapses ? "" : R"( multapses="false" autapses="false")";
        const auto net = applied(checked_network(two_populations + R"(<projection from="E" to="E" kind="fixed-indegree" indegree="15" seed="21")" +
                                               no_multapses + R"(/><projection from="E" to="I" kind="fixed-indegree" indegree="9" seed="22")" +
                                               no_multapses + "/>" + three_grows),
                                 3);
        // neurons: a b | E[0:30] 2..31 | I[0:10] 32..41 | E[30:37] 42..48 | I[10:14] 49..52 | E[37:42] 53..57
        const auto e = expand(net, "t.xml");
        REQUIRE(e.neuron_count() == 58);
        const synapse_rows rows(net);
        const auto in_first_e = [](neuron_index s) { return (s >= 2 && s < 32) || (s >= 42 && s < 49); };
        const auto in_all_e = [&](neuron_index s) { return in_first_e(s) || (s >= 53 && s < 58); };
        const auto check_row = [&](neuron_index t, std::size_t element, std::size_t k, auto in_sources) {
            INFO("target " << e.neuron_name(t));
            const auto row = row_by_element(rows, t);
            REQUIRE(row[element].size() == k);
            std::vector<neuron_index> sources;
            for (const auto& s : row[element]) sources.push_back(std::get<0>(s));
            CHECK(std::all_of(sources.begin(), sources.end(), in_sources));
            if (!multapses) {
                CHECK(std::adjacent_find(sources.begin(), sources.end()) == sources.end());
                CHECK(std::find(sources.begin(), sources.end(), t) == sources.end());
            }
            return sources;
        };
        bool reaches_first_grow = false, reaches_second_grow = false;
        for (neuron_index t = 42; t < 49; ++t) {  // E's first grow: E as it was then (37 members)
            for (const auto s : check_row(t, 0, 15, in_first_e)) reaches_first_grow |= s >= 42;
        }
        for (neuron_index t = 49; t < 53; ++t) {  // I's grow, after E's first: the same 37
            for (const auto s : check_row(t, 1, 9, in_first_e)) reaches_first_grow |= s >= 42;
        }
        for (neuron_index t = 53; t < 58; ++t) {  // E's second grow: all 42, its own members included
            for (const auto s : check_row(t, 0, 15, in_all_e)) reaches_second_grow |= s >= 53;
        }
        CHECK(reaches_first_grow);
        CHECK(reaches_second_grow);
        for (neuron_index t = 2; t < 32; ++t) check_row(t, 0, 15, [](neuron_index s) { return s >= 2 && s < 32; });
    }
}

TEST_CASE("the planner places every neuron of a grown network, and each node's share expands its rows") {
    const std::string text = R"(<dnnc xmlns="urn:dnnc:1"><network name="t">)" + two_populations +
                             R"(<projection from="E" to="E" kind="fixed-indegree" indegree="10" seed="1"/>
        <projection from="I" to="E" kind="random" p="0.2" seed="2"/><projection from="E" to="I" kind="fixed-outdegree" outdegree="3" seed="3"/>
        <synapse from="E[60]" to="I[12]" weight="2"/>
        <grow population="E" add="40" applied="true"/><grow population="I" add="10" applied="true"/>
        <grow population="E" add="5" at-ms="10"/></network>
      <cluster lead="n0"><node id="n0" port="7000"/><node id="n1" port="7001"/><node id="n2" port="7002"/>
        <link from="n0" to="n1"/><link from="n1" to="n2"/></cluster></dnnc>)";
    const document doc = parse_document(text, "t.xml");
    check_document(doc);
    const auto planned = plan::plan_network(doc);
    const auto net = expand(*doc.net, "t.xml");
    REQUIRE(net.neuron_count() == 42 + 50);
    REQUIRE(planned.net.neuron_count() == net.neuron_count());
    REQUIRE(planned.node_of_neuron.size() == net.neuron_count());
    for (const auto node : planned.node_of_neuron) CHECK(node < 3);

    const plan::topology topo(*planned.doc.clu);
    const std::vector<double> latency(topo.link_count(), 0.25);
    const auto root = plan::build_configs(planned, topo, latency, plan::wait_windows(planned, topo, latency));
    std::vector<const node_config*> configs{&root};
    for (std::size_t c = 0; c < configs.size(); ++c)
        for (const auto& child : configs[c]->children) configs.push_back(&child);
    REQUIRE(configs.size() == 3);
    std::vector<int> placed(net.neuron_count(), 0);
    for (const auto* c : configs) {
        REQUIRE(c->share);
        std::vector<std::int64_t> local;
        for (const auto& n : c->neurons) local.push_back(n.index);
        const auto share = expand_share(*c->share, local);
        for (const auto i64 : local) {
            const auto i = static_cast<neuron_index>(i64);
            REQUIRE(i < net.neuron_count());
            ++placed[i];
            INFO(net.neuron_name(i));
            REQUIRE(share.in_begin[i + 1] - share.in_begin[i] == net.in_begin[i + 1] - net.in_begin[i]);
            bool same = true;
            for (auto s = net.in_begin[i], at = share.in_begin[i]; s < net.in_begin[i + 1]; ++s, ++at)
                same = same && share.in_source[at] == net.in_source[s] && share.in_weight[at] == net.in_weight[s] &&
                       share.in_delay[at] == net.in_delay[s];
            CHECK(same);
        }
    }
    CHECK(std::all_of(placed.begin(), placed.end(), [](int n) { return n == 1; }));
}

TEST_CASE("a fixed out-degree source reaches K targets of those there were at its grow") {
    const auto net = applied(checked_network(two_populations + R"(<projection from="E" to="I" kind="fixed-outdegree" outdegree="4" seed="31"/>)" +
                                           three_grows),
                             3);
    // neurons: a b | E[0:30] 2..31 | I[0:10] 32..41 | E[30:37] 42..48 | I[10:14] 49..52 | E[37:42] 53..57
    const synapse_rows rows(net);
    std::vector<std::vector<neuron_index>> targets_of(58);
    for (neuron_index t = 0; t < 58; ++t)
        rows.for_each(t, [&](neuron_index source, float, std::uint16_t, std::size_t) { targets_of[source].push_back(t); });
    const auto old_i = [](neuron_index t) { return t >= 32 && t < 42; };
    const auto grown_i = [](neuron_index t) { return t >= 49 && t < 53; };
    bool reaches_grown_i = false;
    for (neuron_index s = 0; s < 58; ++s) {
        INFO("source " << s);
        const auto& t = targets_of[s];
        const bool in_e = (s >= 2 && s < 32) || (s >= 42 && s < 49) || s >= 53;
        if (!in_e) {
            CHECK(t.empty());
            continue;
        }
        CHECK(t.size() == 4);
        if (s < 53) {  // E as written and its first grow: I had 10 members then
            CHECK(std::all_of(t.begin(), t.end(), old_i));
        } else {  // after I's grow: all 14
            CHECK(std::all_of(t.begin(), t.end(), [&](neuron_index x) { return old_i(x) || grown_i(x); }));
            reaches_grown_i |= std::any_of(t.begin(), t.end(), grown_i);
        }
    }
    CHECK(reaches_grown_i);
}
