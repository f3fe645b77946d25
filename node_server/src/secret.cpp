#include "dnnc/node_server/secret.hpp"

#include "dnnc/core/error.hpp"

#include <fstream>
#include <sstream>

namespace dnnc::node_server {

std::string read_secret_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw usage_error("--secret-file: cannot read '" + path + "'");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string secret = ss.str();
    while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
    if (secret.empty()) throw usage_error("--secret-file: '" + path + "' is empty");
    return secret;
}

}  // namespace dnnc::node_server
