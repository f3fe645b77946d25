// The lead's run driven through fake links, no sockets: nodes that compute the ticks they
// are granted on a thread of their own and report made-up outputs (tick * 1000 + neuron).
// Clock, step, freeze, inputs, checkpoints and a dead node.
#include "lead/lead_run.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/core/files.hpp"
#include "dnnc/protocol/xml.hpp"

#include "temp_folder.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

using namespace dnnc;
using namespace dnnc::node_server;
using json = nlohmann::json;

namespace {

// A client's command as the lead decodes it from a control frame.
json command(lead_run& run, const json& j) { return run.control(dnnc::protocol::decode_control_request(j)); }

// Nodes that follow the clock as runners do: a grant raises the last tick a node may
// compute, a hold lowers it to the tick in progress; each computed tick is reported.
class fake_nodes {
public:
    explicit fake_nodes(const plan::network_plan& plan) : plan_(plan), nodes_(plan.doc.clu->nodes.size()) {
        std::set<model::neuron_index> outputs;
        for (const auto& o : plan.net.outputs) outputs.insert(o.neurons.begin(), o.neurons.end());
        for (auto i : outputs) nodes_[plan.node_of_neuron[i]].outputs.push_back(i);
        for (std::size_t v = 0; v < nodes_.size(); ++v) hashes.push_back("hash-" + std::to_string(v));
        worker_ = std::thread([this] { compute(); });
    }
    ~fake_nodes() { stop(); }
    // No report reaches the run after this.
    void stop() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        changed_.notify_all();
        if (worker_.joinable()) worker_.join();
    }

    lead_run::links links() {
        lead_run::links l;
        l.clock = [this](std::size_t v, const protocol::clock_request& request) {
            if (!nodes_[v].alive) throw error("connection refused");
            std::unique_lock<std::mutex> lock(mutex_);
            auto& n = nodes_[v];
            // A stopped process: the call is answered once it goes on, or times out.
            if (!changed_.wait_for(lock, std::chrono::seconds(2), [&] { return !n.paused; })) throw error("timed out");
            if (request.what == protocol::clock_request::kind::grant) n.granted = std::max(n.granted, request.grant);
            if (request.what == protocol::clock_request::kind::hold) n.granted = std::min(n.granted, n.completed);
            changed_.notify_all();
            return protocol::clock_reply{n.granted, n.completed};
        };
        l.inputs = [this](std::size_t v, const json& rows) {
            std::lock_guard<std::mutex> lock(mutex_);
            for (const auto& r : rows) nodes_[v].inputs.push_back(r);
        };
        l.alive = [this](std::size_t v) {
            std::lock_guard<std::mutex> lock(mutex_);
            return nodes_[v].alive && !nodes_[v].paused;
        };
        l.capture = [](std::int64_t tick, const std::string& file) { write_atomically(file, "state before tick " + std::to_string(tick)); };
        l.waiting = [this](std::size_t v) {
            std::lock_guard<std::mutex> lock(mutex_);
            return nodes_[v].waiting;
        };
        return l;
    }

    void attach(lead_run& run) {
        std::lock_guard<std::mutex> lock(mutex_);
        run_ = &run;
    }
    void kill(std::size_t v) { nodes_[v].alive = false; }
    // Node v stops as a process does on SIGSTOP: it computes nothing and answers nothing
    // (its heartbeats say it is dead) until it goes on.
    void pause(std::size_t v, bool paused) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            nodes_[v].paused = paused;
        }
        changed_.notify_all();
    }
    // What node v says its tick in progress waits for (node_simulation::waiting).
    void wait_on(std::size_t v, json what) {
        std::lock_guard<std::mutex> lock(mutex_);
        nodes_[v].waiting = std::move(what);
    }
    std::int64_t granted(std::size_t v) {
        std::lock_guard<std::mutex> lock(mutex_);
        return nodes_[v].granted;
    }
    std::vector<json> inputs(std::size_t v) {
        std::lock_guard<std::mutex> lock(mutex_);
        return nodes_[v].inputs;
    }

    std::vector<std::string> hashes;

