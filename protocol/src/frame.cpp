#include "dnnc/protocol/frame.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include <cstring>
#include <memory>
#include <utility>

namespace dnnc::protocol {
namespace {

constexpr char magic[4] = {'D', 'N', 'N', 'C'};

template <typename T>
void put(std::string& out, T value) {
    for (std::size_t i = 0; i < sizeof(T); ++i) out += static_cast<char>((value >> (8 * i)) & 0xFF);
}

template <typename T>
T get(std::string_view bytes, std::size_t offset) {
    T value = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i)
        value |= static_cast<T>(static_cast<T>(static_cast<unsigned char>(bytes[offset + i])) << (8 * i));
    return value;
}

// HMAC-SHA256 with `key`.
EVP_MAC_CTX* new_mac(std::string_view key) {
    static EVP_MAC* const algorithm = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    if (!algorithm) throw error("HMAC is not available from OpenSSL");
    EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(algorithm);
    if (!ctx) throw error("cannot allocate an HMAC context");
    char digest[] = "SHA256";
    const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0), OSSL_PARAM_construct_end()};
    if (EVP_MAC_init(ctx, reinterpret_cast<const unsigned char*>(key.data()), key.size(), params) != 1) {
        EVP_MAC_CTX_free(ctx);
        throw error("HMAC-SHA256 failed");
    }
    return ctx;
}

// The frame's bytes, tagged with `mac` unless it is null.
std::string encode_tagged(const frame& f, keyed_mac* mac) {
    if (f.payload.size() > UINT32_MAX) throw protocol_error("payload too large for a frame");
    std::string out;
    out.reserve(frame_header_size + f.payload.size() + frame_tag_size);
    out.append(magic, 4);
    put<std::uint8_t>(out, frame_version);
    put<std::uint8_t>(out, static_cast<std::uint8_t>(f.type));
    const std::uint16_t flags = static_cast<std::uint16_t>(mac ? (f.flags | authenticated_flag) : (f.flags & ~authenticated_flag));
    put<std::uint16_t>(out, flags);
    put<std::uint64_t>(out, f.request_id);
    put<std::uint32_t>(out, static_cast<std::uint32_t>(f.payload.size()));
    out += f.payload;
    if (mac) out += mac->tag(std::string_view(out).substr(0, frame_header_size), f.payload);
    return out;
}

// The frame of a header and body, its tag checked with `mac` (none: the node has no secret).
frame decode_tagged(const frame_header& header, std::string_view header_bytes, std::string_view body, keyed_mac* mac) {
    if (body.size() != header.body_size()) throw protocol_error("frame body has the wrong size");
    const std::string_view payload = body.substr(0, header.payload_length);
    if (header.flags & authenticated_flag) {
        if (!mac) throw protocol_error("frame is authenticated but this node has no secret");
        const std::string expected = mac->tag(header_bytes.substr(0, frame_header_size), payload);
        const std::string_view tag = body.substr(header.payload_length, frame_tag_size);
        if (CRYPTO_memcmp(expected.data(), tag.data(), frame_tag_size) != 0)
            throw protocol_error("frame authentication failed (wrong secret or altered frame)");
    } else if (mac) {
        throw protocol_error("frame is not authenticated and this cluster requires it");
    }
    return frame{header.type, static_cast<std::uint16_t>(header.flags & ~authenticated_flag), header.request_id,
                 std::string(payload)};
}

}  // namespace

