// The standby: what it keeps of the replicas a lead sends (rows with gaps, spikes no client
// has read, the newest checkpoint on disk, the clock's intent), and the takeover it starts
// once the lead has been silent for the heartbeat timeout.
#include "lead/standby.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/core/files.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

using namespace dnnc;
using namespace dnnc::node_server;
using nlohmann::json;

namespace {

void send(standby& s, const json& header, const std::string& body = {}) {
    protocol::frame reply;
    s.handle({protocol::message_type::replica, 0, 0, encode_replica(header, body)}, [&](protocol::frame f) { reply = std::move(f); });
    REQUIRE(reply.type == protocol::message_type::replica_reply);
}

// Tells the standby of a network whose rows hold `width` values, led from where nobody answers.
void send_document(standby& s, int width) {
    send(s, {{"kind", "document"}, {"network", "n"}, {"lead", "a"}, {"lead_at", "127.0.0.1:1"},
             {"heartbeat_timeout_ms", 1e9}, {"tick", 0}, {"width", width}});
}

bool refuses(standby& s, const json& header, const std::string& body) {
    try {
        s.handle({protocol::message_type::replica, 0, 0, encode_replica(header, body)}, [](protocol::frame) {});
    } catch (const protocol_error&) {
        return true;
    }
    return false;
}

std::string rows_body(std::int64_t from, std::int64_t count) {
    std::string body;
    for (auto t = from; t < from + count; ++t) {
        const float row[2] = {static_cast<float>(t), -static_cast<float>(t)};
        body.append(reinterpret_cast<const char*>(row), sizeof row);
    }
    return body;
}

}  // namespace

TEST_CASE("replicated spikes decode to what was encoded, truncated ones are refused") {
    std::string body;
    append_spikes(body, {3, {1, 5, 9}});
    append_spikes(body, {4, {}});
    append_spikes(body, {7, {4000000000u}});
    const auto ticks = decode_spikes(body);
    REQUIRE(ticks.size() == 3);
    CHECK(ticks[0].tick == 3);
    CHECK(ticks[0].neurons == std::vector<std::uint32_t>{1, 5, 9});
    CHECK(ticks[1].neurons.empty());
    CHECK(ticks[2].neurons == std::vector<std::uint32_t>{4000000000u});
    CHECK_THROWS_AS(decode_spikes(body.substr(0, body.size() - 1)), protocol_error);
    CHECK_THROWS_AS(decode_spikes(std::string("\x01\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff", 12)), protocol_error);
}

