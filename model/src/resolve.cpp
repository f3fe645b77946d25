#include "dnnc/model/resolve.hpp"

#include <algorithm>
#include <charconv>

namespace dnnc::model {

namespace {
struct parsed_ref {
    std::string_view name;
    bool indexed = false, slice = false;
    std::uint64_t lo = 0, hi = 0;
};

bool parse_index(std::string_view s, std::uint64_t& out) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

// The schema has checked the lexical form; this only splits it.
bool parse_ref(std::string_view ref, parsed_ref& out) {
    const auto open = ref.find('[');
    out.name = ref.substr(0, open);
    if (open == std::string_view::npos) return true;
    if (ref.back() != ']') return false;
    const std::string_view inside = ref.substr(open + 1, ref.size() - open - 2);
    out.indexed = true;
    const auto colon = inside.find(':');
    if (colon == std::string_view::npos) return parse_index(inside, out.lo);
    out.slice = true;
    return parse_index(inside.substr(0, colon), out.lo) && parse_index(inside.substr(colon + 1), out.hi);
}
}  // namespace

symbol_table::symbol_table(const network& net) {
    for (const auto& n : net.neurons)
        if (names_.emplace(n.id, entry{false, {{total_, 1, 0, 0}}}).second) ++total_;
    for (const auto& p : net.populations) {
        const auto size = p.size > 0 ? static_cast<std::uint64_t>(p.size) : 0;
        if (names_.emplace(p.id, entry{true, {{total_, size, 0, 0}}}).second) total_ += size;
    }
    std::uint32_t born = 0;
    for (const auto& g : net.grows) {
        if (!g.applied) continue;
        ++born;
        const auto it = names_.find(g.population);
        if (it == names_.end() || !it->second.is_population || g.add <= 0) continue;  // the checker says why
        auto& e = it->second;
        const auto add = static_cast<std::uint64_t>(g.add);
        e.extents.push_back({total_, add, e.size(), born});
        total_ += add;
    }
}

std::vector<member_extent> symbol_table::members(const entry& e, std::uint64_t lo, std::uint64_t hi) {
    std::vector<member_extent> out;
    for (const auto& x : e.extents) {
        const auto from = std::max(lo, x.member), to = std::min(hi, x.member + x.size);
        if (from < to) out.push_back({x.first + (from - x.member), to - from, from, x.born});
    }
    return out;
}

std::variant<std::vector<member_extent>, std::string> symbol_table::group(std::string_view ref) const {
    parsed_ref r;
    if (!parse_ref(ref, r)) return "malformed reference '" + std::string(ref) + "'";
    const auto it = names_.find(r.name);
    if (it == names_.end()) return "no neuron or population '" + std::string(r.name) + "'";
    const entry& e = it->second;
    if (!r.indexed) return e.extents;
    if (!e.is_population) return "'" + std::string(r.name) + "' is a neuron, not a population; it takes no index";
    if (!r.slice) {
        if (r.lo >= e.size())
            return "index " + std::to_string(r.lo) + " is out of range: population '" + std::string(r.name) +
                   "' has " + std::to_string(e.size()) + " neurons";
        return members(e, r.lo, r.lo + 1);
    }
    if (r.lo >= r.hi || r.hi > e.size())
        return "slice [" + std::to_string(r.lo) + ":" + std::to_string(r.hi) + "] is out of range: population '" +
               std::string(r.name) + "' has " + std::to_string(e.size()) + " neurons";
    return members(e, r.lo, r.hi);
}

std::variant<std::uint64_t, std::string> symbol_table::single(std::string_view ref) const {
    parsed_ref r;
    if (!parse_ref(ref, r)) return "malformed reference '" + std::string(ref) + "'";
    const auto it = names_.find(r.name);
    if (it == names_.end()) return "no neuron '" + std::string(ref) + "'";
    if (r.slice) return "'" + std::string(ref) + "' is a slice; a single neuron is needed here";
    if (it->second.is_population && !r.indexed)
        return "'" + std::string(ref) + "' is a population; name one member, e.g. '" + std::string(ref) + "[0]'";
    auto g = group(ref);
    if (auto* why = std::get_if<std::string>(&g)) return *why;
    return std::get<std::vector<member_extent>>(g).front().first;
}

std::vector<member_extent> symbol_table::extents(std::string_view ref, const source_location& where) const {
    auto g = group(ref);
    if (auto* why = std::get_if<std::string>(&g)) throw config_error(where, *why);
    return std::move(std::get<std::vector<member_extent>>(g));
}

neuron_range symbol_table::range(std::string_view ref, const source_location& where) const {
    const auto parts = extents(ref, where);
    if (parts.size() > 1)
        throw config_error(where, "'" + std::string(ref) + "' spans a grown population's members added at " +
                                      std::to_string(parts.size() - 1) + " grows: not supported here");
    return {parts.front().first, parts.front().size};
}

}  // namespace dnnc::model
