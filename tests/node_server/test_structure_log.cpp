// The lead's log of structural plasticity: rows named by population and time, read page by
// page and newest first for the live page; a node's report of malformed records is refused
// (protocol_error) and leaves the log as it was.
#include "lead/structure_log.hpp"

#include "dnnc/core/error.hpp"

#include <catch2/catch.hpp>

using namespace dnnc;
using nlohmann::json;

namespace {
node_server::structure_log two_groups() {
    model::resolved_structure s;
    s.dt = 0.1;
    s.groups.resize(2);
    s.groups[0].population = "E";
    s.groups[1].population = "I";
    return node_server::structure_log(s);
}
}  // namespace

TEST_CASE("the structure log names rows by population and time and reads them page by page") {
    auto log = two_groups();
    CHECK(log.empty());
    log.add(json::parse("[[0, 0, 0.0, 0, 0, 0], [0, 1, 0.0, 0, 0, 0], [1000, 0, 0.25, 7, 9, 2], [1000, 1, 0.5, 3, 3, 0]]"));
    const auto all = log.read(0);
    REQUIRE(all["rows"].size() == 4);
    CHECK(all["rows"][2] == json{{"t_ms", 100.0}, {"population", "E"}, {"mean_ca", 0.25}, {"connections_in", 7}, {"created", 9}, {"deleted", 2}});
    CHECK(all["next"] == 4);
    CHECK(log.read(4)["rows"].empty());
    CHECK(log.read(3)["rows"][0]["population"] == "I");
    const auto newest = log.recent(1);
    REQUIRE(newest.size() == 1);
    CHECK(newest[0]["mean_ca"] == 0.5);
    CHECK(log.recent(100).size() == 4);
}

TEST_CASE("a report of malformed structure records is refused") {
    auto log = two_groups();
    for (const char* bad : {"[[0, 2, 0.0, 0, 0, 0]]", "[[0, 0, 0.0, 0, 0]]", "[5]", "[[\"x\", 0, 0.0, 0, 0, 0]]",
                            "[[0, -1, 0.0, 0, 0, 0]]", "[[0, 0, \"ca\", 0, 0, 0]]", "[[0, 0, 0.0, -3, 0, 0]]"}) {
        INFO(bad);
        CHECK_THROWS_AS(log.add(json::parse(bad)), protocol_error);
    }
    // A report whose second record is bad keeps neither.
    CHECK_THROWS_AS(log.add(json::parse("[[0, 0, 0.0, 0, 0, 0], [0, 5, 0.0, 0, 0, 0]]")), protocol_error);
    CHECK(log.empty());
}

TEST_CASE("a run that goes on from a tick takes over the rows of the updates before it, numbered as they were") {
    auto old_run = two_groups();
    old_run.add(json::parse("[[0, 0, 0.0, 0, 0, 0], [0, 1, 0.0, 0, 0, 0], [1000, 0, 0.25, 7, 9, 2], [1000, 1, 0.5, 3, 3, 0]]"));
    // A grow or a recovery at tick 1000: the update at 1000 is the new run's.
    const auto kept = old_run.before(1000);
    CHECK(kept.read(0)["rows"].size() == 2);
    auto new_run = two_groups();
    new_run.add(json::parse("[[1000, 0, 0.25, 7, 9, 2], [1000, 1, 0.5, 3, 3, 0]]"));
    new_run.adopt(kept);
    const auto all = new_run.read(0);
    REQUIRE(all["rows"].size() == 4);
    CHECK(all["rows"] == old_run.read(0)["rows"]);
    CHECK(new_run.read(2)["rows"][0]["t_ms"] == 100.0);  // a reader's position stays valid
}
