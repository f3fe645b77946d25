#include "dnnc/partitioner/metis_io.hpp"

#include "dnnc/core/error.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>

using namespace dnnc::partitioner;

namespace {

// The line of the (single) problem a config_error reports.
int error_line(const std::string& text) {
    try {
        parse_metis(text, "t.graph");
    } catch (const dnnc::config_error& e) {
        REQUIRE(e.problems().size() == 1);
        CHECK(e.problems()[0].where.file == "t.graph");
        return e.problems()[0].where.line;
    }
    FAIL("no config_error for:\n" << text);
    return -1;
}

bool same(const graph& a, const graph& b) {
    return a.offsets() == b.offsets() && a.adjacency() == b.adjacency() &&
           a.edge_weights() == b.edge_weights() && a.vertex_weights() == b.vertex_weights();
}

}  // namespace

TEST_CASE("metis: plain graph with comments and an isolated vertex") {
    const graph g = parse_metis("% a comment\n4 3\n2 3\n1 3\n1 2\n\n", "t.graph");
    REQUIRE(g.vertex_count() == 4);
    CHECK(g.edge_count() == 3);
    CHECK(g.degree(3) == 0);
    CHECK(g.total_vertex_weight() == 4);
}

TEST_CASE("metis: fmt 1, 10, 11 and 100") {
    const graph e = parse_metis("3 2 1\n2 5\n1 5 3 7\n2 7\n", "t.graph");
    CHECK(e.edge_weights_begin(1)[0] == 5);
    CHECK(e.edge_weights_begin(1)[1] == 7);
    const graph v = parse_metis("3 2 10\n4 2\n1 1 3\n9 2\n", "t.graph");
    CHECK(v.vertex_weight(0) == 4);
    CHECK(v.total_vertex_weight() == 14);
    const graph both = parse_metis("3 2 011 1\n4 2 5\n1 1 5 3 7\n9 2 7\n", "t.graph");
    CHECK(both.vertex_weight(2) == 9);
    CHECK(both.edge_weights_begin(2)[0] == 7);
    const graph sized = parse_metis("2 1 110\n3 4 2\n3 6 1\n", "t.graph");
    CHECK(sized.vertex_weight(1) == 6);
}

TEST_CASE("metis: write then read gives the same graph") {
    const graph g = parse_metis("4 4 011\n1 2 3 3 1\n2 1 3 3 2\n5 1 1 2 2 4 9\n1 3 9\n", "t.graph");
    CHECK(same(parse_metis(to_metis(g), "round"), g));
    const graph plain = parse_metis("3 2\n2\n1 3\n2\n", "t.graph");
    CHECK(to_metis(plain) == "3 2\n2\n1 3\n2\n");
}

TEST_CASE("metis: malformed files name the line") {
    CHECK(error_line("") == 0);
    CHECK(error_line("3\n") == 1);
    CHECK(error_line("3 2 2\n2\n1 3\n2\n") == 1);       // fmt not binary
    CHECK(error_line("3 2 10 2\n1 2\n1 1 3\n1 2\n") == 1);  // ncon > 1
    CHECK(error_line("3 3\n2\n1 3\n2\n") == 1);         // wrong edge count
    CHECK(error_line("3 2\n2\n1 3\n") == 3);            // too few vertex lines
    CHECK(error_line("4000000000 1\n2\n1\n") == 1);   // more vertices than lines
    CHECK(error_line("3 2\n2\n1 3\n2\n1\n") == 5);      // too many vertex lines
    CHECK(error_line("3 2\n2\n1 4\n2\n") == 3);         // id out of range
    CHECK(error_line("3 2\n2\n1 0\n2\n") == 3);         // id 0
    CHECK(error_line("3 2\n% c\n2\n2 3\n2\n") == 4);    // self-loop
    CHECK(error_line("3 2\n2 3\n1\n2\n") == 2);             // asymmetric: 1 lists 3
    CHECK(error_line("3 2\n2\n1 3\n\n") == 3);          // 2 lists 3, 3 lists nobody
    CHECK(error_line("3 2 1\n2 1\n1 1 3 2\n2 5\n") == 3);  // different weights
    CHECK(error_line("3 2 1\n2 0\n1 0 3 1\n2 1\n") == 2);  // zero edge weight
    CHECK(error_line("3 2 1\n2 1\n1 1 3\n2 1\n") == 3);    // missing edge weight
    CHECK(error_line("2 1\n2 x\n1\n") == 2);            // not an integer
    CHECK(error_line("2 1\n2 2\n1\n") == 2);            // neighbour listed twice
}

// Found with fuzz_metis (tests/fuzz/corpus/metis/vertex_weight_overflow.graph): the total
// vertex weight overflowed int64_t in graph_builder::build.
TEST_CASE("metis: weights that sum to more than 2^63 - 1 are refused where they overflow") {
    CHECK(error_line("2 0 10\n9223372036854775807\n9223372036854775807\n") == 3);
    CHECK(error_line("3 0 10\n0\n9223372036854775807\n1\n") == 4);
    CHECK(parse_metis("2 0 10\n9223372036854775806\n1\n", "t.graph").total_vertex_weight() ==
          9223372036854775807);
    // Edge weights, each edge counted from both ends.
    CHECK(error_line("2 1 1\n2 4611686018427387904\n1 4611686018427387904\n") == 3);
    CHECK(parse_metis("2 1 1\n2 4611686018427387903\n1 4611686018427387903\n", "t.graph").edge_count() == 1);
}

TEST_CASE("metis: read_metis reports missing files as config_error, located at the file") {
    CHECK_THROWS_AS(read_metis("/nonexistent/x.graph"), dnnc::config_error);
}

TEST_CASE("metis: 4elt.graph") {
    const std::string path = DNNC_SOURCE_DIR "/../shared/data/4elt.graph";
    if (!std::ifstream(path)) {
        WARN("skipped: " << path << " is absent");
        return;
    }
    const graph g = read_metis(path);
    CHECK(g.vertex_count() == 15606);
    CHECK(g.edge_count() == 45878);
    const std::string copy = "test_metis_io_4elt.graph";
    write_metis(g, copy);
    CHECK(same(read_metis(copy), g));
    std::remove(copy.c_str());
}
