#pragma once
// TLS for links that leave the machine (Boost.Asio over OpenSSL), an option: a node given a
// certificate and key serves TLS on its port and speaks TLS to every node it calls; every
// client and node checks the certificate of the node it calls against the cluster's CA and
// the node's address (host name or IP in the certificate's subjectAltName). The cluster
// secret still authenticates every frame; TLS adds secrecy and the nodes' identity.
#include <memory>
#include <string>

namespace boost::asio::ssl {
class context;
}

namespace dnnc::node_server {

struct tls_files {
    std::string certificate;  // PEM: this node's certificate (chain); a node's only
    std::string key;          // PEM: its private key
    std::string authority;    // PEM: the CA that signed the nodes' certificates
    bool enabled() const { return !authority.empty(); }
};

// The OpenSSL contexts built once from the files: TLS 1.2 or later, peers verified.
class tls_config {
public:
    // usage_error naming the file when one is missing or unreadable, or when a key does not
    // match its certificate; a certificate without a key (or the reverse) is a usage_error.
    static std::shared_ptr<const tls_config> load(const tls_files& files);
    ~tls_config();

    bool serves() const { return server_ != nullptr; }  // has a certificate and key
    boost::asio::ssl::context& server() const;          // serves() only
    boost::asio::ssl::context& client() const;

private:
    tls_config() = default;
    std::unique_ptr<boost::asio::ssl::context> server_, client_;
};

}  // namespace dnnc::node_server
