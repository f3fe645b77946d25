#include "dnnc/node_server/secret.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/core/files.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace dnnc::node_server {

std::string read_secret_file(const std::string& path) {
    // A secret is 64 hex digits; a file of more than 64 KiB is not one.
    std::string secret;
    try {
        secret = read_file(path, 64 << 10);
    } catch (const config_error& e) {
        throw usage_error("--secret-file: " + std::string(e.what()));
    }
    while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
    if (secret.empty()) throw usage_error("--secret-file: '" + path + "' is empty");
    return secret;
}

void write_new_secret_file(const std::string& path) {
    unsigned char bytes[32];
    if (RAND_bytes(bytes, sizeof bytes) != 1) throw io_error("cannot draw a random cluster secret");
    static const char hex[] = "0123456789abcdef";
    std::string text;
    for (unsigned char b : bytes) text += {hex[b >> 4], hex[b & 15]};
    text += '\n';
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) throw io_error("cannot create the secret file " + path + ": " + std::strerror(errno));
    const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    if (!written) throw io_error("cannot write the secret file " + path);
}

std::string http_token(const std::string& secret) {
    static const char label[] = "dnnc http 1";
    unsigned char tag[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()), reinterpret_cast<const unsigned char*>(label),
         sizeof label - 1, tag, &length);
    static const char hex[] = "0123456789abcdef";
    std::string text;
    for (unsigned int i = 0; i < length; ++i) text += {hex[tag[i] >> 4], hex[tag[i] & 15]};
    return text;
}

}  // namespace dnnc::node_server
