// Distributed runs through the command line on real local clusters: outputs equal the
// single-node reference bit for bit, freeze/resume loses no tick, a dead node stops a
// lockstep run with its name but not a window run, and bad inputs are located errors.
#include "cluster_fixture.hpp"
#include "../node_server/raw_session.hpp"
#include "dnnc/node_server/signal_inbox.hpp"
#include "dnnc/protocol/frame.hpp"
#include "dnnc/protocol/signal_codec.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <csignal>
#include <sstream>
#include <thread>

using namespace dnnc::test;
using nlohmann::json;

namespace {

std::string run_to_csv(const scratch_dir& dir, const std::string& doc, const std::string& args, const std::string& name) {
    const auto out = (dir.path / name).string();
    const auto r = run_command(dnnc_binary() + " run " + doc + " " + args + " --output " + out);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return slurp(out);
}

json progress(int port) {
    const auto r = run_command(dnnc_binary() + " status --json --lead 127.0.0.1:" + std::to_string(port));
    REQUIRE(r.exit_code == 0);
    return json::parse(r.out);
}

}  // namespace

TEST_CASE("dnnc run computes XOR on two nodes from an input CSV") {
    scratch_dir dir;
    const auto csv = run_to_csv(dir, source_path("examples/xor/xor.xml"),
                                "--nodes 2 --ticks 6 --input " + source_path("examples/xor/inputs.csv"), "xor.csv");
    CHECK(csv == "tick,out\n0,0\n1,0\n2,0\n3,1\n4,1\n5,0\n");
}

TEST_CASE("every example gives the same outputs on 1, 2, 3 and 7 nodes as on its own cluster") {
    scratch_dir dir;
    for (const auto& [example, ticks] : std::vector<std::pair<std::string, int>>{
             {"associative/associative.xml", 40}, {"tree7/tree7.xml", 30}, {"cuba/cuba.xml", 300},
             {"brunel/brunel_small.xml", 300}}) {
        INFO(example);
        const auto doc = source_path("examples/" + example);
        const std::string args = "--ticks " + std::to_string(ticks);
        const auto reference = run_to_csv(dir, doc, args + " --nodes 1", "ref.csv");
        CHECK(std::count(reference.begin(), reference.end(), '\n') == ticks + 1);
        // The example's own cluster, moved to free ports so that tests can run side by side.
        std::string text = slurp(doc);
        std::string moved;
        std::size_t at = 0, found;
        while ((found = text.find("port=\"", at)) != std::string::npos) {
            moved += text.substr(at, found - at) + "port=\"" + std::to_string(free_port()) + "\"";
            at = text.find('"', found + 6) + 1;
        }
        moved += text.substr(at);
        const auto own = dir.file("own.xml", moved);
        CHECK(run_to_csv(dir, own, args, "own.csv") == reference);
        for (int nodes : {2, 3, 7}) {
            INFO(nodes << " nodes");
            CHECK(run_to_csv(dir, doc, args + " --nodes " + std::to_string(nodes), "n.csv") == reference);
        }
    }
}

TEST_CASE("fixed out-degree, fixed total number and drawn weights and delays give the same outputs on 1, 2 and 3 nodes") {
    scratch_dir dir;
    const auto doc = source_path("tests/data/rules_and_distributions.xml");
    const auto reference = run_to_csv(dir, doc, "--ticks 300 --nodes 1", "ref.csv");
    CHECK(std::count(reference.begin(), reference.end(), '\n') == 301);
    // The network spikes: cells ",1" after the tick column.
    std::size_t spikes = 0;
    for (auto at = reference.find(",1"); at != std::string::npos; at = reference.find(",1", at + 1))
        spikes += at + 2 == reference.size() || reference[at + 2] == ',' || reference[at + 2] == '\n';
    CHECK(spikes > 20);
    for (int nodes : {2, 3}) {
        INFO(nodes << " nodes");
        CHECK(run_to_csv(dir, doc, "--ticks 300 --nodes " + std::to_string(nodes), "n.csv") == reference);
    }
}

