#include "peer_routes.hpp"

#include <algorithm>

namespace dnnc::sim {

void peer_routes::route(const std::vector<peer_spec>& peers, const slot_layout& slots) {
    send_slots_.clear();
    receive_slots_.clear();
    for (const auto& p : peers) {
        std::vector<std::uint32_t> sends, receives;
        for (auto g : p.sends) sends.push_back(slots.local_slot(g));
        for (auto g : p.receives) receives.push_back(slots.find(g));
        send_slots_.push_back(std::move(sends));
        receive_slots_.push_back(std::move(receives));
    }
    const std::size_t local = slots.local();
    send_of_begin_.assign(local + 1, 0);
    for (const auto& sends : send_slots_)
        for (const auto slot : sends) ++send_of_begin_[slot + 1];
    for (std::size_t k = 0; k < local; ++k) send_of_begin_[k + 1] += send_of_begin_[k];
    send_of_.resize(send_of_begin_[local]);
    std::vector<std::uint64_t> cursor(send_of_begin_.begin(), send_of_begin_.end() - 1);
    for (std::size_t p = 0; p < send_slots_.size(); ++p)
        for (std::size_t k = 0; k < send_slots_[p].size(); ++k)
            send_of_[cursor[send_slots_[p][k]]++] = {static_cast<std::uint32_t>(p), static_cast<std::uint32_t>(k)};
}

void peer_routes::outgoing(std::size_t peer, const float* row, std::size_t batch, std::vector<float>& values) const {
    values.clear();
    for (auto slot : sends(peer)) values.insert(values.end(), row + slot * batch, row + (slot + 1) * batch);
}

void peer_routes::outgoing_nonzero(std::size_t peer, const float* row, std::size_t batch, const std::vector<std::uint32_t>* nonzero,
                                   std::vector<std::pair<std::uint32_t, float>>& values) const {
    values.clear();
    const auto& slots = sends(peer);
    if (nonzero) {
        for (const auto slot : *nonzero)
            for (auto e = send_of_begin_[slot]; e < send_of_begin_[slot + 1]; ++e)
                if (send_of_[e].peer == peer) values.push_back({send_of_[e].position, row[slot]});
        std::sort(values.begin(), values.end());  // in position order, as below
        return;
    }
    for (std::size_t k = 0; k < slots.size(); ++k)
        for (std::size_t lane = 0; lane < batch; ++lane) {
            const float y = row[slots[k] * batch + lane];
            if (y != 0.0f) values.push_back({static_cast<std::uint32_t>(k * batch + lane), y});
        }
}

}  // namespace dnnc::sim
