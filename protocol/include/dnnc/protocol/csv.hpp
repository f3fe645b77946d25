#pragma once
// Input and output CSV files of a run.
//   input:  header `tick,target,value`; target is an input id or a neuron id.
//   output: header `tick,<output neurons in document order>`, one row per tick in order,
//           float32 values printed with %.9g so that they read back exactly.
#include "dnnc/protocol/error.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dnnc::protocol {

struct input_row {
    std::int64_t tick = 0;
    std::string target;
    float value = 0;
    source_location where;
};

// Throws config_error with file:line:column for every malformed line (all of them).
std::vector<input_row> parse_input_csv(std::string_view text, const std::string& file);
std::vector<input_row> read_input_csv(const std::string& path);

std::string output_csv_header(const std::vector<std::string>& columns);
std::string output_csv_row(std::int64_t tick, const std::vector<float>& values);

}  // namespace dnnc::protocol
