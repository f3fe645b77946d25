#include "dnnc/protocol/rate.hpp"

#include "text.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <utility>

namespace dnnc::protocol {

namespace {
struct prefix {
    char letter;
    double factor;
};
constexpr prefix prefixes[] = {{'T', 1e12}, {'G', 1e9}, {'M', 1e6}, {'k', 1e3}};

bool ends_with(std::string_view s, std::string_view suffix, bool any_case) {
    if (s.size() < suffix.size()) return false;
    const auto tail = s.substr(s.size() - suffix.size());
    for (std::size_t i = 0; i < suffix.size(); ++i) {
        const char a = tail[i], b = suffix[i];
        if (any_case ? std::tolower(static_cast<unsigned char>(a)) != b : a != b) return false;
    }
    return true;
}
}  // namespace

std::optional<double> parse_rate(std::string_view s) {
    double unit = 0;
    if (ends_with(s, "B/s", false)) {
        unit = 8, s.remove_suffix(3);
    } else if (ends_with(s, "bit/s", true)) {
        unit = 1, s.remove_suffix(5);
    } else if (ends_with(s, "bit", true)) {
        unit = 1, s.remove_suffix(3);
    } else {
        return std::nullopt;
    }
    if (!s.empty()) {
        const char last = static_cast<char>(std::toupper(static_cast<unsigned char>(s.back())));
        for (const auto& p : prefixes)
            if (last == std::toupper(static_cast<unsigned char>(p.letter))) {
                unit *= p.factor;
                s.remove_suffix(1);
                break;
            }
    }
    const auto number = text::to_double(s);
    if (!number) return std::nullopt;
    return *number * unit;
}

std::string rate_text(double bits_per_second) {
    for (const auto& p : prefixes) {
        const double q = bits_per_second / p.factor;
        if (std::abs(q) >= 1 && q * p.factor == bits_per_second) return text::from_double(q) + p.letter + "bit";
    }
    return text::from_double(bits_per_second) + "bit";
}

std::string rate_human(double bits_per_second) {
    static const char* const units[] = {"bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"};
    std::size_t u = 0;
    while (u + 1 < std::size(units) && std::abs(bits_per_second) >= 1000) bits_per_second /= 1000, ++u;
    const int decimals = std::abs(bits_per_second) < 10 ? 2 : std::abs(bits_per_second) < 100 ? 1 : 0;
    char text[48];
    std::snprintf(text, sizeof text, "%.*f %s", decimals, bits_per_second, units[u]);
    return text;
}

}  // namespace dnnc::protocol
