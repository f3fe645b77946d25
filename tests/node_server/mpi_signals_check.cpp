// Run under mpirun with 2 ranks: each rank runs its node of a 2-node document ("a" on
// rank 0, "b" on rank 1) over the MPI signal transport, and counts the C++ allocations
// its runner thread makes once warm. Prints them and exits 1 if there are more than
// MAX_ALLOCATIONS: signals over MPI take persistent requests and reused buffers, so only
// a buffer growing to a packet larger than any before allocates (dense packets never do).
//   mpi_signals_check DOC.xml WARM_TICKS MEASURED_TICKS MAX_ALLOCATIONS
#include "net/signal_transports.hpp"

#include "dnnc/plan/plan.hpp"
#include "dnnc/protocol/xml.hpp"
#include "dnnc/sim/runner.hpp"

#include <mpi.h>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <new>
#include <string>

namespace {
thread_local bool counting = false;
std::atomic<long> allocations{0};

void* allocate(std::size_t size) {
    if (counting) ++allocations;
    if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
    throw std::bad_alloc();
}
}  // namespace

void* operator new(std::size_t size) { return allocate(size); }
void* operator new[](std::size_t size) { return allocate(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

using namespace dnnc;

int main(int argc, char** argv) {
    if (argc != 5) {
        std::cerr << "usage: mpi_signals_check DOC.xml WARM_TICKS MEASURED_TICKS MAX_ALLOCATIONS\n";
        return 2;
    }
    int provided = 0, rank = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int failed = 0;
    {
        const auto plan = plan::plan_network(protocol::load_document(argv[1]));
        const plan::topology topo(*plan.doc.clu);
        const std::vector<double> latency(topo.link_count(), 0.25);
        const auto root = plan::build_configs(plan, topo, latency, plan::wait_windows(plan, topo, latency), 1);
        const auto& config = rank == 0 ? root : root.children.at(0);

        node_server::node_options::mpi_signals mpi{{{"a", 0}, {"b", 1}}, 0};
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        mpi.communicator = MPI_Comm_c2f(comm);
        {
            auto engine = sim::make_node_engine(config);
            node_server::mpi_transport transport(config, mpi, engine);
            sim::runner runner(engine, transport, {config.run.sync, config.run.send});
            const long warm = std::stol(argv[2]), measured = std::stol(argv[3]), most = std::stol(argv[4]);

            counting = true;  // the counter counts: here the vector and its memory
            const auto sample = std::make_unique<std::vector<int>>(1000);
            counting = false;
            if (allocations != 2) throw std::logic_error("the allocation counter does not count");
            allocations = 0;

            runner.grant(warm - 1);
            runner.run_granted();
            runner.grant(warm + measured - 1);
            counting = true;
            runner.run_granted();
            counting = false;
            const auto s = runner.stats();
            std::cout << "rank " << rank << ": " << s.ticks << " ticks, " << s.values_sent << " values sent, "
                      << allocations << " allocations in the last " << measured << std::endl;
            failed = allocations > most || s.ticks != warm + measured || s.values_sent == 0;
            MPI_Barrier(MPI_COMM_WORLD);  // both done before either transport cancels its receives
        }
        MPI_Comm_free(&comm);
    }
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return any;
}
