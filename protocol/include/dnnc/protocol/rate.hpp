#pragma once
// Link rates as documents write them (<link bandwidth>) and as status shows them. Pure code.
//
// A rate is a number and a unit: bits per second as `bit`, `kbit`, `Mbit`, `Gbit`, `Tbit`
// (tc's forms; the unit's letters in any case, and `/s` may follow: `10 Mbit/s`), or bytes
// per second as `B/s`, `kB/s`, `MB/s`, `GB/s`, `TB/s` (the B upper-case). Prefixes are
// powers of 1000. tc's `bps`, bytes in tc but bits elsewhere, is refused as ambiguous.
#include <optional>
#include <string>
#include <string_view>

namespace dnnc::protocol {

// Bits per second, or nothing when `text` is not a rate.
std::optional<double> parse_rate(std::string_view text);
// A form parse_rate reads back to exactly `bits_per_second`: "10Mbit", "2.5Gbit".
std::string rate_text(double bits_per_second);
// For people: three significant digits or so, "9.58 Mbit/s".
std::string rate_human(double bits_per_second);

}  // namespace dnnc::protocol
