#pragma once
// Binary snapshots a client sends a lead in upload frames before submitting them by name
// (private to dnnc_node_server): each is a file in the state folder's uploads/, written at
// its end. An upload frame's payload is a u8 name length, the name (1 to 64 lowercase hex
// digits), a u64 offset (little-endian) and the bytes.
#include <cstdint>
#include <string>

namespace dnnc::node_server {

inline constexpr std::uint64_t max_upload_bytes = std::uint64_t{1} << 40;

// The file of upload `name` under `state_dir`; usage_error for a name that is not 1 to 64
// lowercase hex digits.
std::string upload_path(const std::string& state_dir, const std::string& name);
// An upload frame's bytes appended to its upload's file: at its end, or from 0, which starts
// it anew (usage_error at any other offset, or past max_upload_bytes); protocol_error for a
// frame too short to name its upload and offset.
void receive_upload(const std::string& state_dir, const std::string& payload);

}  // namespace dnnc::node_server
