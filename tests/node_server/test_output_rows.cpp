// The lead's output rows: the newest within a budget, dropped rows counted, rows before a
// checkpoint kept across a recovery, rows laid out anew when a grow changes the columns.
#include "lead/output_rows.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/protocol/csv.hpp"

#include <catch2/catch.hpp>

using namespace dnnc;
using namespace dnnc::node_server;

namespace {

std::vector<float> row_of(std::int64_t tick) { return {static_cast<float>(tick), static_cast<float>(-tick)}; }

}  // namespace

TEST_CASE("output rows keep the newest rows within their budget") {
    output_rows rows(2, 5, 4 * sizeof(float) * 2);  // 4 rows of 2 values
    CHECK(rows.first() == 5);
    CHECK(rows.end() == 5);
    for (std::int64_t t = 5; t < 7; ++t) rows.push(row_of(t));
    CHECK(rows.first() == 5);
    CHECK(rows.dropped() == 0);
    for (std::int64_t t = 7; t < 15; ++t) rows.push(row_of(t));
    CHECK(rows.first() == 11);
    CHECK(rows.end() == 15);
    CHECK(rows.dropped() == 6);
    for (std::int64_t t = 11; t < 15; ++t) CHECK(rows.row(t) == row_of(t));
    CHECK_THROWS_AS(rows.row(10), error);
    CHECK_THROWS_AS(rows.row(15), error);
    CHECK_THROWS_AS(rows.push({1.0f}), error);
}

TEST_CASE("output rows hold at least one row, and count rows of no values") {
    output_rows tiny(1000, 0, 1);
    tiny.push(std::vector<float>(1000, 1.0f));
    tiny.push(std::vector<float>(1000, 2.0f));
    CHECK(tiny.first() == 1);
    CHECK(tiny.row(1).front() == 2.0f);
    output_rows none(0, 0, 8);
    for (int t = 0; t < 10; ++t) none.push({});
    CHECK(none.end() == 10);
    CHECK(none.first() == 8);
    CHECK(none.row(9).empty());
}

TEST_CASE("rows before a checkpoint carry over to the run that continues from it") {
    output_rows old_run(2, 0, 100 * sizeof(float) * 2);
    for (std::int64_t t = 0; t < 30; ++t) old_run.push(row_of(t));
    const auto earlier = old_run.before(20);
    CHECK(earlier.first() == 0);
    CHECK(earlier.end() == 20);
    output_rows fresh(2, 20, 100 * sizeof(float) * 2);
    fresh.adopt(earlier);
    fresh.push(row_of(20));
    CHECK(fresh.first() == 0);
    CHECK(fresh.end() == 21);
    CHECK(fresh.row(3) == row_of(3));
    CHECK(fresh.row(20) == row_of(20));
    output_rows elsewhere(2, 25, 64);
    CHECK_THROWS_AS(elsewhere.adopt(earlier), error);
}

TEST_CASE("skipping ahead drops the held rows and counts the gap") {
    output_rows rows(2, 0, 100 * sizeof(float) * 2);
    for (std::int64_t t = 0; t < 5; ++t) rows.push(row_of(t));
    rows.skip_to(8);
    CHECK(rows.first() == 8);
    CHECK(rows.end() == 8);
    CHECK(rows.start() == 0);
    CHECK(rows.dropped() == 8);
    rows.push(row_of(8));
    CHECK(rows.row(8) == row_of(8));
    CHECK_THROWS_AS(rows.skip_to(3), error);
}

TEST_CASE("rows laid out anew keep their ticks, take the values they map, and read 0 in new columns") {
    output_rows rows(2, 3, 4 * sizeof(float) * 2);  // 4 rows of 2 values
    for (std::int64_t t = 3; t < 10; ++t) rows.push(row_of(t));  // ticks 6..9 held, 3 dropped
    // Widened: (old 1, new, old 0); then narrowed to old 0 alone. The budget in bytes stays:
    // rows of 3 values hold 2 of them, the older dropped and counted.
    const auto wide = rows.remapped({1, dnnc::protocol::no_column, 0});
    CHECK(wide.width() == 3);
    CHECK(wide.capacity() == 2);
    CHECK(wide.start() == 3);
    CHECK(wide.first() == 8);
    CHECK(wide.end() == 10);
    for (std::int64_t t = 8; t < 10; ++t) CHECK(wide.row(t) == std::vector<float>{-static_cast<float>(t), 0.0f, static_cast<float>(t)});
    const auto narrow = wide.remapped({2});
    CHECK(narrow.first() == 8);
    CHECK(narrow.row(9) == std::vector<float>{9.0f});
}

TEST_CASE("rows for a client start at the oldest held, end at the tick asked, and stay within a million values") {
    output_rows rows(2, 0, 4 * sizeof(float) * 2);
    for (std::int64_t t = 0; t < 10; ++t) rows.push(row_of(t));
    const auto some = rows_json(rows, 0, 7);  // ticks 6..9 held
    REQUIRE(some.size() == 2);
    CHECK(some[0] == nlohmann::json::array({6, 6.0, -6.0}));
    CHECK(some[1] == nlohmann::json::array({7, 7.0, -7.0}));
    CHECK(rows_json(rows, 9, 9).size() == 1);
    CHECK(rows_json(rows, 10, 9).empty());
    // Rows of 500,000 values: two to a reply.
    output_rows wide(500000, 0, std::size_t{1} << 30);
    for (int t = 0; t < 3; ++t) wide.push(std::vector<float>(500000, 1.0f));
    CHECK(rows_json(wide, 0, 2).size() == 1);
}