private:
    struct node {
        std::vector<model::neuron_index> outputs;
        std::int64_t granted = -1, completed = -1;
        std::atomic<bool> alive{true};
        bool paused = false;
        std::vector<json> inputs;
        json waiting;
    };

    // One tick of one live node at a time, as long as any is granted more.
    void compute() {
        std::unique_lock<std::mutex> lock(mutex_);
        while (true) {
            changed_.wait_for(lock, std::chrono::milliseconds(1), [&] { return stop_ || (run_ && anything_granted()); });
            if (stop_) return;
            for (std::size_t v = 0; v < nodes_.size() && run_; ++v) {
                auto& n = nodes_[v];
                if (!n.alive || n.paused || n.completed >= n.granted) continue;
                const auto tick = ++n.completed;
                json values = json::array();
                for (auto i : n.outputs) values.push_back(static_cast<float>(tick * 1000 + i));
                const json report{{"node", plan_.doc.clu->nodes[v].id}, {"hash", hashes[v]},
                                  {"ticks", json::array({json::array({tick, values})})},
                                  {"sent", tick}, {"dropped", 0}, {"missing", 0}};
                lead_run* run = run_;
                lock.unlock();
                run->on_report(protocol::decode_tick_report(report));
                lock.lock();
            }
        }
    }
    bool anything_granted() const {
        for (const auto& n : nodes_)
            if (n.alive && !n.paused && n.completed < n.granted) return true;
        return false;
    }

    const plan::network_plan& plan_;
    std::vector<node> nodes_;
    std::mutex mutex_;
    std::condition_variable changed_;
    lead_run* run_ = nullptr;
    bool stop_ = false;
    std::thread worker_;
};

// The XOR example, its <run> settings changed by `adjust`.
plan::network_plan xor_plan(const std::function<void(model::run_settings&)>& adjust = {}) {
    auto doc = protocol::load_document(std::string(DNNC_SOURCE_DIR) + "/examples/xor/xor.xml");
    if (adjust) {
        if (!doc.run) doc.run.emplace();
        adjust(*doc.run);
    }
    return plan::plan_network(std::move(doc));
}

using test::temp_folder;

// A lead's run of the XOR example over fake nodes.
struct xor_run {
    explicit xor_run(std::size_t output_memory = std::size_t{1} << 20, const std::function<void(model::run_settings&)>& adjust = {})
        : plan(xor_plan(adjust)), run{plan, topo, nodes.links(), nodes.hashes, 0, {output_memory, (state.path / "checkpoints").string()}} {
        nodes.attach(run);
    }
    ~xor_run() { nodes.stop(); }  // before the run goes
    temp_folder state{"lead-run"};
    plan::network_plan plan;
    plan::topology topo{*plan.doc.clu};
    fake_nodes nodes{plan};
    lead_run run;
};

std::set<std::string> files_in(const std::filesystem::path& dir) {
    std::set<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(dir)) files.insert(e.path().filename().string());
    return files;
}

// Waits until the run's progress satisfies `done` (or 10 s pass).
json wait_for(lead_run& run, const std::function<bool(const json&)>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    json p = command(run, {{"command", "progress"}});
    while (!done(p) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        p = command(run, {{"command", "progress"}});
    }
    return p;
}

}  // namespace

TEST_CASE("step N grants N ticks and assembles every node's outputs into rows") {
    xor_run x;
    auto& [state, plan, topo, nodes, run] = x;
    command(run, {{"command", "step"}, {"ticks", 5}});
    const auto p = wait_for(run, [](const json& q) { return q["state"] == "frozen"; });
    CHECK(p["completed"] == 4);
    CHECK(p["signals_sent"] == 4 * 2);  // each node's count, summed
    const auto out = run.output({{"from", 0}});
    REQUIRE(out["rows"].size() == 5);
    const auto y = *plan.net.find("out");
    for (std::int64_t t = 0; t < 5; ++t) {
        CHECK(out["rows"][t][0] == t);
        CHECK(out["rows"][t][1].get<float>() == static_cast<float>(t * 1000 + y));
    }
    // Another step goes on from there; nobody is granted past it.
    command(run, {{"command", "step"}, {"ticks", 3}});
    CHECK(wait_for(run, [](const json& q) { return q["state"] == "frozen"; })["completed"] == 7);
    CHECK(nodes.granted(0) == 7);
    CHECK(nodes.granted(1) == 7);
}

