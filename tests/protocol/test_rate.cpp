// Link rates: the forms documents may write, the forms refused, the writer's form that reads
// back exactly, and the form status shows.
#include "dnnc/protocol/rate.hpp"

#include <catch2/catch.hpp>

using namespace dnnc::protocol;

TEST_CASE("rates are read in bits or bytes per second with SI prefixes, the unit in tc's forms") {
    CHECK(parse_rate("10Mbit") == 1e7);
    CHECK(parse_rate("10mbit") == 1e7);
    CHECK(parse_rate("1Gbit") == 1e9);
    CHECK(parse_rate("1GBIT") == 1e9);
    CHECK(parse_rate("100kbit") == 1e5);
    CHECK(parse_rate("100Kbit") == 1e5);
    CHECK(parse_rate("2.5Gbit") == 2.5e9);
    CHECK(parse_rate("2.5 Gbit/s") == 2.5e9);
    CHECK(parse_rate("1Tbit") == 1e12);
    CHECK(parse_rate("640bit") == 640);
    CHECK(parse_rate("1e3kbit") == 1e6);
    CHECK(parse_rate("50MB/s") == 4e8);
    CHECK(parse_rate("1 kB/s") == 8e3);
    CHECK(parse_rate("3B/s") == 24);
    CHECK(parse_rate("0Mbit") == 0.0);   // read; the check refuses it
    CHECK(parse_rate("-1Mbit") == -1e6);  // likewise
}

TEST_CASE("a rate without a unit, with tc's ambiguous bps or with a lower-case b per second is refused") {
    for (const char* bad : {"", "10", "Mbit", "10 M", "10Mbps", "10mbps", "10Mb/s", "10 b/s", "ten Mbit", "10Xbit", "10 Mbit/h", "10Mbit extra"}) {
        INFO(bad);
        CHECK_FALSE(parse_rate(bad));
    }
}

TEST_CASE("the written form of a rate reads back to the same number, with the largest exact prefix") {
    CHECK(rate_text(1e7) == "10Mbit");
    CHECK(rate_text(2.5e9) == "2.5Gbit");
    CHECK(rate_text(1e12) == "1Tbit");
    CHECK(rate_text(640) == "640bit");
    for (double v : {1e7, 2.5e9, 640.0, 123456789.0, 0.1, 1.0 / 3, 9.999e11, 4e8 + 1})
        CHECK(parse_rate(rate_text(v)) == v);
}

TEST_CASE("status shows rates with about three significant digits") {
    CHECK(rate_human(9.58e6) == "9.58 Mbit/s");
    CHECK(rate_human(9.6e6) == "9.60 Mbit/s");
    CHECK(rate_human(95.8e6) == "95.8 Mbit/s");
    CHECK(rate_human(958e6) == "958 Mbit/s");
    CHECK(rate_human(2.5e9) == "2.50 Gbit/s");
    CHECK(rate_human(640) == "640 bit/s");
}
