// dnnc-node --mpi under a real mpirun on this machine (--oversubscribe: more ranks than
// cores): the batch form gives dnnc run's outputs bit for bit on 1 to 4 ranks, with the
// cluster from the ranks or from the document, and a plastic network's spikes and learned
// weights on 2 to 4; bad input is one line and exit 2 on every
// rank; a rank killed mid-run ends the job with an error naming it.
#include "cluster_fixture.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <csignal>
#include <filesystem>
#include <future>
#include <regex>
#include <thread>

using namespace dnnc::test;
using json = nlohmann::json;

namespace {

// Root may run mpirun only when it says so (CI machines run tests as root).
const std::string mpirun = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 mpirun -np ";

std::size_t count_of(const std::string& text, const std::string& word) {
    std::size_t n = 0;
    for (auto at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
    return n;
}

const std::string network = R"(<dnnc xmlns="urn:dnnc:1">
  <network name="mpi">
    <population id="p" size="300" model="tanh"/>
    <projection from="p" to="p" kind="random" p="0.05" seed="5"/>
    <output id="y" neurons="p[0:4]"/>
  </network>
  <run probes="2"/>
</dnnc>
)";

}  // namespace

TEST_CASE("mpirun -np K dnnc-node --mpi --run gives dnnc run's outputs bit for bit on 1 to 4 ranks, over MPI and over TCP") {
    scratch_dir dir;
    const auto doc = dir.file("net.xml", network);
    const auto inputs = dir.file("in.csv", "tick,target,value\n0,p[3],1\n0,p[100],-1\n");
    const std::string job = " --mpi --run " + doc + " --ticks 400 --input " + inputs + " --output ";
    const auto straight = (dir.path / "straight.csv").string();
    REQUIRE(run_command(dnnc_binary() + " run " + doc + " --nodes 1 --ticks 400 --input " + inputs + " --output " + straight).exit_code == 0);
    for (const std::string transport : {"mpi", "tcp"})
        for (int ranks = 1; ranks <= 4; ++ranks) {
            const auto out = (dir.path / (transport + std::to_string(ranks) + ".csv")).string();
            const auto r = run_command(mpirun + std::to_string(ranks) + " " + node_binary() + " --transport " + transport + job + out +
                                       " --json");
            INFO(ranks << " ranks over " << transport << "\n" << r.err);
            REQUIRE(r.exit_code == 0);
            CHECK_THAT(r.out, Catch::Contains("\"nodes\""));
            CHECK(slurp(out) == slurp(straight));
        }
    // A <cluster> of 3 nodes: node i on rank i.
    const auto with_cluster = dir.file("cluster.xml", std::regex_replace(network, std::regex("  <run"),
                                                                         "  <cluster lead=\"a\"><node id=\"a\" port=\"1\"/><node id=\"b\" port=\"2\"/>"
                                                                         "<node id=\"c\" port=\"3\"/><link from=\"a\" to=\"b\"/>"
                                                                         "<link from=\"b\" to=\"c\"/></cluster>\n  <run"));
    const auto out = (dir.path / "mapped.csv").string();
    const auto r = run_command(mpirun + "3 " + node_binary() + " --mpi --run " + with_cluster + " --ticks 400 --input " + inputs +
                               " --output " + out);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("neurons per node: a "));
    CHECK(slurp(out) == slurp(straight));
}

// A spiking network whose packets carry only the neurons that spiked: sizes vary from tick
// to tick (a burst at the start, then a few), so several of the MPI sender's size classes
// are used.
const std::string sparse_network = R"(<dnnc xmlns="urn:dnnc:1">
  <network name="sparse">
    <population id="P" size="2000" model="lif" seed="42" tau-m="20" v-rest="-49" v-reset="-60" v-th="-50"
                refractory="50" tau-e="5" tau-i="10" v-init="-60" v-init-max="-50"/>
    <projection from="P[0:1600]" to="P" kind="random" p="0.04" weight="1.62" delay="1" seed="1"/>
    <projection from="P[1600:2000]" to="P" kind="random" p="0.04" weight="-9" delay="1" seed="2"/>
    <output id="raster" neurons="P[0:200]"/>
  </network>
  <run send="nonzero"/>
</dnnc>
)";

// Large dense packets (past Open MPI's eager limit, so a send ends only once the peer has
// received it) and a delay of 4 ticks, so nodes run up to 4 ticks ahead of each other.
const std::string lagging_network = R"(<dnnc xmlns="urn:dnnc:1">
  <network name="lag">
    <population id="p" size="4000" model="tanh"/>
    <projection from="p" to="p" kind="random" p="0.002" seed="5" delay="4"/>
    <output id="y" neurons="p[0:4]"/>
  </network>
  <run probes="2"/>
</dnnc>
)";

const std::string two_nodes = R"(<cluster lead="a"><node id="a" port="1"/><node id="b" port="2"/><link from="a" to="b"/></cluster>
  <run)";

