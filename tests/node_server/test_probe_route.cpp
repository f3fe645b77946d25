// Probe payloads: the route reads back as written, the load's filler rides only on the frame
// into the last hop, and a probe that is malformed or asks for too much load is refused.
#include "probe_route.hpp"

#include <catch2/catch.hpp>

using namespace dnnc;
using namespace dnnc::node_server;

namespace {
probe three_hops(std::size_t hop, std::size_t load) {
    return {{{"a", {"10.0.0.1", 7000}, 0}, {"b", {"10.0.0.2", 7001}, 1.5}, {"c", {"10.0.0.3", 7002}, 0}}, hop, load};
}
}  // namespace

TEST_CASE("a probe's payload reads back, with the load's filler only on the frame into the last hop") {
    const auto to_b = probe_payload(three_hops(1, 1000));
    const auto to_c = probe_payload(three_hops(2, 1000));
    CHECK(to_b.find('\n') == std::string::npos);
    REQUIRE(to_c.find('\n') != std::string::npos);
    CHECK(to_c.size() - to_c.find('\n') - 1 == 1000);
    CHECK(probe_payload(three_hops(2, 0)).find('\n') == std::string::npos);
    for (const auto& payload : {to_b, to_c}) {
        const auto p = read_probe(payload);
        CHECK(p.route.size() == 3);
        CHECK(p.route[1].id == "b");
        CHECK(p.route[1].at.port == 7001);
        CHECK(p.route[1].link_delay_ms == 1.5);
        CHECK(p.load == 1000);
    }
    CHECK(read_probe(to_b).hop == 1);
    CHECK(read_probe(to_c).hop == 2);
}

TEST_CASE("a probe that is malformed or asks for more than the most load is refused") {
    CHECK(read_probe(probe_payload(three_hops(2, max_probe_load))).load == max_probe_load);
    auto heavy = probe_payload(three_hops(1, 0));
    heavy.replace(heavy.find("\"load\":0"), 8, "\"load\":" + std::to_string(max_probe_load + 1));
    CHECK_THROWS_AS(read_probe(heavy), protocol_error);
    auto negative = probe_payload(three_hops(1, 0));
    negative.replace(negative.find("\"load\":0"), 8, "\"load\":-1");
    CHECK_THROWS_AS(read_probe(negative), protocol_error);
    CHECK_THROWS_AS(read_probe(probe_payload(three_hops(3, 0))), protocol_error);
    CHECK_THROWS_AS(read_probe(""), protocol_error);
    CHECK_THROWS_AS(read_probe("\n{}"), protocol_error);
    CHECK_THROWS_AS(read_probe(std::string(100, '\0')), protocol_error);
    // Whatever follows the first newline is filler, never read.
    CHECK(read_probe(probe_payload(three_hops(1, 0)) + "\n{not json").hop == 1);
}
