#pragma once
// DNNC frames: the unit of everything nodes and tools send each other. Pure code, no sockets.
//
//   offset size  field
//   0      4     magic "DNNC"
//   4      1     version (1)
//   5      1     message type
//   6      2     flags (bit 0: an HMAC-SHA256 tag follows the payload; the others per type below)
//   8      8     request id (a reply carries the id of its request)
//   16     4     payload length (bounded, default 64 MiB)
//   20     n     payload
//   20+n   32    tag, when flag bit 0 is set: HMAC-SHA256(secret, header || payload) on a
//                connection's hello and hello_reply, then HMAC-SHA256(session key,
//                direction || sequence number || header || payload) (frame_auth)
// Integers are little-endian.
#include "dnnc/core/error.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

struct evp_mac_ctx_st;  // OpenSSL's EVP_MAC_CTX

namespace dnnc::protocol {

enum class message_type : std::uint8_t {
    error_reply = 1,   // payload: a human-readable message
    submit = 2,        // payload: a DNNC document (network.xsd) or a binary snapshot; flag `replace_flag` to replace
    submit_reply = 3,  // payload: JSON summary of the installed network
    configure = 4,     // payload: node.xsd config of a subtree
    configure_reply = 5,  // payload: JSON list of {node, hash} acks of the subtree
    status = 6,        // payload: empty; reply: JSON
    status_reply = 7,
    probe = 8,         // payload: source route (see node_server/probe.hpp)
    probe_reply = 9,
    heartbeat = 10,    // payload: empty
    heartbeat_reply = 11,
    shutdown = 12,     // payload: empty; the node replies, then stops
    shutdown_reply = 13,
    signals = 14,      // one-way, node to node: binary signal packet (signal_codec.hpp)
    tick_report = 15,  // one-way, node to lead: JSON {node, tick, values, stats}
    clock = 16,        // lead to node: JSON {grant: T} or {hold: true}; reply JSON {horizon, completed}
    clock_reply = 17,
    inputs = 18,       // to a node: JSON [[neuron index, tick, value]...]; to the lead: [[tick, target, value]...]
    inputs_reply = 19,
    control = 20,      // client to lead: JSON {command: start|step|freeze|resume|progress, ticks}
    control_reply = 21,
    output = 22,       // client to lead: JSON {from: tick}; reply JSON {columns, rows, completed}
    output_reply = 23,
    snapshot = 24,     // client to lead (frozen network); reply: a binary snapshot (snapshot.hpp); with
                       // JSON {from, bytes}: u64 total, i64 tick, then that piece of it (lead_run.hpp)
    snapshot_reply = 25,
    capture = 26,      // lead to node: JSON {from, bytes}; reply: a piece of its neuron states (node_server/state_stream.hpp)
    capture_reply = 27,
    restore_state = 28,  // lead to node: i64 tick, u8 last, a piece of the neuron states to install
    restore_reply = 29,
    signal_link = 30,  // one-way, node to node, empty: the connection carries only signals frames from here
                       // on, and the receiving node's runner reads them itself (signal_inbox.hpp)
    spikes = 31,       // client to lead: JSON {from: tick}; reply JSON {spikes, through, ...} (lead_run.hpp)
    spikes_reply = 32,
    hello = 33,        // with a secret, a connection's first frame: the client's 32-byte nonce (frame_auth)
    hello_reply = 34,  // the server's 32-byte nonce; from here on both ends tag with the session key
    replica = 35,      // lead to its standby: u32 header length, JSON header, body (node_server/standby.hpp)
    replica_reply = 36,
    weights = 37,      // client to lead: JSON {node, from, limit}; reply JSON {nodes, plastic, total, rows}:
                       // a page of that node's plastic synapses' weights, named (lead.cpp)
    weights_reply = 38,
    weights_page = 39,  // lead to node: JSON {from, limit}; reply JSON {total, rows} (node_simulation.hpp)
    weights_page_reply = 40,
    weight_histograms = 41,  // client to lead, empty; reply JSON {tick, bins, projections}: the frozen
                             // network's plastic weights binned per projection (lead.cpp)
    weight_histograms_reply = 42,
    weight_bins = 43,  // lead to node: JSON {bins, elements}; reply JSON {elements} (weight_bins.hpp)
    weight_bins_reply = 44,
    update = 45,  // client to lead (frozen network): a DNNC document whose network differs from the
                  // running one in parameters only (protocol/update.hpp); reply JSON {tick, nodes}
    update_reply = 46,
    parameters = 47,  // lead to node: the update's parameters (parameters_of, a DNNC document); reply empty
    parameters_reply = 48,
    upload = 49,  // client to a node: u8 name length, the name (hex), u64 offset, then bytes of a binary
                  // snapshot appended to the upload of that name; a submit {"uploaded": name} installs it (lead.hpp)
    upload_reply = 50,
    release = 51,  // lead to a node it drained: JSON {epoch}; the node stops serving that installation
                   // (worker.hpp); reply empty
    release_reply = 52,
    relay = 53,  // to a sub-lead, a connection's first frame: "HOST:PORT" of a node it reaches; once it
                 // replies, the connection carries bytes to and from that node (node_server/relays.hpp)
    relay_reply = 54,
};
// Message types that get no reply.
bool is_one_way(message_type t);
const char* to_string(message_type t);
bool is_known(std::uint8_t type);

inline constexpr std::uint8_t frame_version = 1;
inline constexpr std::size_t frame_header_size = 20;
inline constexpr std::size_t frame_tag_size = 32;
inline constexpr std::uint32_t default_max_payload = 64u << 20;
// With a cluster secret, a connection whose sender has not yet proven itself (no frame with
// a valid tag so far) may send frames of at most this payload: a stranger cannot make a
// node hold more.
inline constexpr std::uint32_t pre_auth_max_payload = 1u << 20;
inline constexpr std::uint16_t authenticated_flag = 1u << 0;
inline constexpr std::uint16_t replace_flag = 1u << 1;
// On an error_reply: the request itself was refused (a document or command at fault, which
// the sender can fix), not a failure of the node or the cluster.
inline constexpr std::uint16_t refusal_flag = 1u << 2;
// On a signals frame: the payload is LZ4-compressed (signal_compression.hpp).
inline constexpr std::uint16_t compressed_flag = 1u << 3;
// On a configure: the lead restores every node's state right after it, so a node whose
// neurons and synapses stay as they were may keep its engine (node_simulation.hpp).
inline constexpr std::uint16_t restoring_flag = 1u << 4;
// On a configure: build the engine of this config and hold it, changing nothing else; an
// install that follows with a config of the same neurons and synapses takes it (a move's
// engines built while the run goes on, node_server's worker.hpp).
inline constexpr std::uint16_t prepare_flag = 1u << 5;

struct frame {
    message_type type = message_type::error_reply;
    std::uint16_t flags = 0;  // the authenticated flag is managed by the codec
    std::uint64_t request_id = 0;
    std::string payload;
};

struct frame_header {
    message_type type;
    std::uint16_t flags;
    std::uint64_t request_id;
    std::uint32_t payload_length;
    // Bytes that follow the header: payload plus tag.
    std::size_t body_size() const {
        return payload_length + ((flags & authenticated_flag) ? frame_tag_size : 0);
    }
};

// Encodes a frame; with a non-empty secret it is tagged.
std::string encode_frame(const frame& f, std::string_view secret = {});

// Decodes and checks a 20-byte header: magic, version, known type, length within bounds,
// and a tag present when a secret is required. Throws protocol_error.
frame_header decode_header(std::string_view bytes, std::uint32_t max_payload, bool secret_required);

// Completes a frame from its header and body (payload + tag), verifying the tag against the
// secret (constant-time). Throws protocol_error when the tag is missing or wrong.
frame decode_body(const frame_header& header, std::string_view header_bytes, std::string_view body,
                  std::string_view secret);

// HMAC-SHA256 with one key: its context is keyed once and re-initialised for each tag, so
// a tag neither repeats the key schedule nor allocates a context of its own. One tag at a
// time: a copy is a context of its own, for another thread.
class keyed_mac {
public:
    keyed_mac() = default;  // no key: not usable
    explicit keyed_mac(std::string_view key);
    keyed_mac(const keyed_mac& other);
    keyed_mac(keyed_mac&& other) noexcept;
    keyed_mac& operator=(keyed_mac other) noexcept;
    ~keyed_mac();
    explicit operator bool() const { return ctx_ != nullptr; }
    // HMAC(key, a || b), frame_tag_size bytes.
    std::string tag(std::string_view a, std::string_view b);

private:
    evp_mac_ctx_st* ctx_ = nullptr;
};

// One end's authentication of one connection. Without a secret it does nothing. With one,
// the client's first frame is a hello carrying a random nonce and the server answers with
// its own; both are tagged with the secret. Both ends then derive a session key,
// K = HMAC(secret, "dnnc session 1" || client nonce || server nonce), and tag every later
// frame with HMAC(K, direction || sequence number || header || payload), the sequence
// number counting that direction's frames from 0. A frame captured on one connection is
// refused on any other (another key) and out of order on its own (another number).
class frame_auth {
public:
    enum class side { client, server };
    frame_auth() = default;  // no secret
    frame_auth(std::string secret, side s);

