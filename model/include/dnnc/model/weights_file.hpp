#pragma once
// Dense weight files: raw float32 little-endian, row-major (shape from the element), or
// NumPy .npy float32 (shape from its header, which must agree); the .npy header also for connection files.
#include "dnnc/core/error.hpp"

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace dnnc::model {

// Reads a rows x cols matrix; throws config_error located at `where` (the element that
// names the file) when the file is missing, truncated, or has another shape or type.
std::vector<float> read_weights_file(const std::string& path, std::uint64_t rows, std::uint64_t cols,
                                     const source_location& where);

// The header of a version 1.0/2.0/3.0 .npy file: its dtype as NumPy spells it ('<f4') and
// its shape. Leaves `in` at the first byte of the data; throws config_error located at
// `where`, naming the file as "`what` 'PATH'", when it is no .npy file or not in C order.
struct npy_header {
    std::string descr;
    std::vector<std::uint64_t> shape;
};
npy_header read_npy_header(std::ifstream& in, const std::string& path, const std::string& what, const source_location& where);

}  // namespace dnnc::model
