// Growing the ends of plastic projections on real local clusters (tests/data/growing_plastic.xml:
// E->E stdp_synapse, I->E tsodyks2_synapse and a sparse R->I stdp_synapse, random rows that
// reach new sources): scheduled grows give the same spikes and learned weights on 1, 2 and 3
// nodes, also where an old neuron gains its first plastic synapse; `dnnc grow` keeps the
// weight and the rule state of every synapse that existed, in its place in its row, starts
// each new synapse as an install of the grown network builds it, and a snapshot of the grown
// network restored on another cluster goes on bit for bit.
#include "grow_fixture.hpp"

#include "dnnc/protocol/snapshot.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace dnnc::test;

namespace {

// E 200, I 50 and R 10 before any grow.
constexpr long e_size = 200, i_size = 50, r_size = 10;

std::string plastic_network(const std::string& extra = "") { return with_in_network(slurp(source_path("tests/data/growing_plastic.xml")), extra); }

const std::string scheduled_grows = R"(    <grow population="E" add="20" at-ms="20"/>
    <grow population="I" add="5" at-ms="35"/>
    <grow population="R" add="10" at-ms="35"/>
)";

// A neuron's name, "E[12]": its population and index.
struct member {
    std::string population;
    long index;
};
member member_of(const std::string& name) {
    const auto open = name.find('[');
    return {name.substr(0, open), std::stol(name.substr(open + 1))};
}
// A grow of `population` from `size` members on.
struct grow_of {
    std::string population;
    long size;
    // Whether it added the neuron named `name`.
    bool added(const std::string& name) const {
        const auto m = member_of(name);
        return m.population == population && m.index >= size;
    }
};
const grow_of e_grow{"E", e_size}, i_grow{"I", i_size}, r_grow{"R", r_size};
// Whether a grow of the document's added the neuron.
bool is_new(const std::string& name) { return e_grow.added(name) || i_grow.added(name) || r_grow.added(name); }

// A weights CSV's rows (projection,source,target,weight), in file order: each target's
// synapses in canonical order.
struct weight_row {
    std::string projection, source, target, line;
};
std::vector<weight_row> weight_rows(const std::string& csv) {
    std::istringstream in(csv);
    std::string line;
    std::getline(in, line);
    std::vector<weight_row> rows;
    while (std::getline(in, line)) {
        weight_row r;
        r.line = line;
        std::istringstream fields(line);
        std::getline(fields, r.projection, ',');
        std::getline(fields, r.source, ',');
        std::getline(fields, r.target, ',');
        rows.push_back(r);
    }
    return rows;
}

// Its weight: a float32 written with the digits that give it back.
double weight_of(const weight_row& r) { return static_cast<float>(std::stod(r.line.substr(r.line.rfind(',') + 1))); }

// A grow `g` at a frozen tick, between the weights `before` and `after` read then: every
// synapse there was keeps its weight, every new one touches a member `g` added and has the
// weight it has in `fresh` (an install of the grown network, before any spike). How many new
// synapses of each kind there are: into a new member, from a new member into an old one (per
// projection).
std::map<std::string, std::size_t> check_grown_weights(const grow_of& g, const std::string& before, const std::string& after,
                                                       const std::string& fresh) {
    const auto was = weight_rows(before);
    std::set<std::string> old_lines, fresh_lines;
    for (const auto& r : was) old_lines.insert(r.line);
    for (const auto& r : weight_rows(fresh)) fresh_lines.insert(r.line);
    std::map<std::string, std::size_t> added;
    std::size_t kept = 0;
    for (const auto& r : weight_rows(after)) {
        INFO(r.line);
        if (old_lines.count(r.line)) {
            ++kept;
            continue;
        }
        CHECK((g.added(r.source) || g.added(r.target)));
        CHECK(fresh_lines.count(r.line) == 1);
        ++added[r.projection + (g.added(r.target) ? " into new" : " from new")];
    }
    CHECK(kept == was.size());
    return added;
}

// The snapshot's neurons' synapse values by name.
std::map<std::string, std::vector<double>> synapse_values(const std::string& snapshot) {
    const auto doc = dnnc::protocol::load_snapshot(snapshot);
    std::map<std::string, std::vector<double>> values;
    for (const auto& n : doc.state->neurons) values[n.id] = n.synapses;
    return values;
}