const char* to_string(message_type t) {
    switch (t) {
    case message_type::error_reply: return "error";
    case message_type::submit: return "submit";
    case message_type::submit_reply: return "submit-reply";
    case message_type::configure: return "configure";
    case message_type::configure_reply: return "configure-reply";
    case message_type::status: return "status";
    case message_type::status_reply: return "status-reply";
    case message_type::probe: return "probe";
    case message_type::probe_reply: return "probe-reply";
    case message_type::heartbeat: return "heartbeat";
    case message_type::heartbeat_reply: return "heartbeat-reply";
    case message_type::shutdown: return "shutdown";
    case message_type::shutdown_reply: return "shutdown-reply";
    case message_type::signals: return "signals";
    case message_type::tick_report: return "tick-report";
    case message_type::clock: return "clock";
    case message_type::clock_reply: return "clock-reply";
    case message_type::inputs: return "inputs";
    case message_type::inputs_reply: return "inputs-reply";
    case message_type::control: return "control";
    case message_type::control_reply: return "control-reply";
    case message_type::output: return "output";
    case message_type::output_reply: return "output-reply";
    case message_type::snapshot: return "snapshot";
    case message_type::snapshot_reply: return "snapshot-reply";
    case message_type::capture: return "capture";
    case message_type::capture_reply: return "capture-reply";
    case message_type::restore_state: return "restore-state";
    case message_type::restore_reply: return "restore-reply";
    case message_type::signal_link: return "signal-link";
    case message_type::spikes: return "spikes";
    case message_type::spikes_reply: return "spikes-reply";
    case message_type::hello: return "hello";
    case message_type::hello_reply: return "hello-reply";
    case message_type::replica: return "replica";
    case message_type::replica_reply: return "replica-reply";
    case message_type::weights: return "weights";
    case message_type::weights_reply: return "weights-reply";
    case message_type::weights_page: return "weights-page";
    case message_type::weights_page_reply: return "weights-page-reply";
    case message_type::weight_histograms: return "weight-histograms";
    case message_type::weight_histograms_reply: return "weight-histograms-reply";
    case message_type::weight_bins: return "weight-bins";
    case message_type::weight_bins_reply: return "weight-bins-reply";
    case message_type::update: return "update";
    case message_type::update_reply: return "update-reply";
    case message_type::parameters: return "parameters";
    case message_type::parameters_reply: return "parameters-reply";
    case message_type::upload: return "upload";
    case message_type::upload_reply: return "upload-reply";
    case message_type::release: return "release";
    case message_type::release_reply: return "release-reply";
    case message_type::relay: return "relay";
    case message_type::relay_reply: return "relay-reply";
    }
    return "unknown";
}

bool is_known(std::uint8_t type) {
    return type >= static_cast<std::uint8_t>(message_type::error_reply) &&
           type <= static_cast<std::uint8_t>(message_type::relay_reply);
}

bool is_one_way(message_type t) {
    return t == message_type::signals || t == message_type::tick_report || t == message_type::signal_link;
}

keyed_mac::keyed_mac(std::string_view key) : ctx_(new_mac(key)) {}

keyed_mac::keyed_mac(const keyed_mac& other) {
    if (!other.ctx_) return;
    ctx_ = EVP_MAC_CTX_dup(other.ctx_);
    if (!ctx_) throw error("cannot allocate an HMAC context");
}

keyed_mac::keyed_mac(keyed_mac&& other) noexcept : ctx_(std::exchange(other.ctx_, nullptr)) {}

keyed_mac& keyed_mac::operator=(keyed_mac other) noexcept {
    std::swap(ctx_, other.ctx_);
    return *this;
}

keyed_mac::~keyed_mac() { EVP_MAC_CTX_free(ctx_); }

std::string keyed_mac::tag(std::string_view a, std::string_view b) {
    if (!ctx_) throw error("HMAC-SHA256 without a key");
    unsigned char out[EVP_MAX_MD_SIZE];
    std::size_t length = 0;
    // No key: the one it was made with (the key schedule is kept).
    const bool ok = EVP_MAC_init(ctx_, nullptr, 0, nullptr) == 1 &&
                    EVP_MAC_update(ctx_, reinterpret_cast<const unsigned char*>(a.data()), a.size()) == 1 &&
                    EVP_MAC_update(ctx_, reinterpret_cast<const unsigned char*>(b.data()), b.size()) == 1 &&
                    EVP_MAC_final(ctx_, out, &length, sizeof out) == 1;
    if (!ok || length != frame_tag_size) throw error("HMAC-SHA256 failed");
    return std::string(reinterpret_cast<const char*>(out), length);
}

