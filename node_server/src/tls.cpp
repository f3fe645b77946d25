#include "dnnc/node_server/tls.hpp"

#include "dnnc/core/error.hpp"

#include <boost/asio/ssl/context.hpp>

#include <fstream>

namespace dnnc::node_server {

namespace ssl = boost::asio::ssl;

namespace {

void require_file(const std::string& what, const std::string& path) {
    if (path.empty()) throw usage_error("TLS needs " + what);
    if (!std::ifstream(path)) throw usage_error("TLS " + what + " '" + path + "' cannot be read");
}

std::unique_ptr<ssl::context> context_for(ssl::context::method method, const std::string& authority) {
    auto c = std::make_unique<ssl::context>(method);
    c->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                   ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
    boost::system::error_code ec;
    c->load_verify_file(authority, ec);
    if (ec) throw usage_error("TLS authority '" + authority + "': " + ec.message());
    return c;
}

}  // namespace

std::shared_ptr<const tls_config> tls_config::load(const tls_files& files) {
    require_file("a CA certificate (--tls-ca)", files.authority);
    std::shared_ptr<tls_config> config(new tls_config());
    config->client_ = context_for(ssl::context::tls_client, files.authority);
    config->client_->set_verify_mode(ssl::verify_peer);
    if (files.certificate.empty() != files.key.empty())
        throw usage_error("TLS needs a certificate and its key together (--tls-cert and --tls-key)");
    if (files.certificate.empty()) return config;
    require_file("certificate (--tls-cert)", files.certificate);
    require_file("key (--tls-key)", files.key);
    config->server_ = context_for(ssl::context::tls_server, files.authority);
    boost::system::error_code ec;
    config->server_->use_certificate_chain_file(files.certificate, ec);
    if (ec) throw usage_error("TLS certificate '" + files.certificate + "': " + ec.message());
    config->server_->use_private_key_file(files.key, ssl::context::pem, ec);
    if (ec) throw usage_error("TLS key '" + files.key + "' (for " + files.certificate + "): " + ec.message());
    return config;
}

tls_config::~tls_config() = default;

ssl::context& tls_config::server() const { return *server_; }
ssl::context& tls_config::client() const { return *client_; }

}  // namespace dnnc::node_server
