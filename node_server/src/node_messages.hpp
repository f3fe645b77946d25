#pragma once
// What the node's modules share (private to dnnc_node_server): replies, JSON payloads, and
// the emulated link delay.
#include "dnnc/node_server/log.hpp"
#include "dnnc/node_server/server.hpp"
#include "dnnc/core/error.hpp"
#include "dnnc/protocol/frame.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

namespace dnnc::node_server {

using clock_type = std::chrono::steady_clock;

inline double elapsed_ms(clock_type::time_point since) {
    return std::chrono::duration<double, std::milli>(clock_type::now() - since).count();
}

inline protocol::frame reply_of(protocol::message_type type, std::string payload = {}) {
    return protocol::frame{type, 0, 0, std::move(payload)};
}

// The most plastic synapses' weights one weights frame carries (about 40 bytes of JSON each).
inline constexpr std::uint64_t max_weights_page = 200000;

inline nlohmann::json parse_payload(const std::string& payload) {
    try {
        return nlohmann::json::parse(payload);
    } catch (const nlohmann::json::exception& e) {
        throw protocol_error(std::string("malformed JSON payload: ") + e.what());
    }
}

// Runs `work` and responds with its frame, or with an error reply saying why it failed.
inline void respond_with(const responder& respond, const std::function<protocol::frame()>& work) {
    try {
        respond(work());
    } catch (const std::exception& e) {
        DNNC_LOG(warn, "request failed: " << e.what());
        respond(error_reply_for(e));
    }
}

// Emulated link delay: sleeps most of it, then spins to the deadline, because a plain sleep
// overshoots by the timer slack and the overshoot would add to every measured latency.
inline void hold_back(double ms) {
    if (ms <= 0) return;
    const auto deadline = clock_type::now() + std::chrono::duration_cast<clock_type::duration>(
                                                  std::chrono::duration<double, std::milli>(ms));
    const auto spin = std::chrono::microseconds(300);
    if (deadline - clock_type::now() > spin) std::this_thread::sleep_until(deadline - spin);
    while (clock_type::now() < deadline) std::this_thread::yield();
}

}  // namespace dnnc::node_server
