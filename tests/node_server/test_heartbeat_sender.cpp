// The lead's heartbeats: each other node gets a beat every quarter of the timeout and its
// answer goes to the lead; a node that does not answer is a failure each time; a node whose
// answer says stop gets no more; stopping ends them all.
#include "lead/heartbeat_sender.hpp"

#include "dnnc/node_server/log.hpp"

#include "live_node.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>

using namespace dnnc;
using namespace dnnc::node_server;

namespace {

const std::string& secret = test::cluster_secret;
using test::live_node;

model::cluster cluster_of(const std::vector<std::uint16_t>& ports) {
    model::cluster c;
    for (std::size_t v = 0; v < ports.size(); ++v) {
        model::cluster_node n;
        n.id = "n" + std::to_string(v);
        n.host = "127.0.0.1";
        n.port = ports[v];
        c.nodes.push_back(n);
    }
    c.lead = "n0";
    return c;
}

template <class Done>
bool soon(Done&& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return done();
}

}  // namespace

TEST_CASE("heartbeats reach every node but the lead, and a node that does not answer fails each beat") {
    set_log_level(log_level::error);
    const auto peer = live_node();
    node_options options;
    options.server.secret = secret;
    std::atomic<int> answers{0}, failures{0}, to_lead{0};
    heartbeat_sender::handlers on;
    on.answered = [&](std::size_t v, const nlohmann::json& beat) {
        if (v == 0) ++to_lead;
        if (v == 1 && beat.is_object()) ++answers;
        return true;
    };
    on.failed = [&](std::size_t v, const std::string&) {
        if (v == 2) ++failures;
    };
    heartbeat_sender beats(options, cluster_of({1, peer->port(), 1}), 0, R"({"lead": "n0"})", 100, on);
    CHECK(soon([&] { return answers >= 3 && failures >= 3; }));
    beats.stop();
    const int after_stop = answers;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CHECK(answers <= after_stop + 1);  // one beat may have been on its way
    CHECK(to_lead == 0);
}

TEST_CASE("a node whose answer says stop gets no more beats") {
    set_log_level(log_level::error);
    const auto peer = live_node();
    node_options options;
    options.server.secret = secret;
    std::atomic<int> answers{0};
    heartbeat_sender::handlers on;
    on.answered = [&](std::size_t, const nlohmann::json&) {
        ++answers;
        return false;
    };
    on.failed = [](std::size_t, const std::string&) {};
    heartbeat_sender beats(options, cluster_of({1, peer->port()}), 0, "{}", 80, on);
    CHECK(soon([&] { return answers == 1; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    CHECK(answers == 1);
}
