// States in pieces between the lead and its nodes: merged from nodes holding any neurons into
// global order, holding a piece per node at most, one neuron larger than a piece passing
// whole, a missing or doubled neuron refused; and sent to the nodes that restore them, each
// node's own with their synapses and the remote ones it reads without, in bounded pieces
// closed by one last piece per node.
#include "state_stream.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/node_server/log.hpp"
#include "dnnc/protocol/snapshot_file.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>

using namespace dnnc;
using namespace dnnc::node_server;
using protocol::indexed_state;

namespace {

// Neuron i's state: its synapse values grow with i % 7, and neuron 500 alone is larger than a piece.
indexed_state state_of(std::int64_t i) {
    const std::size_t values = i == 500 ? state_piece_bytes / 2 : static_cast<std::size_t>(i % 7) * 5000;
    return {i, static_cast<float>(i), {-70, 0, 0, 0}, {0, 1}, {}, std::vector<float>(values, static_cast<float>(i)), {}};
}

// A node's answer to a capture request, as node_simulation::capture gives it.
state_piece piece_of(const std::vector<std::int64_t>& own, std::int64_t from, std::size_t bytes) {
    state_piece piece;
    auto k = std::lower_bound(own.begin(), own.end(), from);
    for (std::size_t held = 0; k != own.end() && (piece.states.empty() || held < bytes); ++k) {
        piece.states.push_back(state_of(*k));
        held += encoded_size(piece.states.back());
    }
    piece.next = k == own.end() ? state_piece::done : *k;
    return piece;
}

// The most bytes a piece may hold: a budget, and the neuron that crossed it.
const std::size_t most_in_a_piece = state_piece_bytes + encoded_size(state_of(500));

}  // namespace

TEST_CASE("states pulled from nodes in pieces come out in global order, a piece per node held at most") {
    constexpr std::int64_t count = 2000;
    std::vector<std::vector<std::int64_t>> own(3);
    for (std::int64_t i = 0; i < count; ++i) own[static_cast<std::size_t>(i * 7 % 11 % 3)].push_back(i);
    std::int64_t expected = 0;
    std::size_t total = 0;
    const auto held = merge_states(own.size(), count, [&](std::size_t v, std::int64_t from) { return piece_of(own[v], from, state_piece_bytes); },
                                   [&](const indexed_state& s) {
                                       CHECK(s.index == expected++);
                                       CHECK(s.synapses.size() == state_of(s.index).synapses.size());
                                       total += encoded_size(s);
                                   });
    CHECK(expected == count);
    CHECK(held <= own.size() * most_in_a_piece);
    CHECK(held < total / 4);

    auto refused = [&](std::vector<std::vector<std::int64_t>> nodes, const std::string& why) {
        CHECK_THROWS_WITH(merge_states(nodes.size(), count, [&](std::size_t v, std::int64_t from) { return piece_of(nodes[v], from, 1 << 16); },
                                       [](const indexed_state&) {}),
                          Catch::Contains(why));
    };
    auto missing = own;
    missing[1].erase(missing[1].begin() + 3);
    refused(missing, "no state for neuron");
    auto doubled = own;
    doubled[0].push_back(own[1].back());
    std::sort(doubled[0].begin(), doubled[0].end());
    refused(doubled, "or two for one");
    auto short_of = own;
    short_of[0].erase(std::remove(short_of[0].begin(), short_of[0].end(), count - 1), short_of[0].end());
    short_of[1].erase(std::remove(short_of[1].begin(), short_of[1].end(), count - 1), short_of[1].end());
    short_of[2].erase(std::remove(short_of[2].begin(), short_of[2].end(), count - 1), short_of[2].end());
    refused(short_of, "1999 neuron states for 2000 neurons");
}