TEST_CASE("tick counts and input rows beyond their limits are refused and leave the lead frozen, never stepping") {
    xor_run x;
    auto& run = x.run;
    // 2^63 - 1 once made the target wrap below the completed tick: "stepping" for ever.
    for (const json& ticks : {json(std::numeric_limits<std::int64_t>::max()), json(dnnc::model::max_tick_count + 1),
                              json(std::numeric_limits<std::uint64_t>::max()), json(1e30), json(2.5), json(0), json(-1),
                              json("5")})
        CHECK_THROWS_AS(command(run, {{"command", "step"}, {"ticks", ticks}}), usage_error);
    for (const json& every : {json(-1), json(dnnc::model::max_tick_count + 1), json(1e300), json("4")})
        CHECK_THROWS_AS(command(run, {{"command", "checkpoint"}, {"every", every}}), usage_error);
    CHECK_THROWS_AS(command(run, {{"command", "checkpoint"}, {"every", 4}, {"keep", 0}}), usage_error);
    CHECK_THROWS_AS(command(run, {{"command", "checkpoint"}, {"every", 4}, {"keep", std::int64_t{1} << 40}}), usage_error);
    // Input rows' ticks and values alike.
    for (const json& row : {json::array({std::numeric_limits<std::int64_t>::max(), "x", 1.0}), json::array({1e30, "x", 1.0}),
                            json::array({3, "x", 1e300}), json::array({3, "x", "1"}), json::array({3, "x", 1.0, 0.5})})
        CHECK_THROWS_AS(command(run, {{"command", "input"}, {"rows", json::array({row})}}), usage_error);
    CHECK(command(run, {{"command", "progress"}})["state"] != "stepping");
    // The largest step is taken, and the lead can still be frozen.
    command(run, {{"command", "step"}, {"ticks", dnnc::model::max_tick_count}});
    CHECK(command(run, {{"command", "progress"}})["target"] == dnnc::model::max_tick_count - 1);
    command(run, {{"command", "freeze"}});
    CHECK(command(run, {{"command", "progress"}})["state"] == "frozen");
}

