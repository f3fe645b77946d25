#pragma once
// Input and output CSV files of a run.
//   input:  header `tick,target,value` or `tick,target,value,lane`; target is an input id
//           or a neuron id; lane (0-based) picks one lane of a batched run, and a file
//           without the column gives every lane the same input.
//   output: header `tick,<output neurons in document order>`, one row per tick in order,
//           float32 values printed with %.9g so that they read back exactly; a batched
//           run (batch > 1) has `tick,lane,<outputs>` and one row per tick and lane.
//   spikes: header `t_ms,population,index`, one row per recorded spike: the start of its
//           tick (tick x dt, %.10g), the population (or explicit neuron) and the member's
//           index in it (0 for an explicit neuron).
//   spike times (the file of a <spike-source>): header `t_ms,index`, one row per spike: its
//           time in ms, rounded to a tick of dt as delays are (ticks_of_ms), and the member's
//           index; rows in any order. A recorded spikes file, less its population column,
//           reads back as the same ticks.
#include "dnnc/core/error.hpp"
#include "dnnc/model/model.hpp"
#include "dnnc/protocol/frame.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dnnc::protocol {

struct input_row {
    std::int64_t tick = 0;
    std::string target;
    float value = 0;
    std::int64_t lane = -1;  // -1: every lane
    source_location where;
};

// Input rows travel to the lead in one frame, so an input file is bounded like a frame's payload.
inline constexpr std::uint64_t max_input_csv_bytes = default_max_payload;

// Throws config_error with file:line:column for every malformed line (all of them).
std::vector<input_row> parse_input_csv(std::string_view text, const std::string& file);
// Also refuses a file longer than max_input_csv_bytes (read_file).
std::vector<input_row> read_input_csv(const std::string& path);
// Throws config_error, located at each row, for lanes a run of `batch` lanes does not have.
void check_input_lanes(const std::vector<input_row>& rows, std::int64_t batch);

std::string output_csv_header(const std::vector<std::string>& columns, std::int64_t batch = 1);
// Rows of output columns `from` laid out as columns `to` (a grow widened them, or a recovery
// narrowed them back): per value of a row of `to`, lanes of `batch` within it as rows hold
// them, the index of the value of a row of `from` it takes, or no_column (it reads 0). A
// column name is one neuron's; the k-th column of a name takes the k-th of it in `from`.
inline constexpr std::size_t no_column = static_cast<std::size_t>(-1);
std::vector<std::size_t> output_values_from(const std::vector<std::string>& from, const std::vector<std::string>& to,
                                            std::int64_t batch);
// `values`: the columns of lane 0, then those of lane 1, ... (one line per lane when batched).
std::string output_csv_row(std::int64_t tick, const std::vector<float>& values, std::int64_t batch = 1);

// Spike times: listed spikes are bounded so that a file cannot exhaust the lead.
inline constexpr std::size_t max_listed_spikes = std::size_t{1} << 26;
// Why t_ms and index cannot be a spike of a spike source of `size` members at dt ms per
// tick (negative or unreachable time, index out of range); nullopt when they can.
std::optional<std::string> spike_time_problem(double t_ms, std::int64_t index, std::int64_t size, double dt);
// Throws config_error with file:line:column for every malformed line (up to 50).
std::vector<model::spike_time> parse_spike_times_csv(std::string_view text, const std::string& file, std::int64_t size, double dt);
// Also refuses a file longer than max_file_bytes (read_file).
std::vector<model::spike_time> read_spike_times_csv(const std::string& path, std::int64_t size, double dt);
// By tick, then index (the order a spike source's spikes are kept and written in).
void sort_spikes(std::vector<model::spike_time>& spikes);

std::string spike_csv_header();
std::string spike_csv_row(std::int64_t tick, double dt_ms, const std::string& population, std::uint64_t index);
// Recorded variables (<record variables>, dnnc run --record-file): header
// `t_ms,population,index,variable,value`, one row per value sampled: the sample's time m·dt
// in ms, the neuron's population (or neuron id) and index in it, the variable's name, its
// value (float32, written so that it reads back exactly: %.9g).
std::string sample_csv_header();
std::string sample_csv_row(std::int64_t m, double dt_ms, const std::string& population, std::int64_t index,
                           const std::string& variable, float value);

}  // namespace dnnc::protocol