TEST_CASE("a standby keeps the lead's replica and takes over with it once the lead is silent") {
    node_options options;
    options.state_dir = (std::filesystem::temp_directory_path() / ("dnnc-standby-" + std::to_string(std::random_device{}()))).string();
    std::mutex mutex;
    std::condition_variable taken_cv;
    std::optional<replica> taken;
    {
        standby s(options, [&](const replica& r) {
            std::lock_guard<std::mutex> lock(mutex);
            taken = r;
            taken_cv.notify_all();
        });
        CHECK(refuses(s, {{"kind", "rows"}}, {}));
        // Port 1 on loopback: nobody answers there, so the lead is silent from the start.
        send(s, {{"kind", "document"}, {"network", "net/1"}, {"lead", "a"}, {"lead_at", "127.0.0.1:1"},
                 {"heartbeat_timeout_ms", 300}, {"tick", 0}, {"width", 2}},
             "<dnnc/>");
        send(s, {{"kind", "rows"}, {"start", 0}, {"from", 0}, {"count", 4}, {"width", 2}}, rows_body(0, 4));
        send(s, {{"kind", "rows"}, {"start", 0}, {"from", 2}, {"count", 4}, {"width", 2}}, rows_body(2, 4));  // 2, 3 held already
        send(s, {{"kind", "spikes"}, {"forget_before", 0}}, [] {
            std::string b;
            append_spikes(b, {1, {7}});
            append_spikes(b, {4, {2, 3}});
            return b;
        }());
        send(s, {{"kind", "spikes"}, {"forget_before", 3}});  // a client read the spikes of ticks 0..2
        send(s, {{"kind", "checkpoint"}, {"tick", 4}, {"offset", 0}, {"last", true}}, "first");
        // In pieces, each following the last: one that does not is refused.
        send(s, {{"kind", "checkpoint"}, {"tick", 6}, {"offset", 0}, {"last", false}}, "sec");
        CHECK(refuses(s, {{"kind", "checkpoint"}, {"tick", 6}, {"offset", 2}, {"last", true}}, "ond"));
        send(s, {{"kind", "checkpoint"}, {"tick", 6}, {"offset", 3}, {"last", true}}, "ond");
        send(s, {{"kind", "intent"}, {"state", "stepping"}, {"target", 99}});
        const auto dir = std::filesystem::path(options.state_dir) / "replicas" / "net_1";
        CHECK(std::filesystem::exists(dir / "checkpoint-6.dnncs"));
        CHECK_FALSE(std::filesystem::exists(dir / "checkpoint-4.dnncs"));

        std::unique_lock<std::mutex> lock(mutex);
        REQUIRE(taken_cv.wait_for(lock, std::chrono::seconds(5), [&] { return taken.has_value(); }));
        protocol::node_status status;
        s.describe(status);
        CHECK_FALSE(status.replica);  // handed over: held no more
    }
    REQUIRE(taken);
    CHECK(taken->lead == "a");
    CHECK(taken->document == "<dnnc/>");
    CHECK(read_file(taken->checkpoint_file) == "second");
    CHECK(taken->checkpoint_tick == 6);
    CHECK(taken->rows.first() == 0);
    CHECK(taken->rows.end() == 6);
    for (std::int64_t t = 0; t < 6; ++t) CHECK(taken->rows.row(t) == std::vector<float>{static_cast<float>(t), -static_cast<float>(t)});
    REQUIRE(taken->spikes.size() == 1);
    CHECK(taken->spikes.front().tick == 4);
    CHECK(taken->intent["target"] == 99);
    std::filesystem::remove_all(options.state_dir);
}

TEST_CASE("rows a lead no longer had leave a gap the standby counts as dropped") {
    node_options options;
    options.state_dir = std::filesystem::temp_directory_path().string();
    standby s(options, [](const replica&) {});
    send_document(s, 2);
    send(s, {{"kind", "rows"}, {"start", 0}, {"from", 0}, {"count", 2}, {"width", 2}}, rows_body(0, 2));
    send(s, {{"kind", "rows"}, {"start", 0}, {"from", 5}, {"count", 1}, {"width", 2}}, rows_body(5, 1));
    protocol::node_status status;
    s.describe(status);
    REQUIRE(status.replica);
    CHECK(status.replica->rows == 1);
    CHECK(refuses(s, {{"kind", "rows"}, {"start", 0}, {"from", 6}, {"count", 1}, {"width", 3}}, rows_body(6, 1)));
}

// Regression: a network without outputs has rows of no values, which the body alone cannot
// count; the standby's rows stopped at the first batch, and taking over from a later
// checkpoint failed ("cannot adopt output rows ... before tick ...").
TEST_CASE("rows of a network without outputs are counted by the header") {
    node_options options;
    options.state_dir = std::filesystem::temp_directory_path().string();
    standby s(options, [](const replica&) {});
    send_document(s, 0);
    send(s, {{"kind", "rows"}, {"start", 0}, {"from", 0}, {"count", 50}, {"width", 0}});
    send(s, {{"kind", "rows"}, {"start", 0}, {"from", 50}, {"count", 50}, {"width", 0}});
    protocol::node_status status;
    s.describe(status);
    REQUIRE(status.replica);
    CHECK(status.replica->rows == 100);
    CHECK(refuses(s, {{"kind", "rows"}, {"start", 0}, {"from", 100}, {"count", 2}, {"width", 0}}, "x"));
}

