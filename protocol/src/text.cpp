#include "text.hpp"

#include <charconv>
#include <cmath>

namespace dnnc::protocol::text {

namespace {
std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

template <typename T>
std::optional<T> parse_number(std::string_view s) {
    s = trim(s);
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    T value{};
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
    return value;
}
}  // namespace

std::optional<double> to_double(std::string_view s) {
    s = trim(s);
    if (s == "INF" || s == "+INF") return HUGE_VAL;
    if (s == "-INF") return -HUGE_VAL;
    if (s == "NaN") return std::nan("");
    return parse_number<double>(s);
}

std::optional<std::int64_t> to_int64(std::string_view s) { return parse_number<std::int64_t>(s); }
std::optional<std::uint64_t> to_uint64(std::string_view s) { return parse_number<std::uint64_t>(s); }

std::string from_double(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "INF" : "-INF";
    char buffer[32];
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
    return std::string(buffer, ec == std::errc() ? end : buffer);
}

std::vector<std::string> split_whitespace(std::string_view s) {
    std::vector<std::string> parts;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
        std::size_t j = i;
        while (j < s.size() && !(s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r')) ++j;
        if (j > i) parts.emplace_back(s.substr(i, j - i));
        i = j;
    }
    return parts;
}

}  // namespace dnnc::protocol::text
