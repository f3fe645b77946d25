// Input CSV parsing with located errors; output rows that read back exactly, and laid out anew.
#include "dnnc/protocol/csv.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

using namespace dnnc;
using namespace dnnc::protocol;

TEST_CASE("input CSV rows are read with their ticks, targets and values") {
    const auto rows = parse_input_csv("tick,target,value\r\n0,a,1\n\n3, x , -0.25\n", "in.csv");
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].tick == 0);
    CHECK(rows[0].target == "a");
    CHECK(rows[1].tick == 3);
    CHECK(rows[1].target == "x");
    CHECK(rows[1].value == -0.25f);
    CHECK(rows[1].where.line == 4);
}

TEST_CASE("malformed input CSV gives every problem with file, line and column") {
    try {
        parse_input_csv("tick,target,value\n-1,a,1\n2,,x\n5,a\n", "in.csv");
        FAIL("accepted");
    } catch (const config_error& e) {
        const auto& p = e.problems();
        REQUIRE(p.size() == 4);
        CHECK(p[0].where.line == 2);
        CHECK(p[0].where.column == 1);
        CHECK_THAT(p[0].message, Catch::Contains("'-1'"));
        CHECK(p[1].where.line == 3);
        CHECK(p[1].where.column == 3);
        CHECK(p[2].where.column == 4);
        CHECK_THAT(p[2].message, Catch::Contains("'x'"));
        CHECK_THAT(p[3].message, Catch::Contains("3 fields"));
        CHECK_THAT(std::string(e.what()), Catch::StartsWith("in.csv:2:1: "));
    }
    CHECK_THROWS_WITH(parse_input_csv("", "e.csv"), Catch::Contains("e.csv:1:1: the file is empty"));
    CHECK_THROWS_WITH(parse_input_csv("a,b\n", "h.csv"), Catch::Contains("tick,target,value"));
    CHECK_THROWS_WITH(parse_input_csv("tick,target,value\n1,a,nan\n", "n.csv"), Catch::Contains("finite"));
}

TEST_CASE("output rows print float32 values so that they read back exactly") {
    CHECK(output_csv_header({"out", "exc[0]"}) == "tick,out,exc[0]\n");
    const std::vector<float> values{0.1f, 1.0f / 3.0f, -1e-30f, 16777217.0f};
    const std::string row = output_csv_row(7, values);
    CHECK(row.rfind("7,", 0) == 0);
    std::size_t at = row.find(',') + 1;
    for (float v : values) {
        const auto next = row.find_first_of(",\n", at);
        CHECK(std::strtof(row.substr(at, next - at).c_str(), nullptr) == v);
        at = next + 1;
    }
}

TEST_CASE("input CSV may name a lane of a batched run") {
    const auto rows = parse_input_csv("tick,target,value,lane\n0,a,1,0\n2,b,0.5,3\n", "in.csv");
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].lane == 0);
    CHECK(rows[1].lane == 3);
    CHECK(parse_input_csv("tick,target,value\n0,a,1\n", "in.csv")[0].lane == -1);
    try {
        parse_input_csv("tick,target,value,lane\n0,a,1,-1\n1,a,1\n", "in.csv");
        FAIL("accepted");
    } catch (const config_error& e) {
        REQUIRE(e.problems().size() == 2);
        CHECK(e.problems()[0].where.column == 7);
        CHECK_THAT(e.problems()[0].message, Catch::Contains("lane '-1'"));
        CHECK_THAT(e.problems()[1].message, Catch::Contains("4 fields"));
    }
}

TEST_CASE("a batched run's output has one row per tick and lane") {
    CHECK(output_csv_header({"y0", "y1"}, 3) == "tick,lane,y0,y1\n");
    CHECK(output_csv_row(4, {1, 2, 3, 4, 5, 6}, 3) == "4,0,1,2\n4,1,3,4\n4,2,5,6\n");
    CHECK(output_csv_row(4, {1, 2}) == "4,1,2\n");
}

TEST_CASE("spike rows give each spike's tick start in ms, which reads back to the tick") {
    CHECK(protocol::spike_csv_header() == "t_ms,population,index\n");
    CHECK(protocol::spike_csv_row(3, 0.1, "P", 7) == "0.3,P,7\n");
    CHECK(protocol::spike_csv_row(0, 0.1, "solo", 0) == "0,solo,0\n");
    for (const double dt : {0.1, 0.025, 1.0 / 3.0})
        for (std::int64_t tick : {std::int64_t{1}, std::int64_t{999}, std::int64_t{123457}, std::int64_t{10000000}}) {
            const auto row = protocol::spike_csv_row(tick, dt, "P", 0);
            const double t_ms = std::stod(row.substr(0, row.find(',')));
            CHECK(std::llround(t_ms / dt) == tick);
        }
}

