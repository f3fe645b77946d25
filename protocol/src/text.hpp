#pragma once
// Small text helpers shared by the XML reader and writer (private to dnnc_protocol).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dnnc::protocol::text {

// xs:double and xs:long lexical forms, as the schema has already checked them.
std::optional<double> to_double(std::string_view s);
std::optional<std::int64_t> to_int64(std::string_view s);
std::optional<std::uint64_t> to_uint64(std::string_view s);

// Shortest form that reads back to the same double; INF, -INF and NaN as in xs:double.
std::string from_double(double v);

std::vector<std::string> split_whitespace(std::string_view s);

}  // namespace dnnc::protocol::text