TEST_CASE("a free-running clock stops at one tick for every node on freeze") {
    xor_run x;
    auto& [state, plan, topo, nodes, run] = x;
    command(run, {{"command", "start"}});
    CHECK_THROWS_AS(command(run, {{"command", "step"}, {"ticks", 1}}), usage_error);
    wait_for(run, [](const json& q) { return q["completed"].get<std::int64_t>() >= 50; });
    const auto frozen = command(run, {{"command", "freeze"}});
    CHECK(frozen["state"] == "frozen");
    const auto tick = frozen["tick"].get<std::int64_t>();
    CHECK(nodes.granted(0) == tick);
    CHECK(nodes.granted(1) == tick);
    CHECK(run.paused());
    CHECK(run.next_tick() == tick + 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(command(run, {{"command", "progress"}})["completed"] == tick);  // nothing moved
    // Inputs go to the node of each target neuron, for ticks still to come.
    CHECK_THROWS_AS(command(run, {{"command", "input"}, {"rows", json::array({json::array({tick, "x", 1.0})})}}), usage_error);
    command(run, {{"command", "input"}, {"rows", json::array({json::array({tick + 1, "x", 1.0})})}});
    const auto a = *plan.net.find("a"), b = *plan.net.find("b");
    std::size_t delivered = nodes.inputs(0).size() + nodes.inputs(1).size();
    CHECK(delivered == 2);
    for (std::size_t v = 0; v < 2; ++v)
        for (const auto& r : nodes.inputs(v)) {
            const auto i = r[0].get<model::neuron_index>();
            CHECK((i == a || i == b));
            CHECK(plan.node_of_neuron[i] == v);
        }
}

TEST_CASE("checkpoints stop the clock at every multiple, keep the newest, and the run goes on") {
    xor_run x;
    auto& run = x.run;
    command(run, {{"command", "checkpoint"}, {"every", 4}, {"keep", 2}, {"dir", "mine"}});
    command(run, {{"command", "start"}});
    wait_for(run, [](const json& q) { return q["completed"].get<std::int64_t>() >= 13; });
    command(run, {{"command", "freeze"}});
    const auto dir = x.state.path / "checkpoints" / "mine";
    const auto files = files_in(dir);
    const auto last = run.last_checkpoint();
    REQUIRE(files.size() == 2);
    CHECK(std::filesystem::path(last).parent_path() == dir);
    // The newest two multiples of 4, each written while every node had stopped just before
    // it: ticks past a multiple are granted only once its checkpoint is written.
    const auto name = std::filesystem::path(last).stem().string();
    const auto newest = std::stoll(name.substr(name.find('-') + 1));
    CHECK(newest % 4 == 0);
    CHECK(newest >= 12);
    CHECK(newest <= run.next_tick());
    CHECK(files == std::set<std::string>{"checkpoint-" + std::to_string(newest - 4) + ".dnncs",
                                         "checkpoint-" + std::to_string(newest) + ".dnncs"});
    std::ifstream in(last);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(text == "state before tick " + std::to_string(newest));
}

TEST_CASE("checkpoints are written when the clock is driven by step") {
    xor_run x;
    auto& run = x.run;
    command(run, {{"command", "checkpoint"}, {"every", 4}, {"keep", 5}});
    command(run, {{"command", "step"}, {"ticks", 10}});
    wait_for(run, [](const json& q) { return q["state"] == "frozen"; });
    command(run, {{"command", "step"}, {"ticks", 2}});  // ends on a multiple: its checkpoint is written
    wait_for(run, [](const json& q) { return q["state"] == "frozen"; });
    CHECK(run.next_tick() == 12);
    const auto default_dir = x.state.path / "checkpoints" / x.plan.net.name;
    CHECK(std::filesystem::path(run.last_checkpoint()).parent_path() == default_dir);
    // The step that ended on 12 holds its clock until the checkpoint is written.
    command(run, {{"command", "step"}, {"ticks", 1}});
    wait_for(run, [](const json& q) { return q["state"] == "frozen"; });
    CHECK(files_in(default_dir) == std::set<std::string>{"checkpoint-4.dnncs", "checkpoint-8.dnncs", "checkpoint-12.dnncs"});
}

TEST_CASE("a checkpoint folder outside the lead's state folder is refused") {
    xor_run x;
    for (const std::string dir : {"/tmp/elsewhere", "../elsewhere", "a/../../elsewhere", ""}) {
        INFO(dir);
        CHECK_THROWS_AS(command(x.run, {{"command", "checkpoint"}, {"every", 4}, {"dir", dir}}), usage_error);
    }
    CHECK(x.run.checkpoints().every == 0);
    const auto reply = command(x.run, {{"command", "checkpoint"}, {"every", 4}, {"dir", "a/b"}});
    CHECK(reply["dir"] == (x.state.path / "checkpoints" / "a" / "b").string());
}

TEST_CASE("the lead holds the newest output rows within its budget and says which it dropped") {
    // The XOR network has one output column: 64 bytes hold 16 rows.
    xor_run x(64);
    auto& run = x.run;
    command(run, {{"command", "step"}, {"ticks", 100}});
    wait_for(run, [](const json& q) { return q["state"] == "frozen"; });
    const auto reply = run.output({{"from", 0}});
    CHECK(reply["completed"] == 99);
    CHECK(reply["start"] == 0);
    CHECK(reply["first"] == 84);
    REQUIRE(reply["rows"].size() == 16);
    CHECK(reply["rows"][0][0] == 84);
    CHECK(reply["rows"][15][0] == 99);
}

TEST_CASE("a lockstep run with a dead node fails and says which node") {
    xor_run x;
    auto& [state, plan, topo, nodes, run] = x;
    command(run, {{"command", "step"}, {"ticks", 3}});
    wait_for(run, [](const json& q) { return q["state"] == "frozen"; });
    nodes.kill(1);
    try {
        command(run, {{"command", "step"}, {"ticks", 3}});
        FAIL("the step went on without node n1");
    } catch (const error& e) {
        CHECK_THAT(e.what(), Catch::Contains("node 'n1' stopped answering"));
    }
    const auto p = command(run, {{"command", "progress"}});
    CHECK(p["state"] == "failed");
    CHECK(p["completed"] == 2);
    // Reports of a network this run replaced (another config hash) are ignored.
    run.on_report(protocol::decode_tick_report({{"node", "n0"}, {"hash", "old"}, {"ticks", json::array({json::array({3, json::array()})})},
                   {"sent", 0}, {"dropped", 0}, {"missing", 0}}));
    CHECK(command(run, {{"command", "progress"}})["completed"] == 2);
}

TEST_CASE("a lockstep run fails, naming the link, when a node waits too long for signals its peer sent") {
    xor_run x;
    auto& [state, plan, topo, nodes, run] = x;
    command(run, {{"command", "step"}, {"ticks", 6}});
    wait_for(run, [](const json& q) { return q["state"] == "frozen"; });
    const auto from = topo.id(0), to = topo.id(1);
    // Waiting a while, or for a tick the peer has not computed yet: nothing is wrong.
    nodes.wait_on(1, {{"tick", 4}, {"ms", 500.0}, {"peers", {from}}});
    CHECK(command(run, {{"command", "progress"}})["state"] == "frozen");
    nodes.wait_on(1, {{"tick", 40}, {"ms", 60000.0}, {"peers", {from}}});
    CHECK(command(run, {{"command", "progress"}})["state"] == "frozen");
    // Longer than the heartbeat timeout for a tick the peer completed: the link broke.
    nodes.wait_on(1, {{"tick", 4}, {"ms", 60000.0}, {"peers", {from}}});
    const auto p = command(run, {{"command", "progress"}});
    CHECK(p["state"] == "failed");
    CHECK_THAT(p["error"].get<std::string>(), Catch::Contains("the link from '" + from + "' to '" + to + "' is broken"));
    CHECK_THROWS_AS(command(run, {{"command", "step"}, {"ticks", 1}}), error);
}

// The raster's sample (every k-th neuron of each recorded group, at most 50) is kept at every
// tick whether anyone watches or not, and only the newest max_peek_ticks ticks of it.
TEST_CASE("the lead keeps the raster sample's recent spikes unwatched, bounded by ticks and spikes") {
    const auto plan = plan::plan_network(protocol::parse_document(R"(<dnnc xmlns="urn:dnnc:1">
  <network name="raster">
    <population id="p" size="200" model="lif"/>
    <population id="q" size="30" model="lif"/>
    <record/>
  </network>
  <cluster lead="a"><node id="a" port="1"/></cluster>
</dnnc>)", "raster.xml"));
    const plan::topology topo{*plan.doc.clu};
    temp_folder state("lead-run");
    lead_run run{plan, topo, {}, {"h"}, 0, {std::size_t{1} << 20, (state.path / "checkpoints").string()}};
    json every_neuron = json::array();
    for (std::uint32_t i = 0; i < 230; ++i) every_neuron.push_back(i);
    std::int64_t tick = 0;
    const auto report = [&](const json& spiked, std::int64_t count) {
        for (const auto end = tick + count; tick < end; ++tick)
            run.on_report(protocol::decode_tick_report({{"node", "a"}, {"hash", "h"}, {"ticks", json::array({json::array({tick, json::array(), spiked})})},
                           {"sent", 0}, {"dropped", 0}, {"missing", 0}}));
    };
    // Every neuron spikes at every tick: the sample's 80 spikes a tick reach the bound on
    // spikes first.
    report(every_neuron, 3 * held_spikes::max_peek_ticks);
    auto reply = run.peek_spikes({{"from", 0}});  // the first read
    CHECK(reply["completed"] == tick - 1);
    REQUIRE(reply["groups"].size() == 2);
    CHECK(reply["groups"][0]["every"] == 4);  // 200 neurons: 50 of them
    CHECK(reply["groups"][0]["sampled"] == 50);
    CHECK(reply["groups"][1]["every"] == 1);  // 30: all
    CHECK(reply["groups"][1]["sampled"] == 30);
    const auto kept = static_cast<std::int64_t>(held_spikes::max_peek_spikes / 80);
    REQUIRE(reply["spikes"].size() == static_cast<std::size_t>(kept));
    CHECK(reply["spikes"].front()[0] == tick - kept);
    CHECK(reply["spikes"].back()[0] == tick - 1);
    std::vector<std::uint32_t> sample;
    for (std::uint32_t i = 0; i < 200; i += 4) sample.push_back(i);
    for (std::uint32_t i = 200; i < 230; ++i) sample.push_back(i);
    for (const auto& s : reply["spikes"]) CHECK(s[1].get<std::vector<std::uint32_t>>() == sample);
    CHECK(run.peek_spikes({{"from", tick - 10}})["spikes"].size() == 10);  // only the ticks asked for
    // The spikes held for clients are all still there, from the first tick: peeking drained
    // nothing.
    CHECK(run.spikes({{"from", 0}})["spikes"][0] == json::array({0, every_neuron}));

    // One sampled spike a tick, and one outside the sample: the bound on ticks.
    report(json::array({1, 4}), 3 * held_spikes::max_peek_ticks);
    reply = run.peek_spikes({{"from", 0}});
    REQUIRE(reply["spikes"].size() == static_cast<std::size_t>(held_spikes::max_peek_ticks));
    CHECK(reply["spikes"].front()[0] == tick - held_spikes::max_peek_ticks);
    CHECK(reply["spikes"].front()[1] == json::array({4}));
}

// Regression: the sample was every k-th neuron of a group by its size, so a group recorded
// in part (`<record neurons="r[0:100]"/>` of 4,000) showed 2 of its 100 neurons.
TEST_CASE("the raster samples a group's recorded neurons, not its size") {
    const auto plan = plan::plan_network(protocol::parse_document(R"(<dnnc xmlns="urn:dnnc:1">
  <network name="raster">
    <population id="r" size="4000" model="lif"/>
    <population id="s" size="20" model="lif"/>
    <record neurons="r[0:100] s[10:13]"/>
  </network>
  <cluster lead="a"><node id="a" port="1"/></cluster>
</dnnc>)", "raster.xml"));
    const plan::topology topo{*plan.doc.clu};
    temp_folder state("lead-run");
    lead_run run{plan, topo, {}, {"h"}, 0, {std::size_t{1} << 20, (state.path / "checkpoints").string()}};
    json recorded = json::array();
    for (std::uint32_t i = 0; i < 100; ++i) recorded.push_back(i);
    for (std::uint32_t i = 4010; i < 4013; ++i) recorded.push_back(i);
    run.on_report(protocol::decode_tick_report({{"node", "a"}, {"hash", "h"}, {"ticks", json::array({json::array({0, json::array(), recorded})})},
                   {"sent", 0}, {"dropped", 0}, {"missing", 0}}));
    const auto reply = run.peek_spikes({{"from", 0}});
    REQUIRE(reply["groups"].size() == 2);
    std::vector<std::uint32_t> even;
    for (std::uint32_t i = 0; i < 100; i += 2) even.push_back(i);
    CHECK(reply["groups"][0]["recorded"] == 100);
    CHECK(reply["groups"][0]["every"] == 2);
    CHECK(reply["groups"][0]["sample"].get<std::vector<std::uint32_t>>() == even);
    CHECK(reply["groups"][1]["sample"] == json::array({4010, 4011, 4012}));
    auto shown = even;
    shown.insert(shown.end(), {4010, 4011, 4012});
    REQUIRE(reply["spikes"].size() == 1);
    CHECK(reply["spikes"][0][1].get<std::vector<std::uint32_t>>() == shown);
}

TEST_CASE("a paced window run keeps its pace without a stopped node, and does not race when it goes on") {
    xor_run x(std::size_t{1} << 20, [](model::run_settings& r) {
        r.sync = model::sync_mode::window;
        r.tick_period_ms = 5;
    });
    auto& nodes = x.nodes;
    auto& run = x.run;
    using clock = std::chrono::steady_clock;
    // Ticks granted to node n0 over `span`, and how many the pace allows in the time it took.
    auto granted_over = [&](std::chrono::milliseconds span) {
        const auto before = nodes.granted(0);
        const auto start = clock::now();
        std::this_thread::sleep_for(span);
        const auto ticks = nodes.granted(0) - before;
        return std::pair{ticks, std::chrono::duration<double, std::milli>(clock::now() - start).count() / 5};
    };
    command(run, {{"command", "start"}});
    wait_for(run, [](const json& q) { return q["completed"].get<std::int64_t>() >= 10; });
    nodes.pause(1, true);
    const auto [while_stopped, paced] = granted_over(std::chrono::milliseconds(1000));
    CHECK(while_stopped >= paced / 2);  // a clock waiting on n1 would grant none
    CHECK(while_stopped <= paced + 22);  // it makes up for 100 ms of a loaded machine at most
    // The rows go on without it (its outputs read 0).
    const auto done = command(run, {{"command", "progress"}})["completed"].get<std::int64_t>();
    CHECK(wait_for(run, [&](const json& q) { return q["completed"].get<std::int64_t>() >= done + 20; })["completed"] >= done + 20);
    nodes.pause(1, false);
    const auto [after, paced_after] = granted_over(std::chrono::milliseconds(300));
    CHECK(after <= paced_after + 22);  // not the ticks it was stopped for, at once
    // It is granted the clock's tick again and catches up on its own.
    CHECK(wait_for(run, [&](const json&) { return nodes.granted(1) >= nodes.granted(0) - 2; })["state"] == "running");
    const auto frozen = command(run, {{"command", "freeze"}});
    CHECK(nodes.granted(0) == frozen["tick"]);
    CHECK(nodes.granted(1) == frozen["tick"]);
    CHECK(command(run, {{"command", "progress"}})["granted"] == frozen["tick"]);
}
