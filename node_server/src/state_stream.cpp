#include "state_stream.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/node_server/log.hpp"
#include "dnnc/protocol/snapshot_file.hpp"

#include <algorithm>
#include <cstring>

namespace dnnc::node_server {

std::string encode_state_piece(const state_piece& piece) {
    std::string out(sizeof piece.next, '\0');
    std::memcpy(out.data(), &piece.next, sizeof piece.next);
    return out + protocol::encode_states(piece.states);
}

state_piece decode_state_piece(std::string_view bytes) {
    state_piece piece;
    if (bytes.size() < sizeof piece.next) throw protocol_error("state piece is truncated");
    std::memcpy(&piece.next, bytes.data(), sizeof piece.next);
    piece.states = protocol::decode_states(bytes.substr(sizeof piece.next));
    return piece;
}

std::string encode_restore_piece(std::int64_t tick, bool last, std::string_view states) {
    std::string bytes(sizeof tick, '\0');
    std::memcpy(bytes.data(), &tick, sizeof tick);
    bytes += static_cast<char>(last ? 1 : 0);
    bytes += states;
    return bytes;
}

restore_piece decode_restore_piece(std::string_view bytes) {
    restore_piece piece;
    if (bytes.size() < sizeof piece.tick + 1) throw protocol_error("restore payload is truncated");
    std::memcpy(&piece.tick, bytes.data(), sizeof piece.tick);
    piece.last = bytes[sizeof piece.tick] != 0;
    piece.states = protocol::decode_states(bytes.substr(sizeof piece.tick + 1));
    return piece;
}

std::size_t encoded_size(const protocol::indexed_state& s) {
    std::size_t bytes = 4 + 4 + 1 + 2 + 1 + 8 + 4 + 4 * (s.variables.size() + s.history.size() + s.synapses.size()) + 8 * s.growth.size();
    for (const auto& t : s.traces) bytes += 8 + 1 + 4 + 16 * t.ticks.size();
    return bytes;
}

// Invariant: every state of node v below next[v] has been handed on or is in held[v]; so
// every state below the least next[v] is known, and those held are handed on in order.
std::size_t merge_states(std::size_t nodes, std::uint64_t count,
                         const std::function<state_piece(std::size_t node, std::int64_t from)>& fetch,
                         const std::function<void(const protocol::indexed_state&)>& out) {
    std::vector<std::vector<protocol::indexed_state>> held(nodes);
    std::vector<std::size_t> at(nodes, 0);  // the first of held[v] not handed on
    std::vector<std::int64_t> next(nodes, 0);
    std::size_t peak = 0;
    std::int64_t expected = 0;
    while (true) {
        for (std::size_t v = 0; v < nodes; ++v) {
            if (at[v] < held[v].size() || next[v] == state_piece::done) continue;
            auto piece = fetch(v, next[v]);
            if (piece.next <= next[v] || (!piece.states.empty() && (piece.states.front().index < next[v] ||
                                                                    piece.states.back().index >= piece.next)))
                throw error("a node's piece of states does not follow from index " + std::to_string(next[v]));
            held[v] = std::move(piece.states);
            at[v] = 0;
            next[v] = piece.next;
        }
        std::size_t bytes = 0;
        for (std::size_t v = 0; v < nodes; ++v)
            for (std::size_t k = at[v]; k < held[v].size(); ++k) bytes += encoded_size(held[v][k]);
        peak = std::max(peak, bytes);
        const auto known = *std::min_element(next.begin(), next.end());
        // Hands on every held state below `known`, the least index first.
        while (true) {
            std::size_t least = nodes;
            for (std::size_t v = 0; v < nodes; ++v)
                if (at[v] < held[v].size() && held[v][at[v]].index < known &&
                    (least == nodes || held[v][at[v]].index < held[least][at[least]].index))
                    least = v;
            if (least == nodes) break;
            const auto& s = held[least][at[least]];
            if (s.index != expected)
                throw error("the nodes returned no state for neuron " + std::to_string(expected) + " (or two for one)");
            out(s);
            ++expected;
            if (++at[least] == held[least].size()) held[least] = {};
        }
        if (known == state_piece::done) break;
    }
    if (static_cast<std::uint64_t>(expected) != count)
        throw error("the nodes returned " + std::to_string(expected) + " neuron states for " + std::to_string(count) + " neurons");
    return peak;
}

void write_snapshot(const std::string& file, model::document doc, std::int64_t tick, std::uint64_t neurons,
                    const std::function<state_piece(std::size_t node, std::int64_t from)>& fetch) {
    for (auto& p : doc.net->populations) p.spike_file.clear();
    for (auto& p : doc.net->projections) p.connections_file.clear();
    const auto nodes = doc.clu->nodes.size();
    protocol::snapshot_writer out(file, doc, tick, neurons);
    const auto held = merge_states(nodes, neurons, fetch, [&](const protocol::indexed_state& s) { out.add(s); });
    out.commit();
    DNNC_LOG(info, "snapshot at tick " << tick << " written to " << file << ": " << out.bytes() << " bytes, at most " << held
                                       << " bytes of states held at once");
}

state_source states_in(const std::vector<protocol::indexed_state>& states) {
    return [&states](const std::function<void(const protocol::indexed_state&)>& each) {
        for (const auto& s : states) each(s);
    };
}

state_source states_in_file(const std::string& path, const protocol::file_access& access) {
    return [path, access](const std::function<void(const protocol::indexed_state&)>& each) {
        protocol::snapshot_reader reader(path, access);
        for (protocol::indexed_state s; reader.next(s);) each(s);
    };
}

state_sender::state_sender(const model::node_config& root, std::size_t neuron_count, send_fn send)
    : owner_(neuron_count, nobody), first_reader_(neuron_count + 1, 0), send_(std::move(send)) {
    nodes_.push_back({&root, {}, 0});
    for (std::size_t k = 0; k < nodes_.size(); ++k)
        for (const auto& child : nodes_[k].node->children) nodes_.push_back({&child, {}, 0});
    auto checked = [&](std::int64_t i) {
        if (i < 0 || static_cast<std::uint64_t>(i) >= neuron_count)
            throw error("a node config names neuron " + std::to_string(i) + " of a network of " + std::to_string(neuron_count));
        return static_cast<std::size_t>(i);
    };
    for (std::size_t k = 0; k < nodes_.size(); ++k)
        for (const auto& n : nodes_[k].node->neurons) owner_[checked(n.index)] = static_cast<std::uint32_t>(k);
    // Per node the remote neurons it reads, once each; then counted and filed by neuron.
    std::vector<std::vector<std::int64_t>> read(nodes_.size());
    for (std::size_t k = 0; k < nodes_.size(); ++k) {
        for (const auto& peer : nodes_[k].node->peers)
            for (auto i : peer.receives)
                if (owner_[checked(i)] != k) read[k].push_back(i);
        std::sort(read[k].begin(), read[k].end());
        read[k].erase(std::unique(read[k].begin(), read[k].end()), read[k].end());
        for (auto i : read[k]) ++first_reader_[static_cast<std::size_t>(i) + 1];
    }
    for (std::size_t i = 0; i < neuron_count; ++i) first_reader_[i + 1] += first_reader_[i];
    readers_.resize(first_reader_.back());
    auto filled = first_reader_;
    for (std::size_t k = 0; k < nodes_.size(); ++k)
        for (auto i : read[k]) readers_[filled[static_cast<std::size_t>(i)]++] = static_cast<std::uint32_t>(k);
}

void state_sender::add(const protocol::indexed_state& s) {
    if (s.index < 0 || static_cast<std::size_t>(s.index) >= owner_.size() || owner_[static_cast<std::size_t>(s.index)] == nobody)
        throw error("a state for neuron " + std::to_string(s.index) + ", which no node holds");
    const auto i = static_cast<std::size_t>(s.index);
    queue(owner_[i], s);
    if (first_reader_[i] == first_reader_[i + 1]) return;
    auto read = s;
    read.synapses.clear();
    for (auto r = first_reader_[i]; r < first_reader_[i + 1]; ++r) queue(readers_[r], read);
}

void state_sender::queue(std::size_t k, const protocol::indexed_state& s) {
    auto& o = nodes_[k];
    const auto bytes = encoded_size(s);
    o.states.push_back(s);
    o.bytes += bytes;
    held_ += bytes;
    peak_ = std::max(peak_, held_);
    if (o.bytes >= state_piece_bytes) flush(o, false);
}

void state_sender::flush(outgoing& o, bool last) {
    send_(*o.node, protocol::encode_states(o.states), last);
    held_ -= o.bytes;
    o.states.clear();
    o.bytes = 0;
}

void state_sender::finish() {
    for (auto& o : nodes_) flush(o, true);
}

}  // namespace dnnc::node_server