    bool required() const { return !secret_.empty(); }
    bool established() const { return static_cast<bool>(sending_); }

    // Client: the hello to send first.
    std::string hello();
    // Client: takes the server's hello_reply (decoded with its static tag checked).
    void accept(const frame& reply);
    // Server: takes the client's hello; returns the hello_reply bytes to send.
    std::string answer(const frame& hello);

    // Encodes a frame to send: tagged with the session key and the next sequence number,
    // or untagged without a secret. Throws protocol_error before the session exists.
    std::string encode(const frame& f);
    // Checks and completes a received frame (decode_body's counterpart): a hello or
    // hello_reply against the secret itself, anything else against the session key and the
    // next sequence number. Throws protocol_error ("frame authentication failed ...").
    frame decode(const frame_header& header, std::string_view header_bytes, std::string_view body);

private:
    std::string secret_, nonce_;
    keyed_mac by_secret_;            // the handshake's tags and the session key
    keyed_mac sending_, receiving_;  // keyed with the session key: one per direction, which
                                     // may run on two threads
    side side_ = side::client;
    std::uint64_t sent_ = 0, received_ = 0;
};

// Decodes frames from a byte stream fed in arbitrary pieces.
class frame_decoder {
public:
    explicit frame_decoder(std::string secret = {}, std::uint32_t max_payload = default_max_payload);
    // Frames checked by a connection's authentication (a signal link after its hello).
    frame_decoder(frame_auth auth, std::uint32_t max_payload);
    void feed(std::string_view bytes);
    // The next complete frame, if one has arrived. Throws protocol_error on broken framing;
    // the stream is then unusable.
    std::optional<frame> next();

private:
    std::string secret_;
    std::optional<frame_auth> auth_;
    std::uint32_t max_payload_;
    std::string buffer_;
    std::size_t consumed_ = 0;
};

// SHA-256 of bytes: the 32 raw bytes, or 64 lowercase hex digits (config hashes in acks).
std::string sha256(std::string_view bytes);
std::string sha256_hex(std::string_view bytes);

}  // namespace dnnc::protocol