// A grow `g` at a frozen tick, between the snapshots `before` and `after` taken then, and the
// weights `after_csv` (every target's plastic synapses in row order): each old neuron's
// synapse values are its old synapses' values in their order, with a new synapse's as an
// install builds them at its place (E_E stdp_synapse: the weight; I_E tsodyks2_synapse: the
// weight, then w, x and u as the model starts them: -8, 1, 0.5). How many old targets
// gained a synapse.
std::size_t check_grown_rows(const grow_of& g, const std::string& before, const std::string& after, const std::string& after_csv) {
    const auto was = synapse_values(before), is = synapse_values(after);
    std::map<std::string, std::vector<weight_row>> rows_into;
    for (const auto& r : weight_rows(after_csv)) rows_into[r.target].push_back(r);
    std::size_t gained = 0;
    for (const auto& [target, rows] : rows_into) {
        if (g.added(target)) continue;
        INFO(target);
        const auto& old = was.at(target);
        std::vector<double> expected;
        std::size_t at = 0;
        bool grew = false;
        for (const auto& r : rows) {
            const std::size_t width = r.projection == "I_E" ? 4 : 1;
            if (!g.added(r.source)) {
                REQUIRE(at + width <= old.size());
                expected.insert(expected.end(), old.begin() + static_cast<long>(at), old.begin() + static_cast<long>(at + width));
                at += width;
                continue;
            }
            grew = true;
            if (r.projection == "I_E")
                expected.insert(expected.end(), {-8.0, -8.0, 1.0, 0.5});
            else
                expected.push_back(weight_of(r));
        }
        CHECK(at == old.size());
        CHECK(is.at(target) == expected);
        gained += grew;
    }
    return gained;
}

}  // namespace

TEST_CASE("scheduled grows of the ends of plastic projections give the same spikes and learned weights on 1, 2 and 3 nodes") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    const auto out = [&](const std::string& name) { return (dir.path / name).string(); };
    const auto plain = dir.file("plain.xml", plastic_network());
    const auto grown = dir.file("grown.xml", plastic_network(scheduled_grows));
    must(dnnc + " run " + plain + " --nodes 1 --ticks 600 --spikes " + out("plain.csv"));
    for (const int k : {1, 2, 3}) {
        const auto n = std::to_string(k);
        must(dnnc + " run " + grown + " --nodes " + n + " --ticks 600 --spikes " + out("s" + n + ".csv") + " --weights " + out("w" + n + ".csv"));
    }
    const auto spikes = slurp(out("s1.csv")), weights = sorted_csv(slurp(out("w1.csv")));
    CHECK(slurp(out("s2.csv")) == spikes);
    CHECK(slurp(out("s3.csv")) == spikes);
    CHECK(sorted_csv(slurp(out("w2.csv"))) == weights);
    CHECK(sorted_csv(slurp(out("w3.csv"))) == weights);

    // Before the first grow nothing differs; the new members spike from their grow on.
    const auto before_growth = [](const spike& s) { return s.t_ms < 20.0; };
    CHECK(rows_of(rows_where(spikes, before_growth)) > 100);
    CHECK(rows_where(spikes, before_growth) == rows_where(slurp(out("plain.csv")), before_growth));
    const auto rows = spikes_in(spikes);
    CHECK(spikes_of(rows, "E", e_size) > 0);
    CHECK(spikes_of(rows, "I", i_size) > 0);
    CHECK(spikes_of(rows, "R", r_size) > 0);
    for (const auto& s : rows) {
        if (s.population == "E" && s.index >= e_size) CHECK(s.t_ms >= 20.0);
        if (s.population != "E" && is_new(s.population + "[" + std::to_string(s.index) + "]")) CHECK(s.t_ms >= 35.0);
    }
    // The plastic projections reach the new members both ways, and what they reach learns.
    std::map<std::string, std::size_t> touching;
    std::size_t learned = 0;
    std::set<std::string> r_targets_before;  // old I neurons with a synapse from an old R member
    for (const auto& r : weight_rows(weights))
        if (r.projection == "R_I" && !is_new(r.source) && !is_new(r.target)) r_targets_before.insert(r.target);
    std::set<std::string> first_plastic;  // old I neurons whose plastic synapses all come from new R members
    for (const auto& r : weight_rows(weights)) {
        if (r.projection == "R_I" && is_new(r.source) && !is_new(r.target) && !r_targets_before.count(r.target)) first_plastic.insert(r.target);
        if (!is_new(r.source) && !is_new(r.target)) continue;
        ++touching[r.projection + (is_new(r.target) ? " into new" : " from new")];
        if (r.projection == "E_E" && (weight_of(r) < 1 || weight_of(r) >= 2)) ++learned;  // drawn in [1, 2)
    }
    CHECK(touching["E_E into new"] > 0);
    CHECK(touching["E_E from new"] > 0);
    CHECK(touching["I_E into new"] > 0);
    CHECK(touching["I_E from new"] > 0);
    CHECK(touching["R_I from new"] > 0);
    CHECK(!first_plastic.empty());
    CHECK(learned > 0);
}

