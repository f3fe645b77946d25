// The Slurm example under a real Slurm on this machine: the test writes a slurm.conf for
// one node (no munge: auth/none), starts slurmctld and slurmd itself, submits
// examples/slurm/microcircuit.sbatch with a small network, and compares the files it
// writes with dnnc run's. Skipped, saying so, where Debian's slurm-wlm is not installed
// (the set-up installs it).
#include "cluster_fixture.hpp"

#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include <unistd.h>

using namespace dnnc::test;

namespace {

// slurmctld and slurmd of a one-node cluster in `dir`, stopped with it.
class one_node_slurm {
public:
    explicit one_node_slurm(const std::filesystem::path& dir) : dir_(dir) {
        char name[256] = {};
        gethostname(name, sizeof name - 1);
        for (const char* sub : {"state", "spool"}) std::filesystem::create_directories(dir / sub);
        std::ofstream(conf()) << "ClusterName=dnnctest\nSlurmctldHost=" << name << "\nSlurmctldPort=" << free_port()
                              << "\nSlurmdPort=" << free_port()
                              << "\nAuthType=auth/none\nCredType=cred/none\nSlurmUser=root\nSlurmdUser=root\n"
                                 "StateSaveLocation=" << (dir / "state").string() << "\nSlurmdSpoolDir=" << (dir / "spool").string()
                              << "\nSlurmctldPidFile=" << (dir / "slurmctld.pid").string()
                              << "\nSlurmdPidFile=" << (dir / "slurmd.pid").string()
                              << "\nProctrackType=proctrack/pgid\nTaskPlugin=task/none\nSelectType=select/cons_tres\n"
                                 "SelectTypeParameters=CR_CPU\nMpiDefault=pmix\nReturnToService=2\nSchedulerType=sched/builtin\n"
                                 "JobCompType=jobcomp/none\nAccountingStorageType=accounting_storage/none\n"
                                 "NodeName=" << name << " CPUs=" << std::thread::hardware_concurrency()
                              << " RealMemory=4096 State=UNKNOWN\nPartitionName=debug Nodes=" << name
                              << " Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE\n";
        setenv("SLURM_CONF", conf().c_str(), 1);
        run_command("slurmctld -D -f " + conf() + " > " + (dir / "slurmctld.log").string() + " 2>&1 &");
        run_command("slurmd -D -f " + conf() + " > " + (dir / "slurmd.log").string() + " 2>&1 &");
        for (int i = 0; i < 200 && !ready_; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            ready_ = run_command("sinfo -h -o %t").out.find("idle") != std::string::npos;
        }
    }
    ~one_node_slurm() {
        for (const char* daemon : {"slurmd.pid", "slurmctld.pid"}) {
            const auto pid = std::atoi(slurp((dir_ / daemon).string()).c_str());
            if (pid > 0) kill(pid, SIGTERM);
        }
        unsetenv("SLURM_CONF");
    }
    bool ready() const { return ready_; }
    std::string conf() const { return (dir_ / "slurm.conf").string(); }

private:
    std::filesystem::path dir_;
    bool ready_ = false;
};

const std::string network = R"(<dnnc xmlns="urn:dnnc:1">
  <network name="slurm">
    <population id="p" size="300" model="lif"/>
    <projection from="p" to="p" kind="random" p="0.05" weight="0.5" seed="5"/>
    <poisson to="p" rate="8000" weight="0.4" seed="9"/>
    <output id="y" neurons="p[0:4]"/>
  </network>
  <run probes="2"/>
</dnnc>
)";

bool slurm_missing() {
    if (run_command("command -v slurmctld").exit_code == 0) return false;
    WARN("SKIPPED: Debian's slurm-wlm is not installed (scripts/setup.sh installs it)");
    return true;
}

