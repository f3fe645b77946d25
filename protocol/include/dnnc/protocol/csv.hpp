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
#include "dnnc/core/error.hpp"

#include <cstdint>
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

// Throws config_error with file:line:column for every malformed line (all of them).
std::vector<input_row> parse_input_csv(std::string_view text, const std::string& file);
std::vector<input_row> read_input_csv(const std::string& path);
// Throws config_error, located at each row, for lanes a run of `batch` lanes does not have.
void check_input_lanes(const std::vector<input_row>& rows, std::int64_t batch);

std::string output_csv_header(const std::vector<std::string>& columns, std::int64_t batch = 1);
// `values`: the columns of lane 0, then those of lane 1, ... (one line per lane when batched).
std::string output_csv_row(std::int64_t tick, const std::vector<float>& values, std::int64_t batch = 1);

std::string spike_csv_header();
std::string spike_csv_row(std::int64_t tick, double dt_ms, const std::string& population, std::uint64_t index);

}  // namespace dnnc::protocol
