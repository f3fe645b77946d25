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

}  // namespace

TEST_CASE("the Slurm example runs a network with one srun line and writes dnnc run's files") {
    if (run_command("command -v slurmctld").exit_code != 0) {
        WARN("SKIPPED: Debian's slurm-wlm is not installed (scripts/setup.sh installs it)");
        return;
    }
    scratch_dir dir;
    const auto doc = dir.file("net.xml", R"(<dnnc xmlns="urn:dnnc:1">
  <network name="slurm">
    <population id="p" size="300" model="lif"/>
    <projection from="p" to="p" kind="random" p="0.05" weight="0.5" seed="5"/>
    <poisson to="p" rate="8000" weight="0.4" seed="9"/>
    <output id="y" neurons="p[0:4]"/>
  </network>
  <run probes="2"/>
</dnnc>
)");
    const std::string straight = (dir.path / "straight").string();
    REQUIRE(run_command(dnnc_binary() + " run " + doc + " --nodes 1 --ticks 500 --output " + straight + ".csv --spikes " + straight +
                        "-spikes.csv")
                .exit_code == 0);
    one_node_slurm slurm(dir.path / "slurm");
    REQUIRE(slurm.ready());
    // The example as a user submits it, sized for this machine: 2 tasks of 1 core.
    const auto r = run_command("cd " + dir.path.string() + " && PATH=" + std::string(DNNC_BINARY_DIR) + "/tools:$PATH DOC=" + doc +
                               " TICKS=500 sbatch --wait --parsable --ntasks=2 --cpus-per-task=1 --mem-per-cpu=100M " +
                               source_path("examples/slurm/microcircuit.sbatch"));
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const auto job = r.out.substr(0, r.out.find_first_of("\n;"));
    INFO(slurp((dir.path / ("dnnc-microcircuit-" + job + ".log")).string()));
    CHECK(slurp((dir.path / ("microcircuit-" + job + ".csv")).string()) == slurp(straight + ".csv"));
    CHECK(slurp((dir.path / ("microcircuit-" + job + "-spikes.csv")).string()) == slurp(straight + "-spikes.csv"));
}
