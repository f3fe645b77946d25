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

// The token that opens a node's live page (docs/live.md) when its cluster has a secret:
// HMAC-SHA256(secret, "dnnc http 1") in hex. Whoever holds the secret can compute it; the
// token does not reveal the secret.
std::string http_token(const std::string& secret);

}  // namespace dnnc::node_server