TEST_CASE("dense layers run split over nodes and give the one-node outputs") {
    scratch_dir dir;
    const auto mlp = source_path("examples/mlp/mlp.xml");
    const std::string args = "--ticks 6 --input " + source_path("examples/mlp/images.csv");
    const auto one = run_to_csv(dir, mlp, args + " --nodes 1", "one.csv");
    CHECK(one.find("\n3,0.5,") == std::string::npos);  // the first image has reached the scores
    CHECK(run_to_csv(dir, mlp, args + " --nodes 2", "two.csv") == one);
    const auto mixed = source_path("examples/mixed/mixed.xml");
    const std::string mixed_args = "--ticks 300 --input " + source_path("examples/mixed/drive.csv");
    CHECK(run_to_csv(dir, mixed, mixed_args + " --nodes 3", "m3.csv") == run_to_csv(dir, mixed, mixed_args + " --nodes 1", "m1.csv"));
}

TEST_CASE("a batched run evaluates one pattern per lane, as unbatched runs of each would") {
    scratch_dir dir;
    const auto mlp = source_path("examples/mlp/mlp.xml");
    // Unbatched: the two images at ticks 0 and 1, their scores at ticks 3 and 4.
    const auto one = run_to_csv(dir, mlp, "--nodes 1 --ticks 5 --input " + source_path("examples/mlp/images.csv"), "one.csv");
    const std::string args = "--batch 2 --ticks 4 --input " + source_path("examples/mlp/images_batch.csv");
    const auto batched = run_to_csv(dir, mlp, args + " --nodes 1", "b1.csv");
    CHECK(run_to_csv(dir, mlp, args + " --nodes 2", "b2.csv") == batched);
    auto values_of = [](const std::string& csv, const std::string& prefix) {
        const auto at = csv.find("\n" + prefix);
        REQUIRE(at != std::string::npos);
        std::vector<float> values;
        std::stringstream line(csv.substr(at + 1 + prefix.size(), csv.find('\n', at + 1) - at - 1 - prefix.size()));
        for (std::string field; std::getline(line, field, ',');) values.push_back(std::stof(field));
        return values;
    };
    CHECK(batched.rfind("tick,lane,out[0],", 0) == 0);
    for (const auto& [lane, tick] : {std::pair<std::string, std::string>{"3,0,", "3,"}, {"3,1,", "4,"}}) {
        const auto got = values_of(batched, lane), expected = values_of(one, tick);
        REQUIRE(got.size() == 10);
        REQUIRE(expected.size() == 10);
        for (std::size_t k = 0; k < got.size(); ++k) CHECK(got[k] == Approx(expected[k]).epsilon(1e-5));
    }
    CHECK(values_of(batched, "3,0,") != values_of(batched, "3,1,"));
    // A lane the run does not have is refused.
    const auto bad = dir.file("lane.csv", "tick,target,value,lane\n0,image,1,2\n");
    const auto r = run_command(dnnc_binary() + " run " + mlp + " --nodes 1 --batch 2 --ticks 2 --input " + bad);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("lane.csv:2:1: lane 2 is out of range; the run has batch 2"));
    for (const char* batch : {"0", "5000", "x"}) {
        const auto b = run_command(dnnc_binary() + " run " + mlp + " --nodes 1 --ticks 2 --batch " + batch);
        CHECK(b.exit_code == 2);
        CHECK_THAT(b.err, Catch::Contains("--batch"));
    }
}