TEST_CASE("sparse packets, large packets ahead of their peers and window mode over MPI give dnnc run's outputs bit for bit") {
    scratch_dir dir;
    const auto straight = (dir.path / "straight.csv").string(), over_mpi = (dir.path / "mpi.csv").string();
    for (const auto& text : {sparse_network, lagging_network}) {
        const auto doc = dir.file("net.xml", text);
        REQUIRE(run_command(dnnc_binary() + " run " + doc + " --nodes 1 --ticks 600 --output " + straight).exit_code == 0);
        for (const std::string ranks : {"2", "3"}) {
            const auto r = run_command(mpirun + ranks + " " + node_binary() + " --mpi --run " + doc + " --ticks 600 --output " +
                            over_mpi);
            INFO(text << ranks << " ranks\n" << r.err);
            REQUIRE(r.exit_code == 0);
            CHECK(slurp(over_mpi) == slurp(straight));
        }
    }
    // Window mode equals lockstep when no packet misses its window (a wide one here).
    const auto window = dir.file("window.xml", std::regex_replace(network, std::regex("<run"), "<run sync=\"window\" window-margin=\"500\""));
    const auto inputs = dir.file("in.csv", "tick,target,value\n0,p[3],1\n0,p[100],-1\n");
    REQUIRE(run_command(dnnc_binary() + " run " + window + " --nodes 1 --ticks 300 --input " + inputs + " --output " + straight).exit_code == 0);
    const auto r = run_command(mpirun + "2 " + node_binary() + " --mpi --run " + window + " --ticks 300 --input " + inputs +
                               " --output " + over_mpi + " --json");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto summary = json::parse(r.out);
    CHECK(summary["sync"] == "window");
    REQUIRE(summary["packets_missing"] == 0);
    CHECK(slurp(over_mpi) == slurp(straight));
}

TEST_CASE("a recurrent plastic network under mpirun gives dnnc run's spikes and learned weights bit for bit on 2 to 4 ranks") {
    // The stdp example: E->E under stdp_synapse and I->E under vogels_sprekeler_synapse, with
    // the weights also read every 1,000 ticks along the way.
    scratch_dir dir;
    const auto example = source_path("examples/stdp/stdp.xml");
    const auto path = [&](const std::string& name) { return (dir.path / name).string(); };
    const std::string files = " --ticks 2500 --weights-every 1000 --spikes ";
    const auto straight = run_command(dnnc_binary() + " run " + example + " --nodes 1" + files + path("s.csv") + " --weights " + path("w.csv"));
    INFO(straight.err);
    REQUIRE(straight.exit_code == 0);
    for (const auto& [transport, ranks] : {std::pair{"mpi", 2}, {"mpi", 3}, {"mpi", 4}, {"tcp", 3}}) {
        const auto name = transport + std::to_string(ranks);
        const auto r = run_command(mpirun + std::to_string(ranks) + " " + node_binary() + " --transport " + transport + " --mpi --run " +
                                   example + files + path(name + ".csv") + " --weights " + path("w" + name + ".csv"));
        INFO(ranks << " ranks over " << transport << "\n" << r.err);
        REQUIRE(r.exit_code == 0);
        CHECK_THAT(r.out, Catch::Contains("weights: " + path("w" + name + ".csv") + " (20000 synapses)"));
        CHECK(slurp(path(name + ".csv")) == slurp(path("s.csv")));
        CHECK(sorted_csv(slurp(path("w" + name + ".csv"))) == sorted_csv(slurp(path("w.csv"))));
        for (const std::string tick : {"-1000.csv", "-2000.csv"})
            CHECK(sorted_csv(slurp(path("w" + name + tick))) == sorted_csv(slurp(path("w" + tick))));
    }
}

TEST_CASE("signals over MPI allocate nothing per tick once warm") {
    scratch_dir dir;
    const std::string check = std::string(DNNC_BINARY_DIR) + "/tests/node_server/mpi_signals_check ";
    const auto dense = dir.file("dense.xml", std::regex_replace(network, std::regex("  <run"), "  " + two_nodes));
    const auto window =
        dir.file("window.xml", std::regex_replace(network, std::regex("  <run"), "  " + two_nodes + " sync=\"window\" window-margin=\"500\""));
    const auto sparse = dir.file("sparse.xml", std::regex_replace(sparse_network, std::regex("  <run"), "  " + two_nodes));
    const auto lagging = dir.file("lagging.xml", std::regex_replace(lagging_network, std::regex("  <run"), "  " + two_nodes));
    // Once warm, buffers grow only when more packets are in flight than ever before (a
    // peer further ahead) or a sparse packet is larger than any before: a handful of times
    // in 2,000 ticks, often none, a few dozen on a machine loaded enough for one rank to run
    // far ahead. The old transport allocated several times every tick.
    for (const auto& doc : {dense, window, sparse, lagging}) {
        const auto r = run_command(mpirun + "2 " + check + doc + " 200 2000 50");
        INFO(doc << "\n" << r.out << r.err);
        CHECK(r.exit_code == 0);
        CHECK(count_of(r.out, "allocations in the last 2000") == 2);
    }
}