// The example as a user submits it, sized for this machine: 2 tasks of 1 core.
std::string sbatch(const scratch_dir& dir, const std::string& doc, int ticks, const std::string& flags) {
    // Checkpoints under the test's folder: each test's Slurm numbers its jobs from 1.
    return "cd " + dir.path.string() + " && XDG_STATE_HOME=" + dir.path.string() + " PATH=" + std::string(DNNC_BINARY_DIR) +
           "/tools:$PATH DOC=" + doc + " TICKS=" +
           std::to_string(ticks) + " sbatch --parsable --ntasks=2 --cpus-per-task=1 --mem-per-cpu=100M " + flags + " " +
           source_path("examples/slurm/microcircuit.sbatch");
}

}  // namespace

TEST_CASE("the Slurm example runs a network with one srun line and writes dnnc run's files") {
    if (slurm_missing()) return;
    scratch_dir dir;
    const auto doc = dir.file("net.xml", network);
    const std::string straight = (dir.path / "straight").string();
    REQUIRE(run_command(dnnc_binary() + " run " + doc + " --nodes 1 --ticks 500 --output " + straight + ".csv --spikes " + straight +
                        "-spikes.csv")
                .exit_code == 0);
    one_node_slurm slurm(dir.path / "slurm");
    REQUIRE(slurm.ready());
    const auto r = run_command(sbatch(dir, doc, 500, "--wait"));
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const auto job = r.out.substr(0, r.out.find_first_of("\n;"));
    INFO(slurp((dir.path / ("dnnc-microcircuit-" + job + ".log")).string()));
    CHECK(slurp((dir.path / ("microcircuit-" + job + ".csv")).string()) == slurp(straight + ".csv"));
    CHECK(slurp((dir.path / ("microcircuit-" + job + "-spikes.csv")).string()) == slurp(straight + "-spikes.csv"));
}

TEST_CASE("the Slurm example warned before its time limit checkpoints, requeues itself and ends with dnnc run's files") {
    if (slurm_missing()) return;
    scratch_dir dir;
    const auto doc = dir.file("net.xml", network);
    constexpr int ticks = 300000;  // several seconds on this machine
    const std::string straight = (dir.path / "straight").string();
    REQUIRE(run_command(dnnc_binary() + " run " + doc + " --nodes 1 --ticks " + std::to_string(ticks) + " --output " + straight +
                        ".csv --spikes " + straight + "-spikes.csv")
                .exit_code == 0);
    one_node_slurm slurm(dir.path / "slurm");
    REQUIRE(slurm.ready());
    const auto r = run_command(sbatch(dir, doc, ticks, ""));
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const auto job = r.out.substr(0, r.out.find_first_of("\n;"));
    const auto output = dir.path / ("microcircuit-" + job + ".csv");
    const auto log = (dir.path / ("dnnc-microcircuit-" + job + ".log")).string();
    // Once the run is well under way, the warning Slurm sends before a time limit
    // (--signal=B:USR1@60): to the batch shell only, which passes it on.
    for (int i = 0; i < 600 && !(std::filesystem::exists(output) && std::filesystem::file_size(output) > 200000); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE(std::filesystem::exists(output));
    REQUIRE(run_command("scancel --batch --signal=USR1 " + job).exit_code == 0);
    // Slurm holds a requeued job for about two minutes (its BeginTime): a user waits, the
    // test lets it start at once.
    std::string state;
    bool released = false;
    for (int i = 0; i < 1200 && state.find("JobState=COMPLETED") == std::string::npos; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        state = run_command("scontrol show job -o " + job).out;
        if (!released && state.find("Reason=BeginTime") != std::string::npos)
            released = run_command("scontrol update JobId=" + job + " StartTime=now").exit_code == 0;
    }
    INFO(state << slurp(log));
    REQUIRE_THAT(state, Catch::Contains("JobState=COMPLETED"));
    CHECK_THAT(state, Catch::Contains("Restarts=1"));
    CHECK_THAT(slurp(log), Catch::Contains("checkpoint"));
    CHECK(slurp(output.string()) == slurp(straight + ".csv"));
    CHECK(slurp((dir.path / ("microcircuit-" + job + "-spikes.csv")).string()) == slurp(straight + "-spikes.csv"));
}
