#include "lead/uploads.hpp"

#include "dnnc/core/error.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>

namespace dnnc::node_server {

std::string upload_path(const std::string& state_dir, const std::string& name) {
    if (name.empty() || name.size() > 64 || name.find_first_not_of("0123456789abcdef") != std::string::npos)
        throw usage_error("an upload's name is 1 to 64 lowercase hex digits");
    return (std::filesystem::path(state_dir) / "uploads" / (name + ".dnncs")).string();
}

void receive_upload(const std::string& state_dir, const std::string& payload) {
    if (payload.empty() || payload.size() < 1u + static_cast<std::uint8_t>(payload[0]) + 8u) throw protocol_error("a short upload frame");
    const auto length = static_cast<std::uint8_t>(payload[0]);
    const auto path = upload_path(state_dir, payload.substr(1, length));
    std::uint64_t offset = 0;
    std::memcpy(&offset, payload.data() + 1 + length, 8);
    const std::string_view bytes = std::string_view(payload).substr(1 + length + 8);
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::error_code missing;
    const auto size = offset == 0 ? 0 : std::filesystem::file_size(path, missing);
    if (missing || offset != size)
        throw usage_error("an upload continues at its end (" + std::to_string(missing ? 0 : size) + " bytes), not at " + std::to_string(offset));
    if (offset + bytes.size() > max_upload_bytes) throw usage_error("an upload holds at most " + std::to_string(max_upload_bytes) + " bytes");
    std::ofstream out(path, std::ios::binary | (offset == 0 ? std::ios::trunc : std::ios::app));
    if (!out.write(bytes.data(), static_cast<std::streamsize>(bytes.size())) || !out.flush()) throw io_error("cannot write " + path);
}

}  // namespace dnnc::node_server
