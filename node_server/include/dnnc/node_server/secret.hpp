#pragma once
#include <string>

namespace dnnc::node_server {

// The cluster secret from a file (trailing newlines dropped). Throws usage_error when the
// file cannot be read or is empty.
std::string read_secret_file(const std::string& path);

}  // namespace dnnc::node_server
