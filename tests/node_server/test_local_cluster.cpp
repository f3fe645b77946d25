#include "dnnc/node_server/local_cluster.hpp"

#include <catch2/catch.hpp>

using namespace dnnc;

TEST_CASE("loopback hosts are recognised") {
    CHECK(node_server::is_loopback_host("127.0.0.1"));
    CHECK(node_server::is_loopback_host("127.3.2.1"));
    CHECK(node_server::is_loopback_host("::1"));
    CHECK(node_server::is_loopback_host("localhost"));
    CHECK_FALSE(node_server::is_loopback_host("10.0.0.1"));
    CHECK_FALSE(node_server::is_loopback_host("example.org"));
    CHECK_FALSE(node_server::is_loopback_host(""));
}

TEST_CASE("local nodes are those on loopback") {
    protocol::cluster clu;
    clu.lead = "a";
    clu.nodes = {{"a", "127.0.0.1", 7000, 1, {}}, {"b", "192.0.2.7", 7001, 1, {}},
                 {"c", "localhost", 7002, 2, {}}};
    const auto local = node_server::local_nodes(clu);
    REQUIRE(local.size() == 2);
    CHECK(local[0]->id == "a");
    CHECK(local[1]->id == "c");
}