std::string encode_frame(const frame& f, std::string_view secret) {
    if (secret.empty()) return encode_tagged(f, nullptr);
    keyed_mac mac(secret);
    return encode_tagged(f, &mac);
}

frame_header decode_header(std::string_view bytes, std::uint32_t max_payload, bool secret_required) {
    if (bytes.size() < frame_header_size) throw protocol_error("short frame header");
    if (std::memcmp(bytes.data(), magic, 4) != 0) throw protocol_error("not a DNNC frame (bad magic)");
    const auto version = get<std::uint8_t>(bytes, 4);
    if (version != frame_version)
        throw protocol_error("unsupported frame version " + std::to_string(version));
    const auto type = get<std::uint8_t>(bytes, 5);
    if (!is_known(type)) throw protocol_error("unknown message type " + std::to_string(type));
    frame_header h{static_cast<message_type>(type), get<std::uint16_t>(bytes, 6), get<std::uint64_t>(bytes, 8),
                   get<std::uint32_t>(bytes, 16)};
    if (h.payload_length > max_payload)
        throw protocol_error("frame payload of " + std::to_string(h.payload_length) + " bytes exceeds the limit of " +
                             std::to_string(max_payload));
    if (secret_required && !(h.flags & authenticated_flag))
        throw protocol_error("frame is not authenticated and this cluster requires it");
    return h;
}

frame decode_body(const frame_header& header, std::string_view header_bytes, std::string_view body,
                  std::string_view secret) {
    if (secret.empty()) return decode_tagged(header, header_bytes, body, nullptr);
    keyed_mac mac(secret);
    return decode_tagged(header, header_bytes, body, &mac);
}

namespace {

constexpr std::size_t nonce_size = 32;

std::string random_nonce() {
    std::string nonce(nonce_size, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()), static_cast<int>(nonce.size())) != 1)
        throw error("cannot draw a random nonce");
    return nonce;
}

std::string session_key(keyed_mac& by_secret, std::string_view client_nonce, std::string_view server_nonce) {
    return by_secret.tag("dnnc session 1", std::string(client_nonce) + std::string(server_nonce));
}

// What a session tag covers besides the payload: direction, sequence number, header.
std::string tag_prefix(char direction, std::uint64_t sequence, std::string_view header) {
    std::string prefix(1, direction);
    put<std::uint64_t>(prefix, sequence);
    prefix.append(header.substr(0, frame_header_size));
    return prefix;
}

bool is_handshake(message_type t) { return t == message_type::hello || t == message_type::hello_reply; }

}  // namespace

frame_auth::frame_auth(std::string secret, side s) : secret_(std::move(secret)), side_(s) {
    if (!secret_.empty()) by_secret_ = keyed_mac(secret_);
}

std::string frame_auth::hello() {
    nonce_ = random_nonce();
    return encode_tagged({message_type::hello, 0, 0, nonce_}, by_secret_ ? &by_secret_ : nullptr);
}

void frame_auth::accept(const frame& reply) {
    if (reply.type != message_type::hello_reply || reply.payload.size() != nonce_size || nonce_.empty())
        throw protocol_error("frame authentication failed: no valid hello reply");
    sending_ = keyed_mac(session_key(by_secret_, nonce_, reply.payload));
    receiving_ = sending_;
}

std::string frame_auth::answer(const frame& hello) {
    if (hello.type != message_type::hello || hello.payload.size() != nonce_size)
        throw protocol_error("frame authentication failed: a connection must open with a hello");
    const std::string nonce = random_nonce();
    sending_ = keyed_mac(session_key(by_secret_, hello.payload, nonce));
    receiving_ = sending_;
    return encode_tagged({message_type::hello_reply, 0, hello.request_id, nonce}, by_secret_ ? &by_secret_ : nullptr);
}

