#pragma once
// Dense weight files: raw float32 little-endian, row-major (shape from the element), or
// NumPy .npy float32 (shape from its header, which must agree). Private to dnnc_protocol.
#include "dnnc/core/error.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace dnnc::protocol {

// Reads a rows x cols matrix; throws config_error located at `where` (the element that
// names the file) when the file is missing, truncated, or has another shape or type.
std::vector<float> read_weights_file(const std::string& path, std::uint64_t rows, std::uint64_t cols,
                                     const source_location& where);

}  // namespace dnnc::protocol