TEST_CASE("freeze during a run, then resume, loses no tick") {
    scratch_dir dir;
    std::vector<int> ports;
    const auto config = dir.file("f.xml", cluster_document({{"a"}, {"b"}, {"c"}},
                                                           {R"(<link from="a" to="b"/>)", R"(<link from="b" to="c"/>)"}, ports,
                                                           300, "  <run probes=\"2\" tick-period=\"2\"/>\n"));
    local_cluster_guard cluster(config);
    REQUIRE(cluster.up.exit_code == 0);
    const std::string lead = " --lead 127.0.0.1:" + std::to_string(ports[0]);
    REQUIRE(run_command(dnnc_binary() + " submit " + config + " --to 127.0.0.1:" + std::to_string(ports[0])).exit_code == 0);
    REQUIRE(run_command(dnnc_binary() + " start" + lead).exit_code == 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const auto frozen = run_command(dnnc_binary() + " freeze --json" + lead);
    INFO(frozen.err);
    REQUIRE(frozen.exit_code == 0);
    const auto at = json::parse(frozen.out)["tick"].get<int>();
    CHECK(at > 10);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CHECK(progress(ports[0])["tick"] == at);
    CHECK(progress(ports[0])["state"] == "frozen");
    REQUIRE(run_command(dnnc_binary() + " resume" + lead).exit_code == 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    REQUIRE(run_command(dnnc_binary() + " freeze" + lead).exit_code == 0);
    const auto stepped = run_command(dnnc_binary() + " step 25 --json" + lead);
    REQUIRE(stepped.exit_code == 0);
    const auto last = json::parse(stepped.out)["completed"].get<int>();
    const auto out = (dir.path / "out.csv").string();
    REQUIRE(run_command(dnnc_binary() + " output -o " + out + lead).exit_code == 0);
    const auto rows = slurp(out);
    CHECK(std::count(rows.begin(), rows.end(), '\n') == last + 2);
    // The same ticks straight through, on one node, give the same rows.
    const auto straight = run_to_csv(dir, config, "--nodes 1 --ticks " + std::to_string(last + 1), "straight.csv");
    CHECK(rows == straight);
}

TEST_CASE("a node killed mid-run stops a lockstep run with its name") {
    scratch_dir dir;
    std::vector<int> ports;
    const auto config =
        dir.file("k.xml", two_linked_nodes(ports, 200, "  <run probes=\"2\" heartbeat-timeout=\"300\" tick-period=\"1\"/>\n"));
    local_cluster_guard cluster(config);
    REQUIRE(cluster.up.exit_code == 0);
    const std::string lead = " --lead 127.0.0.1:" + std::to_string(ports[0]);
    REQUIRE(run_command(dnnc_binary() + " submit " + config + " --to 127.0.0.1:" + std::to_string(ports[0])).exit_code == 0);
    REQUIRE(run_command(dnnc_binary() + " start" + lead).exit_code == 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    REQUIRE(kill(pid_in(cluster.up.out, "b"), SIGKILL) == 0);
    // The clock may find b gone before the heartbeats have been silent long enough to call
    // it dead: wait for both.
    json s;
    for (int i = 0; i < 50 && !(s.contains("error") && !s["dead"].empty()); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        s = progress(ports[0]);
    }
    CHECK(s["state"] == "failed");
    CHECK_THAT(s["error"].get<std::string>(), Catch::Contains("node 'b'"));
    CHECK(s["dead"] == json::array({"b"}));
    const auto step = run_command(dnnc_binary() + " step 5" + lead);
    CHECK(step.exit_code == 1);
    CHECK_THAT(step.err, Catch::Contains("node 'b' stopped answering"));
}

TEST_CASE("signals of another epoch, or that do not fit, are dropped, the node and its run go on unchanged") {
    // Packets of an earlier installation (here forged, of every size, for the ticks to come)
    // must not stand in for the real ones; nor may a packet that does not fit stop a node.
    scratch_dir dir;
    std::vector<int> ports;
    const auto config = dir.file("e.xml", two_linked_nodes(ports, 60, "  <run probes=\"2\"/>\n"));
    const std::string secret = "epoch test secret";
    local_cluster_guard cluster(config, "--secret-file " + dir.file("secret", secret));
    REQUIRE(cluster.up.exit_code == 0);
    const std::string lead = " --lead 127.0.0.1:" + std::to_string(ports[0]);
    REQUIRE(run_command(dnnc_binary() + " submit " + config + " --to 127.0.0.1:" + std::to_string(ports[0])).exit_code == 0);
    REQUIRE(run_command(dnnc_binary() + " step 10" + lead).exit_code == 0);
    const auto epoch = std::stoull(progress(ports[0])["epoch"].get<std::string>());

    // Authentic frames (the forger has the secret) on a link of its own.
    raw_session link("127.0.0.1", static_cast<std::uint16_t>(ports[1]), secret);
    auto frame = [&](dnnc::protocol::message_type type, const std::string& payload) { return link.frame(type, payload); };
    std::string bytes = frame(dnnc::protocol::message_type::signal_link, dnnc::node_server::signal_link_identity{"forger", epoch, 1}.encode());
    auto packet = [&](std::uint64_t e, std::int64_t tick, std::vector<float> values) {
        bytes += frame(dnnc::protocol::message_type::signals,
                       dnnc::protocol::encode_signals({"a", e, tick, true, std::move(values), {}}));
    };
    for (std::int64_t tick = 10; tick < 14; ++tick)
        for (std::size_t size = 0; size <= 60; ++size) packet(epoch + 1, tick, std::vector<float>(size, 50.0f));
    // Of this epoch but too long, or with a position out of range: whichever tick the node
    // reads them at, one is due next.
    for (std::int64_t tick = 9; tick < 14; ++tick) {
        packet(epoch, tick, std::vector<float>(1000, 1.0f));
        bytes += frame(dnnc::protocol::message_type::signals,
                       dnnc::protocol::encode_signals({"a", epoch, tick, false, {}, {{1000000, 1.0f}}}));
    }
    link.write(bytes, bytes.size());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));

    const auto stepped = run_command(dnnc_binary() + " step 20" + lead);
    INFO(stepped.err);
    REQUIRE(stepped.exit_code == 0);
    const auto out = (dir.path / "out.csv").string();
    REQUIRE(run_command(dnnc_binary() + " output -o " + out + lead).exit_code == 0);
    CHECK(slurp(out) == run_to_csv(dir, config, "--nodes 1 --ticks 30", "straight.csv"));
}

TEST_CASE("window mode carries on without a dead node, its inputs reading 0") {
    scratch_dir dir;
    std::vector<int> ports;
    const auto config =
        dir.file("w.xml", two_linked_nodes(ports, 200, "  <run sync=\"window\" probes=\"2\" heartbeat-timeout=\"300\"/>\n"));
    local_cluster_guard cluster(config);
    REQUIRE(cluster.up.exit_code == 0);
    const std::string lead = " --lead 127.0.0.1:" + std::to_string(ports[0]);
    REQUIRE(run_command(dnnc_binary() + " submit " + config + " --to 127.0.0.1:" + std::to_string(ports[0])).exit_code == 0);
    REQUIRE(run_command(dnnc_binary() + " step 50" + lead).exit_code == 0);
    REQUIRE(kill(pid_in(cluster.up.out, "b"), SIGKILL) == 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    const auto step = run_command(dnnc_binary() + " step 50 --json" + lead);
    INFO(step.err);
    REQUIRE(step.exit_code == 0);
    const auto p = json::parse(step.out);
    CHECK(p["completed"].get<int>() >= 99);
    CHECK(p["packets_missing"].get<int>() > 0);
    const auto s = progress(ports[0]);
    CHECK(s["dead"] == json::array({"b"}));
}

TEST_CASE("a paced window run keeps its pace while a node is stopped, does not race when it goes on, and status counts the lost packets per link") {
    scratch_dir dir;
    std::vector<int> ports;
    const auto config = dir.file(
        "p.xml", two_linked_nodes(ports, 200, "  <run sync=\"window\" probes=\"2\" tick-period=\"1\" heartbeat-timeout=\"500\"/>\n"));
    local_cluster_guard cluster(config);
    REQUIRE(cluster.up.exit_code == 0);
    const std::string lead = " --lead 127.0.0.1:" + std::to_string(ports[0]);
    REQUIRE(run_command(dnnc_binary() + " submit " + config + " --to 127.0.0.1:" + std::to_string(ports[0])).exit_code == 0);
    REQUIRE(run_command(dnnc_binary() + " start" + lead).exit_code == 0);
    // Over about `ms` milliseconds: the ticks the clock granted, the ticks completed, and the
    // milliseconds it took.
    struct span {
        double granted, completed, ms;
    };
    auto measure = [&](int ms) {
        const auto start = std::chrono::steady_clock::now();
        const auto first = progress(ports[0]);
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        const auto last = progress(ports[0]);
        return span{last["granted"].get<double>() - first["granted"].get<double>(),
                    last["tick"].get<double>() - first["tick"].get<double>(),
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count()};
    };
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const int b = pid_in(cluster.up.out, "b");
    REQUIRE(kill(b, SIGSTOP) == 0);
    continued_at_exit resume{b};
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // b is reported dead after 500 ms
    CHECK(progress(ports[0])["dead"] == json::array({"b"}));
    // The clock keeps its pace of a tick per ms (a clock that waited for b granted none), and
    // a goes on without b, as fast as this machine lets it (each of its ticks waits out a
    // wait window for b's packets).
    const auto stopped = measure(1500);
    CHECK(stopped.granted >= 0.5 * stopped.ms);
    CHECK(stopped.granted <= 1.1 * stopped.ms + 120);
    CHECK(stopped.completed >= 50);
    REQUIRE(kill(b, SIGCONT) == 0);
    // The clock does not grant the ticks it was held up for at once (2,500 here: it makes up
    // for 100 ms at most); the nodes compute what they lag behind it as fast as they can.
    const auto after = measure(1000);
    CHECK(after.granted <= 1.1 * after.ms + 120);
    CHECK(after.granted >= 0.5 * after.ms);
    // b is back, granted the clock's tick; a counted the packets b's ticks lacked while it was
    // stopped, and those b sent for them on its way back came late.
    json s = progress(ports[0]);
    for (int i = 0; i < 50 && !(s["dead"].empty() && s["links"][0]["packets_late"].value("b", 0) > 0); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        s = progress(ports[0]);
    }
    CHECK(s["dead"].empty());
    CHECK(s["sync"] == "window");
    CHECK(s["tick"].get<std::int64_t>() <= s["granted"].get<std::int64_t>());
    const auto& link = s["links"][0];
    CHECK(link["packets_missing"]["b"].get<int>() > 0);
    CHECK(link["packets_late"]["b"].get<int>() > 0);
    CHECK(link["packets_late"].contains("a"));
    const auto text = run_command(dnnc_binary() + " status" + lead);
    REQUIRE(text.exit_code == 0);
    CHECK_THAT(text.out, Catch::Contains("packets late") && Catch::Contains("packets missing") && Catch::Contains("b>a:"));
    REQUIRE(run_command(dnnc_binary() + " freeze" + lead).exit_code == 0);
}

TEST_CASE("window mode with injected link delays completes and reports what it dropped") {
    scratch_dir dir;
    std::vector<int> ports;
    const auto config = dir.file(
        "d.xml", cluster_document({{"a"}, {"b"}, {"c"}},
                                  {R"(<link from="a" to="b" emulate-delay="3"/>)", R"(<link from="b" to="c" emulate-delay="1"/>)"},
                                  ports, 150, "  <run sync=\"window\" probes=\"4\" window-factor=\"1\" window-margin=\"0\"/>\n"));
    const auto r = run_command(dnnc_binary() + " run " + config + " --ticks 100 --json");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto summary = json::parse(r.out);
    CHECK(summary["ticks"] == 100);
    CHECK(summary["sync"] == "window");
    CHECK(summary.contains("signals_dropped"));
    CHECK(summary["signals_dropped"].get<long>() >= 0);
    CHECK(summary["signals_sent"].get<long>() > 0);
    // The run's time is the lead's, from its grant to the last row: within the whole command's.
    CHECK(summary["seconds"].get<double>() > 0);
    CHECK(summary["seconds"].get<double>() < summary["total_seconds"].get<double>());
}

TEST_CASE("a malformed input CSV is a located error with exit code 2, an unknown target is refused") {
    scratch_dir dir;
    const auto bad = dir.file("bad.csv", "tick,target,value\n0,a,1\nx,b,2\n");
    const auto r = run_command(dnnc_binary() + " run " + source_path("examples/xor/xor.xml") + " --nodes 2 --ticks 3 --input " + bad);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("bad.csv:3:1: tick 'x'"));
    const auto unknown = dir.file("unknown.csv", "tick,target,value\n0,nobody,1\n");
    const auto u = run_command(dnnc_binary() + " run " + source_path("examples/xor/xor.xml") + " --nodes 2 --ticks 3 --input " + unknown);
    CHECK(u.exit_code != 0);
    CHECK_THAT(u.err, Catch::Contains("'nobody'"));
}

TEST_CASE("replacing a network while its clock runs does not hang") {
    scratch_dir dir;
    std::vector<int> ports;
    const auto config =
        dir.file("r.xml", two_linked_nodes(ports, 100, "  <run probes=\"2\" tick-period=\"1\" checkpoint-every=\"20\"/>\n"));
    local_cluster_guard cluster(config);
    REQUIRE(cluster.up.exit_code == 0);
    const std::string to = " --to 127.0.0.1:" + std::to_string(ports[0]);
    const std::string lead = " --lead 127.0.0.1:" + std::to_string(ports[0]);
    REQUIRE(run_command(dnnc_binary() + " submit " + config + to).exit_code == 0);
    REQUIRE(run_command(dnnc_binary() + " start" + lead).exit_code == 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    const auto again = run_command(dnnc_binary() + " submit --replace --timeout 30 " + config + to);
    INFO(again.err);
    CHECK(again.exit_code == 0);
    CHECK(run_command(dnnc_binary() + " step 5" + lead).exit_code == 0);
    CHECK(progress(ports[0])["tick"] == 4);
}

// `--input /dev/zero` once grew to gigabytes and ended in std::bad_alloc (exit 1).
TEST_CASE("an input file past its bound is a located error with exit code 2, device or sparse file") {
    scratch_dir dir;
    const std::string run = "timeout 120 " + dnnc_binary() + " run " + source_path("examples/xor/xor.xml") + " --nodes 2 --ticks 3 --input ";
    const auto zero = run_command(run + "/dev/zero");
    CHECK(zero.exit_code == 2);
    CHECK_THAT(zero.err, Catch::Contains("/dev/zero: the file is longer than 64 MiB") && Catch::Contains("byte 67108865"));
    const auto big = dir.file("big.csv", "tick,target,value\n");
    std::filesystem::resize_file(big, std::uint64_t{2} << 30);  // sparse
    const auto sparse = run_command(run + big);
    CHECK(sparse.exit_code == 2);
    CHECK_THAT(sparse.err, Catch::Contains(big + ": the file is longer than 64 MiB"));
}

// `--ticks 99999999999999999999` once ran for ever and `dnnc step 9223372036854775807`
// left the lead "stepping" for ever.
TEST_CASE("tick counts past their limits are usage errors wherever they enter the command line") {
    const std::string xor_doc = source_path("examples/xor/xor.xml");
    for (const std::string ticks : {"99999999999999999999", "9223372036854775807", "9007199254740993", "0", "-5"}) {
        INFO(ticks);
        const auto r = run_command("timeout 60 " + dnnc_binary() + " run " + xor_doc + " --nodes 1 --ticks " + ticks);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("--ticks"));
        // No node is reached: the count is refused first.
        const auto step = run_command("timeout 60 " + dnnc_binary() + " step " + ticks + " --lead 127.0.0.1:1");
        CHECK(step.exit_code == 2);
    }
    for (const std::string every : {"99999999999999999999", "9223372036854775807", "9007199254740993", "-1"}) {
        const auto r = run_command("timeout 60 " + dnnc_binary() + " checkpoint --every " + every + " --lead 127.0.0.1:1");
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("--every"));
    }
    const auto node = run_command("timeout 60 " + std::string(DNNC_BINARY_DIR) + "/tools/dnnc-node --mpi --run " + xor_doc +
                                  " --ticks 99999999999999999999");
    CHECK(node.exit_code == 2);
    CHECK_THAT(node.err, Catch::Contains("--ticks"));
}

