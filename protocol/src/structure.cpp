#include "dnnc/protocol/structure.hpp"

#include <algorithm>

namespace dnnc::protocol {

std::uint16_t resolved_structure::shortest_delay() const {
    std::uint16_t shortest = 65535;
    for (const auto& p : pairings) shortest = std::min(shortest, p.delay);
    return shortest;
}

std::uint16_t resolved_structure::longest_delay() const {
    std::uint16_t longest = 1;
    for (const auto& p : pairings) longest = std::max(longest, p.delay);
    return longest;
}

std::optional<resolved_structure> resolve_structure(const network& net) {
    if (!net.structural) return std::nullopt;
    resolved_structure out;
    out.dt = net.dt;
    out.seed = net.structural->seed;
    out.interval = std::max<std::int64_t>(1, ticks_of_ms(net.structural->update_interval_ms, net.dt));
    auto kind_of = [&](const std::string& name) {
        const auto at = std::find(out.element_names.begin(), out.element_names.end(), name);
        if (at != out.element_names.end()) return static_cast<std::uint32_t>(at - out.element_names.begin());
        out.element_names.push_back(name);
        return static_cast<std::uint32_t>(out.element_names.size() - 1);
    };
    // Explicit neurons come first, then the populations' members in document order.
    auto first = static_cast<std::uint32_t>(net.neurons.size());
    for (const auto& p : net.populations) {
        if (!p.synaptic_elements.empty()) {
            structure_group g;
            g.population = p.id;
            g.first = first;
            g.size = static_cast<std::uint32_t>(p.size);
            g.tau_ca = p.tau_ca;
            g.beta_ca = p.beta_ca;
            for (const auto& e : p.synaptic_elements) {
                g.kinds.push_back(kind_of(e.name));
                g.curves.push_back(e.curve);
            }
            out.groups.push_back(std::move(g));
        }
        first += static_cast<std::uint32_t>(p.size);
    }
    for (const auto& s : net.structural->synapses)
        out.pairings.push_back({kind_of(s.pre_element), kind_of(s.post_element), static_cast<float>(s.weight),
                                static_cast<std::uint16_t>(std::clamp<std::int64_t>(delay_ticks(s, net.dt), 1, 65535))});
    return out;
}

}  // namespace dnnc::protocol