TEST_CASE("states sent to the nodes go in bounded pieces: own neurons with their synapses, remote ones read without") {
    // a holds 0..9, b 10..19, c 20..999 (child of b); b reads 3 and 25, c reads 3 and 12.
    model::node_config a, b, c;
    a.node = "a";
    b.node = "b";
    c.node = "c";
    for (std::int64_t i = 0; i < 1000; ++i) (i < 10 ? a : i < 20 ? b : c).neurons.push_back({"n", i, 0, 0, false, false, {}});
    b.peers.push_back({});
    b.peers.back().receives = {3, 25};
    c.peers.push_back({});
    c.peers.back().receives = {3, 12};
    b.children.push_back(c);
    a.children.push_back(b);
    std::map<std::string, std::vector<indexed_state>> got;
    std::map<std::string, int> lasts;
    std::size_t largest_piece = 0;
    state_sender sender(a, 1000, [&](const model::node_config& node, const std::string& piece, bool last) {
        CHECK(lasts[node.node] == 0);  // nothing after the last
        lasts[node.node] += last;
        largest_piece = std::max(largest_piece, piece.size());
        for (auto& s : protocol::decode_states(piece)) got[node.node].push_back(std::move(s));
    });
    std::size_t total = 0;
    for (std::int64_t i = 0; i < 1000; ++i) {
        sender.add(state_of(i));
        total += encoded_size(state_of(i));
    }
    sender.finish();
    CHECK(lasts == std::map<std::string, int>{{"a", 1}, {"b", 1}, {"c", 1}});
    auto indices = [&](const std::string& node) {
        std::vector<std::int64_t> out;
        for (const auto& s : got[node]) out.push_back(s.index);
        return out;
    };
    CHECK(indices("a") == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
    CHECK(indices("b") == std::vector<std::int64_t>{3, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 25});
    CHECK(got["c"].size() == 982);
    for (const auto& [node, states] : got)
        for (const auto& s : states) {
            const bool own = (node == "a" && s.index < 10) || (node == "b" && s.index >= 10 && s.index < 20) || (node == "c" && s.index >= 20);
            CHECK(s.synapses.size() == (own ? state_of(s.index).synapses.size() : 0));
            CHECK(s.output == static_cast<float>(s.index));
        }
    CHECK(largest_piece <= most_in_a_piece + 8);
    CHECK(sender.peak_bytes() <= 3 * most_in_a_piece);
    CHECK(sender.peak_bytes() < total / 4);
    CHECK_THROWS_WITH(sender.add(state_of(1000)), Catch::Contains("no node holds"));
}

TEST_CASE("a snapshot written from the nodes' pieces holds every state in order, at its tick") {
    set_log_level(log_level::error);
    const auto dir = std::filesystem::temp_directory_path() / ("dnnc-state-stream-" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(dir);
    const auto file = (dir / "snapshot.dnncs").string();
    auto doc = protocol::load_document(std::string(DNNC_SOURCE_DIR) + "/examples/xor/xor.xml");
    const std::vector<std::vector<std::int64_t>> own{{0, 2, 4}, {1, 3}};
    write_snapshot(file, doc, 42, 5, [&](std::size_t v, std::int64_t from) {
        state_piece piece;
        for (auto i : own[v])
            if (i >= from) piece.states.push_back({i, static_cast<float>(i), {}, {}, {}, {}, {}});
        piece.next = state_piece::done;
        return piece;
    });
    protocol::snapshot_reader in(file);
    CHECK(in.doc().state->tick == 42);
    CHECK(in.count() == 5);
    indexed_state s;
    std::int64_t expected = 0;
    while (in.next(s)) CHECK(s.index == expected++);
    CHECK(expected == 5);
    std::filesystem::remove_all(dir);
}

TEST_CASE("a restore piece carries its tick, whether it is the last, and its states, and a short one is refused") {
    const std::vector<indexed_state> states{state_of(3), state_of(4)};
    const auto bytes = encode_restore_piece(-2, true, protocol::encode_states(states));
    const auto piece = decode_restore_piece(bytes);
    CHECK(piece.tick == -2);
    CHECK(piece.last);
    REQUIRE(piece.states.size() == 2);
    CHECK(piece.states[1].index == 4);
    CHECK(piece.states[1].synapses == states[1].synapses);
    CHECK_FALSE(decode_restore_piece(encode_restore_piece(7, false, protocol::encode_states({}))).last);
    CHECK_THROWS_AS(decode_restore_piece(bytes.substr(0, 8)), protocol_error);
}
