#pragma once
// dnnc-node --mpi: a dnnc cluster as one MPI job (mpirun -np K, srun), one node per rank.
// Only the bootstrap uses MPI: rank 0 draws the cluster secret and every rank gets it;
// every rank starts its node and the ranks gather each other's addresses and cores; rank 0
// is the lead. The cluster comes from the ranks (one node per rank, its capacity the cores
// it was given, every pair linked) unless the document has a <cluster> of exactly K nodes,
// whose node i is then rank i. Rank 0 then runs the document as `dnnc run` would (--run),
// or submits it and keeps the cluster up for dnnc commands (--serve); every rank exits
// with rank 0's outcome.
#include "dnnc/node_server/node.hpp"

#include <cstdint>
#include <string>

struct mpi_job {
    std::string run;        // --run DOC
    bool serve = false;     // --serve
    std::string serve_doc;  // the document --serve submits first, if any
    std::string lead_file;  // --serve: where the lead's address goes
    std::int64_t ticks = 1000;
    std::string input, output, spikes, weights;
    std::int64_t weights_every = 0;  // --weights-every; 0: the final weights only
    bool json = false;
    bool bind_given = false;  // --bind: every rank binds and is called there
    bool mpi_signals = false; // --transport mpi: signals between ranks over MPI, not TCP
};

// Whether an MPI launcher (mpirun, srun) started this process, and its rank as the
// launcher says before MPI starts (0 when it says none).
bool launched_by_mpi();
int launch_rank();

// This rank's part of the job; returns the process's exit code (0, 1, or 2 for bad input).
int run_mpi_job(dnnc::node_server::node_options options, const mpi_job& job);
