#include "lead/heartbeat_sender.hpp"

#include "dnnc/node_server/peer_client.hpp"

#include <algorithm>
#include <chrono>

namespace dnnc::node_server {

heartbeat_sender::heartbeat_sender(const node_options& options, const model::cluster& cluster, std::size_t lead, std::string payload,
                                   double heartbeat_timeout_ms, handlers on) {
    const auto period = std::chrono::duration<double, std::milli>(std::clamp(heartbeat_timeout_ms / 4, 20.0, 500.0));
    const auto wait = std::chrono::milliseconds(static_cast<long>(std::max(10.0, heartbeat_timeout_ms / 2)));
    for (std::size_t v = 0; v < cluster.nodes.size(); ++v) {
        if (v == lead) continue;
        const endpoint to{cluster.nodes[v].host, static_cast<std::uint16_t>(cluster.nodes[v].port)};
        threads_.emplace_back([this, v, to, period, wait, payload, on, secret = options.server.secret, tls = options.server.tls] {
            peer_client pinger(secret, protocol::default_max_payload, tls);
            while (true) {
                {
                    std::unique_lock<std::mutex> lock(mutex_);
                    if (changed_.wait_for(lock, period, [&] { return stopping_; })) return;
                }
                try {
                    const auto reply = pinger.call(to, protocol::frame{protocol::message_type::heartbeat, 0, 0, payload}, wait);
                    if (!on.answered(v, reply.payload.empty() ? nlohmann::json::object() : nlohmann::json::parse(reply.payload))) return;
                } catch (const std::exception& e) {
                    on.failed(v, e.what());
                }
            }
        });
    }
}

heartbeat_sender::~heartbeat_sender() {
    stop();
    for (auto& t : threads_) t.join();
}

void heartbeat_sender::stop() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    changed_.notify_all();
}

}  // namespace dnnc::node_server