namespace {
// A shell script's start: a long dnnc run of CUBA on 2 local nodes in the background (its
// output to `output`), waited for until both nodes run; then $run is its pid, $nodes the
// nodes' pids and $records the folder of its cluster's record and logs.
std::string long_run_on_two_nodes(const std::string& output) {
    return "\n" + dnnc_binary() + " run " + source_path("examples/cuba/cuba.xml") + " --nodes 2 --ticks 100000000 > " + output +
           R"sh( 2>&1 &
run=$!
nodes=""
for _ in $(seq 200); do
  nodes=$(pgrep -P "$run" -f dnnc-node | tr '\n' ' ')
  [ "$(echo $nodes | wc -w)" -ge 2 ] && break
  sleep 0.05
done
[ "$(echo $nodes | wc -w)" -ge 2 ] || { echo "the run did not start 2 nodes"; kill -9 $run; exit 1; }
first=${nodes%% *}
records=$(dirname "$(tr '\0' '\n' < /proc/$first/cmdline | sed -n '/^--secret-file$/{n;p}')")
case "$records" in */dnnc-cluster-*) ;; *) records="" ;; esac  # only the run's own record folder
)sh";
}
}  // namespace

TEST_CASE("a dnnc run that is killed leaves no node behind: its nodes stop once their starter has ended") {
    // SIGKILL gives dnnc run no chance to stop its cluster; each node was started with
    // --owner (its pid) and stops by itself once that process is gone.
    scratch_dir dir;
    const auto script = dir.file("killed.sh", long_run_on_two_nodes("/dev/null") + R"sh(
# The folders the killed run leaves (its cluster's record and logs, its documents) go too.
trap 'rm -rf "$records" /tmp/dnnc-run-$run' EXIT
sleep 1
kill -9 "$run"
for _ in $(seq 100); do
  alive=""
  for p in $nodes; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
  [ -z "$alive" ] && echo "stopped" && exit 0
  sleep 0.1
done
echo "still running after 10 s:$alive"
kill -9 $alive
exit 1
)sh");
    const auto r = run_command("sh " + script);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("stopped"));
}

TEST_CASE("a dnnc run interrupted with Ctrl-C removes its own folder and keeps only its nodes' logs") {
    scratch_dir dir;
    const auto script = dir.file("interrupted.sh", long_run_on_two_nodes("out.txt") + R"sh(
trap 'rm -rf "$records"; kill -9 $run $nodes 2>/dev/null' EXIT
[ -d /tmp/dnnc-run-$run ] || { echo "no run folder while it runs"; exit 1; }
sleep 1
kill -INT "$run"
wait "$run"
echo "exit $?"
[ -e /tmp/dnnc-run-$run ] && echo "run folder left" || echo "run folder removed"
[ -n "$records" ] && ls "$records" | grep -c '\.log$'
)sh");
    const auto r = run_command("cd " + dir.path.string() + " && sh " + script);
    INFO(r.out << r.err << slurp((dir.path / "out.txt").string()));
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("run folder removed"));
    CHECK_THAT(r.out, Catch::Contains("\n2\n"));  // the two nodes' logs, kept for the user
}