TEST_CASE("bad input to an MPI job is one line and exit 2 on every rank") {
    scratch_dir dir;
    const auto doc = dir.file("net.xml", std::regex_replace(network, std::regex("  <run"),
                                                            "  <cluster lead=\"a\"><node id=\"a\" port=\"1\"/><node id=\"b\" port=\"2\"/>"
                                                            "<link from=\"a\" to=\"b\"/></cluster>\n  <run"));
    const auto node = node_binary();
    struct bad {
        std::string command, says;
    };
    for (const auto& b : std::vector<bad>{
             {mpirun + "3 " + node + " --mpi --run " + doc, "its <cluster> has 2 nodes but the job has 3 ranks"},
             {mpirun + "2 " + node + " --mpi --run " + (dir.path / "missing.xml").string(), "missing.xml"},
             {node + " --mpi --run " + doc, "not started by an MPI launcher"},
             {node + " --transport mpi", "--transport mpi needs --mpi"},
         }) {
        const auto r = run_command(b.command);
        INFO(b.command << "\n" << r.err);
        CHECK(r.exit_code == 2);
        CHECK(count_of(r.err, "dnnc-node: ") == 1);
        CHECK_THAT(r.err, Catch::Contains(b.says));
    }
}

TEST_CASE("a rank killed mid-run ends every rank of the job non-zero, the lost rank named") {
    scratch_dir dir;
    const auto doc = dir.file("long.xml", network);
    auto job = std::async(std::launch::async, [&] {
        return run_command(mpirun + "3 " + node_binary() + " --mpi --run " + doc + " --ticks 100000000");
    });
    // Rank 2's process: a dnnc-node of this document whose launcher calls it rank 2.
    int victim = 0;
    for (int i = 0; i < 200 && victim == 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
            const auto cmdline = slurp((entry.path() / "cmdline").string());
            if (cmdline.find("dnnc-node") == std::string::npos || cmdline.find(doc) == std::string::npos) continue;
            std::string env = slurp((entry.path() / "environ").string());
            if (env.find(std::string("OMPI_COMM_WORLD_RANK=2") + '\0') != std::string::npos)
                victim = std::stoi(entry.path().filename().string());
        }
    }
    REQUIRE(victim != 0);
    std::this_thread::sleep_for(std::chrono::seconds(2));  // well into the run
    REQUIRE(kill(victim, SIGKILL) == 0);
    REQUIRE(job.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
    const auto r = job.get();
    INFO(r.err);
    CHECK(r.exit_code != 0);
    CHECK_THAT(r.err, Catch::Contains("rank 2") || Catch::Contains("'r2'"));
}

TEST_CASE("SIGTERM to an MPI job's ranks, as Slurm stops a job, leaves a checkpoint that the requeued job continues to the same outputs") {
    scratch_dir dir;
    const auto doc = dir.file("net.xml", network);
    const auto inputs = dir.file("in.csv", "tick,target,value\n0,p[3],1\n0,p[100],-1\n190000,p[7],1\n");
    const std::string ticks = " --ticks 200000";
    const auto straight = (dir.path / "straight.csv").string();
    REQUIRE(run_command(dnnc_binary() + " run " + doc + " --nodes 1" + ticks + " --input " + inputs + " --output " + straight).exit_code == 0);
    // Slurm as a requeued job sees it: the same job id, a restart count (the Slurm path is
    // tested under mpirun with Slurm's variables; docs/mpi.md).
    const auto out = (dir.path / "out.csv").string();
    const std::string job = "XDG_STATE_HOME=" + dir.path.string() + " SLURM_JOB_ID=4242 " + mpirun + "3 " + node_binary() + " --mpi --run " +
                            doc + ticks + " --input " + inputs + " --output " + out;
    auto first = std::async(std::launch::async, [&] { return run_command(job); });
    // Stopped once the first rows are written: well into the run, far from its end.
    for (int i = 0; i < 400; ++i) {
        const auto written = slurp(out);
        if (std::count(written.begin(), written.end(), '\n') >= 2) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    // Slurm signals every task of the step at once. (SIGTERM to mpirun itself is Open MPI's
    // kill sequence, SIGCONT, 1 s, SIGTERM, 1 s, SIGKILL: no time to checkpoint; docs/mpi.md.)
    std::vector<int> ranks;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const auto cmdline = slurp((entry.path() / "cmdline").string());
        if (cmdline.rfind(node_binary(), 0) == 0 && cmdline.find(doc) != std::string::npos)
            ranks.push_back(std::stoi(entry.path().filename().string()));
    }
    REQUIRE(ranks.size() == 3);
    for (const int rank : ranks) REQUIRE(kill(rank, SIGTERM) == 0);
    const auto stopped = first.get();
    INFO(stopped.err);
    CHECK(stopped.exit_code != 0);
    REQUIRE_THAT(stopped.err, Catch::Contains("frozen and checkpointed"));
    CHECK(std::filesystem::exists(dir.path / "dnnc" / "checkpoints" / "job-4242"));

    const auto again = run_command("SLURM_RESTART_COUNT=1 " + job);
    INFO(again.err);
    REQUIRE(again.exit_code == 0);
    CHECK_THAT(again.err, Catch::Contains("continuing from"));
    CHECK(slurp(out) == slurp(straight));
}
