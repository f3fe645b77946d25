#pragma once
// Engines joined in lockstep by hand, for tests: after tick t, every engine's packet for each
// peer is delivered to that peer. Peers are named by their engine's position ("0", "1", ...).
#include "dnnc/sim/engine.hpp"

#include <string>
#include <vector>

namespace dnnc::test {

inline void exchange(std::vector<sim::engine>& engines, sim::tick_t t) {
    std::vector<float> values;
    for (std::size_t from = 0; from < engines.size(); ++from)
        for (std::size_t p = 0; p < engines[from].spec().peers.size(); ++p) {
            auto& to = engines[std::stoul(engines[from].spec().peers[p].id)];
            const auto& back = to.spec().peers;
            std::size_t q = 0;
            while (back[q].id != std::to_string(from)) ++q;
            engines[from].outgoing(p, values);
            to.deliver(q, t, values);
        }
}

}  // namespace dnnc::test