TEST_CASE("a standby whose pings fail does not take over while the lead's own heartbeats reach it") {
    node_options options;
    options.state_dir = (std::filesystem::temp_directory_path() / ("dnnc-standby-" + std::to_string(std::random_device{}()))).string();
    std::atomic<bool> taken{false};
    {
        standby s(options, [&](const replica&) { taken = true; });
        // Port 1: every ping fails, as when the lead's port takes no more connections.
        send(s, {{"kind", "document"}, {"network", "n"}, {"lead", "a"}, {"lead_at", "127.0.0.1:1"},
                 {"heartbeat_timeout_ms", 300}, {"tick", 0}, {"width", 1}},
             "<dnnc/>");
        // The lead's heartbeats to this node go on for five timeouts; another node's name
        // in a heartbeat does not count.
        for (int k = 0; k < 30; ++k) {
            s.lead_heard("a");
            s.lead_heard("b");
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        CHECK_FALSE(taken);
        // Then the lead falls silent: taken over.
        for (int k = 0; k < 100 && !taken; ++k) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        CHECK(taken);
    }
    std::filesystem::remove_all(options.state_dir);
}

TEST_CASE("a standby keeps its replica through the same lead's reinstall until the new run's checkpoint has fully come") {
    node_options options;
    options.state_dir = (std::filesystem::temp_directory_path() / ("dnnc-standby-" + std::to_string(std::random_device{}()))).string();
    const auto dir = std::filesystem::path(options.state_dir) / "replicas" / "n";
    auto held_tick = [](standby& s) {
        protocol::node_status status;
        s.describe(status);
        return status.replica ? status.replica->checkpoint_tick : std::int64_t{-2};
    };
    {
        standby s(options, [](const replica&) {});
        send_document(s, 2);
        send(s, {{"kind", "checkpoint"}, {"tick", 50}, {"offset", 0}, {"last", true}}, "old run");
        REQUIRE(held_tick(s) == 50);
        // The same lead installs the network anew (a re-balance at tick 70): its configs do
        // not void the replica, nor does the new run's document, which is the checkpoint to come.
        s.forget_unless_led_by("a");
        CHECK(held_tick(s) == 50);
        send(s, {{"kind", "document"}, {"network", "n"}, {"lead", "a"}, {"lead_at", "127.0.0.1:1"},
                 {"heartbeat_timeout_ms", 1e9}, {"tick", 70}, {"width", 2}});
        send(s, {{"kind", "checkpoint"}, {"tick", 70}, {"offset", 0}, {"last", false}}, "new ");
        CHECK(held_tick(s) == 50);
        CHECK(read_file((dir / "checkpoint-50.dnncs").string()) == "old run");
        // Its last piece: the new run's replica replaces the old, whose file goes.
        send(s, {{"kind", "checkpoint"}, {"tick", 70}, {"offset", 4}, {"last", true}}, "run");
        CHECK(held_tick(s) == 70);
        CHECK(read_file((dir / "checkpoint-70.dnncs").string()) == "new run");
        CHECK_FALSE(std::filesystem::exists(dir / "checkpoint-50.dnncs"));
        // Another lead's config voids it; so does a release.
        s.forget_unless_led_by("b");
        CHECK(held_tick(s) == -2);
        send_document(s, 2);
        s.forget();
        CHECK(held_tick(s) == -2);
    }
    std::filesystem::remove_all(options.state_dir);
}

TEST_CASE("a lead sends its rows and unread spikes to the standby in pieces, each only once") {
    output_rows rows(2, 0, std::size_t{1} << 20);
    for (std::int64_t t = 0; t < 5; ++t) rows.push({static_cast<float>(t), -static_cast<float>(t)});
    std::int64_t rows_end = 0;
    auto piece = rows_piece(rows, rows_end, 3);
    REQUIRE(piece);
    CHECK(piece->header == json{{"kind", "rows"}, {"start", 0}, {"from", 0}, {"count", 3}, {"width", 2}});
    CHECK(piece->body == rows_body(0, 3));
    CHECK(rows_end == 3);
    CHECK_FALSE(rows_piece(rows, rows_end, 3));
    piece = rows_piece(rows, rows_end, 10);
    REQUIRE(piece);
    CHECK(piece->header["count"] == 2);

    const std::deque<tick_spikes> held{{4, {1, 2}}, {6, {3}}, {9, {4}}};
    std::int64_t spikes_end = 5;
    bool more = true;
    auto spikes = spikes_piece(held, 12, spikes_end, 9, more);
    CHECK_FALSE(more);
    CHECK(spikes.header == json{{"kind", "spikes"}, {"forget_before", 4}});
    const auto sent = decode_spikes(spikes.body);
    REQUIRE(sent.size() == 1);
    CHECK(sent[0].tick == 6);
    CHECK(spikes_end == 9);
    CHECK(spikes_piece({}, 12, spikes_end, 13, more).header["forget_before"] == 13);
}
