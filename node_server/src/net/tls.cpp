#include "dnnc/node_server/tls.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/core/files.hpp"

#include <boost/asio/ssl/context.hpp>


namespace dnnc::node_server {

namespace ssl = boost::asio::ssl;

namespace {

// The PEM text of `path`, read within 1 MiB (a certificate chain or key is a few KiB).
std::string pem_of(const std::string& what, const std::string& path) {
    if (path.empty()) throw usage_error("TLS needs " + what);
    try {
        return read_file(path, 1 << 20);
    } catch (const config_error& e) {
        throw usage_error("TLS " + what + ": " + e.what());
    }
}

std::unique_ptr<ssl::context> context_for(ssl::context::method method, const std::string& authority, const std::string& pem) {
    auto c = std::make_unique<ssl::context>(method);
    c->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                   ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
    boost::system::error_code ec;
    c->add_certificate_authority(boost::asio::buffer(pem), ec);
    if (ec) throw usage_error("TLS authority '" + authority + "': " + ec.message());
    return c;
}

}  // namespace

std::shared_ptr<const tls_config> tls_config::load(const tls_files& files) {
    const std::string authority = pem_of("a CA certificate (--tls-ca)", files.authority);
    std::shared_ptr<tls_config> config(new tls_config());
    config->client_ = context_for(ssl::context::tls_client, files.authority, authority);
    config->client_->set_verify_mode(ssl::verify_peer);
    if (files.certificate.empty() != files.key.empty())
        throw usage_error("TLS needs a certificate and its key together (--tls-cert and --tls-key)");
    if (files.certificate.empty()) return config;
    const std::string certificate = pem_of("certificate (--tls-cert)", files.certificate);
    const std::string key = pem_of("key (--tls-key)", files.key);
    config->server_ = context_for(ssl::context::tls_server, files.authority, authority);
    boost::system::error_code ec;
    config->server_->use_certificate_chain(boost::asio::buffer(certificate), ec);
    if (ec) throw usage_error("TLS certificate '" + files.certificate + "': " + ec.message());
    config->server_->use_private_key(boost::asio::buffer(key), ssl::context::pem, ec);
    if (ec) throw usage_error("TLS key '" + files.key + "' (for " + files.certificate + "): " + ec.message());
    return config;
}

tls_config::~tls_config() = default;

ssl::context& tls_config::server() const { return *server_; }
ssl::context& tls_config::client() const { return *client_; }

}  // namespace dnnc::node_server