TEST_CASE("dnnc grow of the ends of plastic projections keeps every synapse's state, and the grown network restores bit for bit") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    const auto out = [&](const std::string& name) { return (dir.path / name).string(); };
    std::vector<int> two, three;
    const auto first = dir.file("two.xml", on_cluster(plastic_network(), 2, two));
    const auto second = dir.file("three.xml", on_cluster(plastic_network(), 3, three));
    // The grown network on the same cluster as an install builds it: every synapse as it starts.
    const auto installed = dir.file("installed.xml", with_in_network(slurp(first), R"(    <grow population="E" add="20" applied="true"/>
    <grow population="I" add="5" applied="true"/>
)"));
    const auto taken = 50.0;  // ms: the snapshot's tick is 500
    std::string original_spikes, original_weights;
    {
        local_cluster_guard c(first);
        INFO(c.up.err);
        REQUIRE(c.up.exit_code == 0);
        must(dnnc + " submit " + installed + to_of(two));
        must(dnnc + " freeze" + lead_of(two));
        must(dnnc + " weights -o " + out("fresh.csv") + lead_of(two));
        must(dnnc + " submit --replace " + first + to_of(two));

        // Each grow between two reads of the frozen network's weights and snapshots.
        const auto grow_between = [&](const grow_of& g, long add, std::int64_t tick) {
            const auto name = g.population;
            must(dnnc + " weights -o " + out(name + "-before.csv") + lead_of(two));
            must(dnnc + " snapshot -o " + out(name + "-before.dnncs") + lead_of(two));
            const auto grown = json_of(dnnc + " grow " + g.population + " " + std::to_string(add) + " --json" + lead_of(two));
            CHECK(grown["tick"] == tick);
            must(dnnc + " weights -o " + out(name + "-after.csv") + lead_of(two));
            must(dnnc + " snapshot -o " + out(name + "-after.dnncs") + lead_of(two));
            INFO("grow of " << g.population);
            CHECK(check_grown_rows(g, out(name + "-before.dnncs"), out(name + "-after.dnncs"), slurp(out(name + "-after.csv"))) > 0);
            return check_grown_weights(g, slurp(out(name + "-before.csv")), slurp(out(name + "-after.csv")), slurp(out("fresh.csv")));
        };
        must(dnnc + " step 200" + lead_of(two));
        const auto e = grow_between(e_grow, 20, 200);
        CHECK(e.at("E_E into new") > 0);
        CHECK(e.at("E_E from new") > 0);
        CHECK(e.at("I_E into new") > 0);
        CHECK(e.count("I_E from new") == 0);
        must(dnnc + " step 150" + lead_of(two));
        const auto i = grow_between(i_grow, 5, 350);
        CHECK(i.at("I_E from new") > 0);
        CHECK(i.count("E_E into new") + i.count("E_E from new") == 0);
        must(dnnc + " step 150" + lead_of(two));
        CHECK(tick_and_neurons(two) == std::pair<std::int64_t, std::size_t>{500, 285});
        must(dnnc + " snapshot -o " + out("k.dnncs") + lead_of(two));
        must(dnnc + " step 300" + lead_of(two));
        must(dnnc + " output --spikes -o " + out("original.csv") + lead_of(two));
        must(dnnc + " weights -o " + out("original-weights.csv") + lead_of(two));
        original_spikes = rows_where(slurp(out("original.csv")), [&](const spike& s) { return s.t_ms >= taken - 0.05; });
        original_weights = sorted_csv(slurp(out("original-weights.csv")));
    }
    REQUIRE(rows_of(original_spikes) > 500);
    CHECK(spikes_of(spikes_in(original_spikes), "E", e_size) > 0);
    CHECK(original_weights != sorted_csv(slurp(out("I-after.csv"))));  // it learned on
    {
        local_cluster_guard c(second);
        INFO(c.up.err);
        REQUIRE(c.up.exit_code == 0);
        must(dnnc + " restore " + out("k.dnncs") + " --cluster " + second + to_of(three));
        CHECK(tick_and_neurons(three) == std::pair<std::int64_t, std::size_t>{500, 285});
        must(dnnc + " step 300" + lead_of(three));
        must(dnnc + " output --spikes -o " + out("restored.csv") + lead_of(three));
        must(dnnc + " weights -o " + out("restored-weights.csv") + lead_of(three));
    }
    CHECK(rows_where(slurp(out("restored.csv")), [&](const spike& s) { return s.t_ms >= taken - 0.05; }) == original_spikes);
    CHECK(sorted_csv(slurp(out("restored-weights.csv"))) == original_weights);
}