TEST_CASE("spike-time CSV rows are read as ticks of dt, rounded as delays are, in file order") {
    const auto spikes = parse_spike_times_csv("t_ms,index\n1.5,2\n0.25,0\n\n0.24,1\n0,2\n1.5,2\n", "s.csv", 3, 0.1);
    REQUIRE(spikes.size() == 5);
    CHECK(spikes[0].tick == 15);
    CHECK(spikes[0].index == 2);
    CHECK(spikes[1].tick == 3);  // 2.5 ticks round half up
    CHECK(spikes[2].tick == 2);
    CHECK(spikes[3].tick == 0);
    auto sorted = spikes;
    sort_spikes(sorted);
    CHECK(sorted.front().tick == 0);
    CHECK(sorted.back().tick == 15);
    CHECK(sorted[3] == sorted[4]);  // listed twice: kept twice
    // A recorded spike's time reads back as its tick.
    for (const double dt : {0.1, 0.025, 1.0 / 3.0}) {
        const auto row = spike_csv_row(123457, dt, "P", 1);
        const auto back = parse_spike_times_csv("t_ms,index\n" + row.substr(0, row.find(',')) + ",1\n", "r.csv", 2, dt);
        CHECK(back.at(0).tick == 123457);
    }
}

TEST_CASE("malformed spike-time CSV gives every problem with file, line and column") {
    try {
        parse_spike_times_csv("t_ms,index\n-1,0\n2,x\n3,7\ninf,0\n1e300,0\n4\n", "s.csv", 3, 0.1);
        FAIL("accepted");
    } catch (const config_error& e) {
        const auto& p = e.problems();
        REQUIRE(p.size() == 6);
        CHECK(p[0].where.line == 2);
        CHECK_THAT(p[0].message, Catch::Contains(">= 0"));
        CHECK(p[1].where.line == 3);
        CHECK(p[1].where.column == 3);
        CHECK_THAT(p[1].message, Catch::Contains("'x'"));
        CHECK(p[2].where.column == 3);
        CHECK_THAT(p[2].message, Catch::Contains("index 7 is out of range; the spike source has 3 members"));
        CHECK_THAT(p[3].message, Catch::Contains("finite"));
        CHECK_THAT(p[4].message, Catch::Contains("beyond the last tick"));
        CHECK_THAT(p[5].message, Catch::Contains("2 fields"));
        CHECK_THAT(std::string(e.what()), Catch::StartsWith("s.csv:2:1: "));
    }
    CHECK_THROWS_WITH(parse_spike_times_csv("", "e.csv", 1, 0.1), Catch::Contains("e.csv:1:1: the file is empty"));
    CHECK_THROWS_WITH(parse_spike_times_csv("time,neuron\n", "h.csv", 1, 0.1), Catch::Contains("`t_ms,index`"));
}

// `dnnc run --input /dev/zero` once grew to gigabytes and ended in std::bad_alloc.
TEST_CASE("an input CSV is read no further than its bound, from a device or a file of any size") {
    CHECK_THROWS_WITH(read_input_csv("/dev/zero"), Catch::Contains("/dev/zero: the file is longer than 64 MiB") &&
                                                       Catch::Contains("byte 67108865 is past the limit"));
    // A sparse file: refused from its size, before a byte of it is read.
    const auto path = (std::filesystem::temp_directory_path() / ("dnnc-big-" + std::to_string(std::random_device{}()) + ".csv")).string();
    std::ofstream(path) << "tick,target,value\n";
    std::filesystem::resize_file(path, std::uint64_t{2} << 30);
    CHECK_THROWS_WITH(read_input_csv(path), Catch::Contains(path + ": the file is longer than 64 MiB"));
    CHECK_THROWS_WITH(read_spike_times_csv(path, 1, 0.1), Catch::Contains(path + ": the file is longer than 1024 MiB"));
    std::filesystem::resize_file(path, max_input_csv_bytes);
    CHECK_THROWS_WITH(read_input_csv(path), !Catch::Contains("longer than"));  // within the bound: parsed (and malformed)
    std::filesystem::remove(path);
    CHECK_THROWS_WITH(read_input_csv("/nonexistent/in.csv"), Catch::Contains("/nonexistent/in.csv: cannot open the file"));
}

TEST_CASE("output columns laid out anew take their values by name, the k-th of a name the k-th, lane by lane") {
    using dnnc::protocol::no_column;
    using dnnc::protocol::output_values_from;
    // A grow of E under "Q[0] E" and "E[0]": E[1] appears after E[0]; E[0] twice stays twice.
    const std::vector<std::string> before{"Q[0]", "E[0]", "E[0]"}, after{"Q[0]", "E[0]", "E[1]", "E[0]"};
    CHECK(output_values_from(before, after, 1) == std::vector<std::size_t>{0, 1, no_column, 2});
    CHECK(output_values_from(before, after, 2) == std::vector<std::size_t>{0, 1, no_column, 2, 3, 4, no_column, 5});
    // Back before the grow: the columns that only the grown rows had go.
    CHECK(output_values_from(after, before, 1) == std::vector<std::size_t>{0, 1, 3});
}
