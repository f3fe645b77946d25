#pragma once
#include <string>

namespace dnnc::node_server {

// The cluster secret from a file (trailing newlines dropped). Throws usage_error when the
// file cannot be read or is empty.
std::string read_secret_file(const std::string& path);

// Writes a new random secret (64 hex digits from the system's random source) to `path`,
// readable and writable by its owner only (mode 0600); the file must not exist yet.
// Throws io_error.
void write_new_secret_file(const std::string& path);

}  // namespace dnnc::node_server
