// The lead's changes that replace its run, against a lead of this test's own (network_host)
// with real probes and calls: a change refused before anything moves (no network, a drain of
// the lead or of a node others need, a join of a node the cluster has or that does not
// answer), and a restart that leaves out the dead nodes and those only they linked.
#include "lead/network_changes.hpp"
#include "lead/lead_state.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/node_server/log.hpp"
#include "dnnc/protocol/xml.hpp"

#include "live_node.hpp"

#include <catch2/catch.hpp>

using namespace dnnc;
using namespace dnnc::node_server;
using json = nlohmann::json;

namespace {

// A chain n0 - n1 - n2 led by n0 (at port `lead_port`); n1 and n2 at ports nothing serves.
model::document chain_document(std::uint16_t lead_port) {
    const auto node = [](const std::string& id, std::uint16_t port) {
        return R"(<node id=")" + id + R"(" host="127.0.0.1" port=")" + std::to_string(port) + R"(" capacity="1"/>)";
    };
    return protocol::parse_document(R"(<?xml version="1.0"?>
<dnnc xmlns="urn:dnnc:1">
  <network name="chain">
    <population id="p" model="lif" size="6"/>
    <projection from="p" to="p" kind="all" weight="1" delay-ms="0.5"/>
  </network>
  <cluster lead="n0">)" + node("n0", lead_port) + node("n1", 1) + node("n2", 2) + R"(
    <link from="n0" to="n1"/>
    <link from="n1" to="n2"/>
  </cluster>
  <run clock="n2"/>
</dnnc>)", "chain.xml");
}

// The lead as its changes see it: a network to read (or none), and installs recorded.
struct recording_lead final : network_host {
    std::unique_ptr<lead_state> state;
    std::vector<model::document> installed;

    std::shared_ptr<lead_run> current_run() override { return nullptr; }
    std::shared_ptr<lead_run> run_now() override { return nullptr; }
    bool has_network() override { return state != nullptr; }
    void read_network(const std::function<void(const lead_state&)>& read) override {
        if (!state) throw error("no network");
        read(*state);
    }
    std::set<std::string> silent_nodes() override { return {}; }
    protocol::file_access file_access() const override { return {}; }
    void capture_snapshot(std::int64_t, const std::string&) override { throw error("not captured in this test"); }
    plan::network_plan plan_remembered(model::document doc, const plan::current_placement* current) override {
        return plan::plan_network(std::move(doc), nullptr, current);
    }
    std::optional<std::vector<plan::link_time>> prepare_engines(plan::network_plan) override { return std::nullopt; }
    json install(model::document doc, bool, const std::string&, const std::string&, const std::vector<plan::link_time>*,
                 const plan::current_placement*, const carried_over*) override {
        installed.push_back(std::move(doc));
        return {{"nodes", installed.back().clu->nodes.size()}};
    }
};

// The changes of a lead of this test's own, on a real server, calls and probes.
struct changes_of_a_test_lead {
    changes_of_a_test_lead() { set_log_level(log_level::error); }
    test::lead_parts parts;
    cluster_probes probes{parts.options, *parts.srv, parts.calls, *parts.own};
    recording_lead lead;
    network_changes changes{parts.options, parts.calls, probes, lead};
};

protocol::control_request command(protocol::control_request::kind what, std::string node = {}) {
    protocol::control_request c(what);
    c.node = std::move(node);
    return c;
}

}  // namespace

TEST_CASE("a change asks for a network, and a drain or join the cluster cannot take is refused before anything moves") {
    changes_of_a_test_lead test;
    auto& [parts, probes, lead, changes] = test;
    using kind = protocol::control_request::kind;
    CHECK_THROWS_WITH(changes.rebalance(command(kind::rebalance)), Catch::Contains("submit one first"));
    CHECK_THROWS_WITH(changes.drain(command(kind::drain, "n1")), Catch::Contains("submit one first"));

    lead.state = std::make_unique<lead_state>(plan::plan_network(chain_document(parts.srv->port())), nullptr);
    CHECK_THROWS_WITH(changes.drain(command(kind::drain, "n0")), Catch::Contains("it is the lead"));
    CHECK_THROWS_WITH(changes.drain(command(kind::drain, "n9")), Catch::Contains("the cluster has no node 'n9'"));
    CHECK_THROWS_WITH(changes.drain(command(kind::drain, "n1")), Catch::Contains("node 'n2' would be cut off from the lead"));
    auto join = command(kind::join, "n1");
    join.address = "127.0.0.1:1";
    CHECK_THROWS_WITH(changes.join(join), Catch::Contains("has a node 'n1' already"));
    join.node = "n3";
    join.links = {"n7"};
    CHECK_THROWS_WITH(changes.join(join), Catch::Contains("a link to 'n7'"));
    join.links = {"n2"};
    CHECK_THROWS_WITH(changes.join(join), Catch::Contains("does not answer as a node of this cluster"));
    CHECK(lead.installed.empty());
    CHECK(changes.moves().empty());
}

TEST_CASE("a restart leaves out the dead nodes and those only they linked, this node leading, the clock cleared") {
    changes_of_a_test_lead test;
    auto& [parts, probes, lead, changes] = test;
    // n1 answers nothing, and n2 is linked to the lead only through it.
    const carried_over nothing{output_rows(0, 0, 0), {}, {}, {}, {}, {}};
    const auto summary = changes.restart_on_survivors(chain_document(parts.srv->port()), {}, nothing);
    CHECK(summary["removed"] == json::array({"n1", "n2"}));
    REQUIRE(lead.installed.size() == 1);
    const auto& doc = lead.installed.front();
    REQUIRE(doc.clu->nodes.size() == 1);
    CHECK(doc.clu->nodes[0].id == "n0");
    CHECK(doc.clu->lead == "n0");
    CHECK(doc.clu->links.empty());
    CHECK(doc.run->clock.empty());
}
