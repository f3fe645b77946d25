#pragma once
// The lead's side of state recording (private to dnnc_node_server): the samples of the
// <record variables> elements, as each node reports those of its own neurons with its tick
// reports, put in the canonical order and held until a client reads them, within a bound.
//
// A sample m is the state at time m·dt (NEST's multimeter's times): the state after tick
// m−1, reported with that tick, and for m = 0 the initial state, reported with tick 0. At
// sample m the sampled neurons due (m a multiple of their record's `every`) are listed in
// ascending global index, each with its record's variables in their order; a node reports
// the values of its own due neurons in that order, and the lead merges the nodes' lists.
#include "dnnc/model/expand.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <deque>
#include <map>
#include <vector>

namespace dnnc::node_server {

class state_samples {
public:
    state_samples(const model::expanded_network& net, const std::vector<std::uint32_t>& node_of_neuron, std::size_t nodes);

    bool sampling() const { return !order_.empty(); }
    // Node v's values of sample m (its due neurons ascending, their variables in order);
    // protocol_error when their count is not what the samplings make.
    void add(std::size_t v, std::int64_t m, const nlohmann::json& values);
    // Tick t is complete, and with it its samples (m = t + 1, and m = 0 at tick 0): their
    // values, in canonical order, join those held (NaN for those of a node that did not report
    // the tick: one a window-mode run stopped waiting for). Beyond max_values_held the oldest
    // samples are dropped and counted in lost().
    void complete(std::int64_t tick);
    // Forgets the samples of the ticks before `from` (a client has them).
    void forget_before(std::int64_t from);
    // [[m, [value...]]...] of the held samples of the ticks from..through (NaN as null), at most
    // about `budget` values; lowers `through` to the last tick answered when the budget ends it
    // first (a tick's samples go together).
    nlohmann::json answer(std::int64_t from, std::int64_t& through, std::size_t budget) const;
    // [{"variables": [...], "every": ticks, "neurons": [[global index, group id, index in
    // it]...]}...]: what a client needs to name each value (record order).
    nlohmann::json layout() const;
    std::int64_t lost() const { return lost_; }

    static constexpr std::size_t max_values_held = std::size_t{1} << 24;

private:
    struct sampled {
        std::uint32_t neuron, node;
        std::int64_t every;
        std::size_t variables;
    };
    std::vector<sampled> order_;                    // every sampled neuron, ascending
    std::vector<std::vector<std::size_t>> of_node_;  // positions in order_ of each node's neurons
    nlohmann::json layout_;
    std::map<std::int64_t, std::vector<std::vector<float>>> partial_;  // m -> per node
    void complete_sample(std::int64_t tick, std::int64_t m);
    struct sample_values {
        std::int64_t tick, m;  // the tick that reported sample m
        std::vector<float> values;
    };
    std::deque<sample_values> held_;
    std::size_t values_held_ = 0;
    std::int64_t lost_ = 0;
};

}  // namespace dnnc::node_server
