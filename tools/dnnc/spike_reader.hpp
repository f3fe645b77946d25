#pragma once
// Reads the spikes a lead records (<record>) as it holds them — the lead forgets what was
// read — and writes them as CSV (t_ms,population,index), counting them per recorded group;
// with them the samples of <record variables> (t_ms,population,index,variable,value).
#include "client.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace dnnc::cli {

class spike_reader {
public:
    // `csv`: where the rows go (header first), or null to count only. Throws usage_error
    // when the lead's network records no spikes and samples no variables.
    spike_reader(const client_options& o, std::string lead, std::int64_t from, std::ostream* csv);

    // The spikes read, column by column: tick, group (an index into groups()), index in it.
    struct columns {
        std::vector<std::int64_t> tick;
        std::vector<std::int32_t> group;
        std::vector<std::int64_t> index;
    };
    // Also keeps every spike read from here on in `to` (null: none).
    void collect(columns* to) { columns_ = to; }

    // The samples read from here on go to `csv` (header first; by time, then neuron, then
    // the record's variables in order) and, column by column, to `to` (either may be null).
    struct sample_columns {
        std::vector<std::int64_t> m;  // the sample: the state at time m·dt
        std::vector<std::int32_t> population;  // into sample_populations()
        std::vector<std::int64_t> index;
        std::vector<std::int32_t> variable;  // into sample_variables()
        std::vector<float> value;
    };
    void record_samples(std::ostream* csv, sample_columns* to);
    const std::vector<std::string>& sample_populations() const { return sample_populations_; }
    const std::vector<std::string>& sample_variables() const { return sample_variables_; }
    std::int64_t samples_lost() const { return samples_lost_; }

    // One request: writes what the lead has and returns the last tick it covered.
    std::int64_t read();
    // Reads until every tick through `last` is in.
    void read_through(std::int64_t last);
    // Tells the lead what has been read, so that it forgets it (a last read leaves it there).
    void acknowledge();
    // Reads from another lead from here on (one that took over the run).
    void follow(const std::string& lead) { lead_ = lead; }

    // A recorded population (or neuron): its recorded neurons and the spikes read of them.
    struct group {
        std::string id;
        std::uint64_t recorded = 0;
        std::int64_t spikes = 0;
    };
    const std::vector<group>& groups() const { return groups_; }
    std::int64_t lost() const { return lost_; }
    // The last tick complete at the lead when it last answered, and the run's state then.
    std::int64_t completed() const { return completed_; }
    const std::string& state() const { return state_; }
    double dt() const { return dt_; }
    // {"id", "neurons", "spikes", "rate_hz"} per recorded group, over `ticks` ticks.
    nlohmann::json rates(std::int64_t ticks) const;

private:
    nlohmann::json request(const nlohmann::json& extra);
    // A run of a group's neurons: a population's members [member, member + size) are
    // neurons [first, first + size), one run unless it grew (protocol/resolve.hpp).
    struct extent {
        std::uint64_t first = 0, size = 0, member = 0, recorded = 0;
        std::size_t group = 0;
    };
    // The lead's recorded groups ({"id", "first", "size", "member", "recorded"} each); those
    // not known yet are added (a grown population's new members come as a new extent).
    void learn_groups(const nlohmann::json& groups);
    // The extent of a recorded neuron; the lead is asked again for one it does not know.
    const extent& extent_of(std::uint64_t neuron);

    client_options options_;
    std::string lead_;
    std::ostream* csv_;
    columns* columns_ = nullptr;
    std::int64_t from_;
    std::int64_t lost_ = 0;
    std::int64_t completed_ = -1;
    std::string state_;
    double dt_ = 0.1;
    std::vector<group> groups_;    // each id once, in the order first met
    std::vector<extent> extents_;  // ascending first
    std::size_t latest_ = 0;       // the extent of the last spike (rows come in index order)

    void read_samples(const nlohmann::json& samples);
    struct sampled_neuron {
        std::uint64_t neuron;
        std::int32_t population;  // into sample_populations_
        std::int64_t index, every;
        std::vector<std::int32_t> variables;  // into sample_variables_
    };
    std::vector<sampled_neuron> sampled_;  // ascending neuron
    std::vector<std::string> sample_populations_, sample_variables_;
    std::ostream* samples_csv_ = nullptr;
    sample_columns* sample_columns_ = nullptr;
    std::int64_t samples_lost_ = 0;
};

}  // namespace dnnc::cli