std::string frame_auth::encode(const frame& f) {
    if (!required()) return encode_frame(f);
    if (!established()) throw protocol_error("frame authentication: no session on this connection yet");
    std::string out = encode_frame(f);
    out[6] = static_cast<char>(static_cast<unsigned char>(out[6]) | authenticated_flag);
    const char direction = side_ == side::client ? 'C' : 'S';
    out += sending_.tag(tag_prefix(direction, sent_++, out), f.payload);
    return out;
}

frame frame_auth::decode(const frame_header& header, std::string_view header_bytes, std::string_view body) {
    if (is_handshake(header.type)) {
        // The handshake's frames only where it expects them: a server's first frame is the
        // client's hello, a client's first is the reply to the hello it sent. A captured one
        // replayed anywhere else is refused, however valid its tag.
        const bool expected = required() && !established() &&
                              (side_ == side::server ? header.type == message_type::hello
                                                     : header.type == message_type::hello_reply && !nonce_.empty());
        if (!expected) throw protocol_error(std::string("frame authentication failed: an unexpected ") + to_string(header.type));
        return decode_tagged(header, header_bytes, body, &by_secret_);
    }
    if (!required()) return decode_tagged(header, header_bytes, body, nullptr);
    if (!established()) throw protocol_error("frame authentication failed: the connection has no session (no hello first)");
    if (body.size() != header.body_size()) throw protocol_error("frame body has the wrong size");
    if (!(header.flags & authenticated_flag)) throw protocol_error("frame is not authenticated and this cluster requires it");
    const std::string_view payload = body.substr(0, header.payload_length);
    const char direction = side_ == side::client ? 'S' : 'C';
    const std::string expected = receiving_.tag(tag_prefix(direction, received_, header_bytes), payload);
    if (CRYPTO_memcmp(expected.data(), body.data() + header.payload_length, frame_tag_size) != 0)
        throw protocol_error("frame authentication failed (wrong secret, altered, replayed or out of order)");
    ++received_;
    return frame{header.type, static_cast<std::uint16_t>(header.flags & ~authenticated_flag), header.request_id,
                 std::string(payload)};
}

frame_decoder::frame_decoder(std::string secret, std::uint32_t max_payload)
    : secret_(std::move(secret)), max_payload_(max_payload) {}

frame_decoder::frame_decoder(frame_auth auth, std::uint32_t max_payload)
    : auth_(std::move(auth)), max_payload_(max_payload) {}

void frame_decoder::feed(std::string_view bytes) {
    if (consumed_ > 0 && consumed_ * 2 > buffer_.size()) {
        buffer_.erase(0, consumed_);
        consumed_ = 0;
    }
    buffer_.append(bytes);
}

std::optional<frame> frame_decoder::next() {
    const std::string_view pending = std::string_view(buffer_).substr(consumed_);
    if (pending.size() < frame_header_size) return std::nullopt;
    const frame_header h = decode_header(pending, max_payload_, auth_ ? auth_->required() : !secret_.empty());
    if (pending.size() < frame_header_size + h.body_size()) return std::nullopt;
    const auto body = pending.substr(frame_header_size, h.body_size());
    frame f = auth_ ? auth_->decode(h, pending, body) : decode_body(h, pending, body, secret_);
    consumed_ += frame_header_size + h.body_size();
    return f;
}

std::string sha256(std::string_view bytes) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) != 1)
        throw error("SHA-256 failed");
    return std::string(reinterpret_cast<const char*>(digest), length);
}

std::string sha256_hex(std::string_view bytes) {
    static const char hex[] = "0123456789abcdef";
    std::string out;
    for (unsigned char c : sha256(bytes)) {
        out += hex[c >> 4];
        out += hex[c & 15];
    }
    return out;
}

}  // namespace dnnc::protocol
