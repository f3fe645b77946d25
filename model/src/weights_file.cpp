#include "dnnc/model/weights_file.hpp"

#include <cstring>
#include <fstream>
#include <regex>

namespace dnnc::model {
namespace {

bool little_endian_host() {
    const std::uint16_t probe = 1;
    unsigned char first;
    std::memcpy(&first, &probe, 1);
    return first == 1;
}

std::vector<float> read_floats(std::ifstream& in, std::uint64_t count, const std::string& path,
                               const source_location& where) {
    std::vector<float> values(count);
    in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(count * sizeof(float)));
    if (static_cast<std::uint64_t>(in.gcount()) != count * sizeof(float))
        throw config_error(where, "weights file '" + path + "' is truncated: expected " + std::to_string(count) +
                                      " float32 values");
    if (in.peek() != std::char_traits<char>::eof())
        throw config_error(where, "weights file '" + path + "' is longer than " + std::to_string(count) +
                                      " float32 values");
    if (!little_endian_host()) {
        for (auto& v : values) {
            unsigned char b[4];
            std::memcpy(b, &v, 4);
            std::swap(b[0], b[3]);
            std::swap(b[1], b[2]);
            std::memcpy(&v, b, 4);
        }
    }
    return values;
}

}  // namespace

std::vector<float> read_weights_file(const std::string& path, std::uint64_t rows, std::uint64_t cols,
                                     const source_location& where) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw config_error(where, "cannot open weights file '" + path + "'");
    const bool npy = path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
    if (npy) {
        const auto bad = [&](const std::string& why) { throw config_error(where, "weights file '" + path + "': " + why); };
        const npy_header header = read_npy_header(in, path, "weights file", where);
        if (header.descr != "<f4") bad("dtype must be little-endian float32 ('<f4')");
        if (header.shape.size() != 2) bad("must hold a 2-D array");
        if (header.shape[0] != rows || header.shape[1] != cols)
            bad("shape (" + std::to_string(header.shape[0]) + ", " + std::to_string(header.shape[1]) +
                ") does not match the projection's " + std::to_string(rows) + " x " + std::to_string(cols));
    }
    return read_floats(in, rows * cols, path, where);
}

npy_header read_npy_header(std::ifstream& in, const std::string& path, const std::string& what, const source_location& where) {
    auto bad = [&](const std::string& why) { throw config_error(where, what + " '" + path + "': " + why); };
    char magic[8];
    if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) bad("not a .npy file");
    std::uint32_t header_length = 0;
    if (magic[6] == 1) {
        unsigned char b[2];
        if (!in.read(reinterpret_cast<char*>(b), 2)) bad("truncated header");
        header_length = b[0] | (b[1] << 8);
    } else {
        unsigned char b[4];
        if (!in.read(reinterpret_cast<char*>(b), 4)) bad("truncated header");
        header_length = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<std::uint32_t>(b[3]) << 24);
    }
    if (header_length > 65536) bad("header too long");
    std::string text(header_length, '\0');
    if (!in.read(text.data(), header_length)) bad("truncated header");
    if (text.find("'fortran_order': False") == std::string::npos) bad("must be in C (row-major) order");
    npy_header header;
    std::smatch m;
    static const std::regex descr(R"('descr':\s*'([^']*)')");
    if (!std::regex_search(text, m, descr)) bad("the header names no plain dtype ('descr')");
    header.descr = m[1];
    static const std::regex shape(R"('shape':\s*\(([\d,\s]*)\))");
    if (!std::regex_search(text, m, shape)) bad("the header has no shape");
    static const std::regex dimension(R"(\d+)");
    const std::string dimensions = m[1];
    for (auto it = std::sregex_iterator(dimensions.begin(), dimensions.end(), dimension); it != std::sregex_iterator(); ++it) {
        const std::string digits = it->str();
        if (digits.size() > 18) bad("a dimension of its shape is too large");
        header.shape.push_back(std::stoull(digits));
    }
    return header;
}

}  // namespace dnnc::model
