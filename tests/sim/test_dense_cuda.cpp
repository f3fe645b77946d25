// The dense path on CUDA equals the CPU dense path within 1e-5 relative, outputs under 0.1
// within 1e-6, as test_dense.cpp holds the synapse path to the dense one: cuBLAS adds in
// another order than OpenBLAS, and a small output of larger terms (cancellation) differs by
// more than 1e-5 of itself. On the CPU alone, this network's batched and lane-by-lane products
// (two orders) differ by 2e-4 of outputs down to 1e-3, by 5e-6 with the floor at 0.1.
// Built only when the LibTorch found by CMake has CUDA (docs/dense.md); skipped when no GPU
// is present.
// The test's name says "cuda" so that `ctest -R cuda` selects it (scripts/cuda-check.sh).
#include "dnnc/protocol/xml.hpp"
#include "dnnc/sim/engine.hpp"
#include "dnnc/sim/torch_backend.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dnnc;

namespace {
// The MLP example on CPU and CUDA with `lanes` lanes, each its own input pattern: the
// largest relative difference of any output over 5 ticks.
double worst_difference(std::uint32_t lanes) {
    const auto doc = protocol::load_document(std::string(DNNC_SOURCE_DIR) + "/examples/mlp/mlp.xml");
    const auto net = model::expand(*doc.net, doc.file);
    auto cpu_spec = sim::whole_network(net);
    cpu_spec.batch = lanes;
    auto cuda_spec = cpu_spec;
    cuda_spec.device = "cuda";
    sim::engine cpu(cpu_spec), cuda(cuda_spec);
    for (sim::global_index i = 0; i < 784; ++i)
        for (std::uint32_t lane = 0; lane < lanes; ++lane) {
            const float x = static_cast<float>((i + lane) % 7) / 7.0f;
            cpu.add_input(i, 0, x, lane);
            cuda.add_input(i, 0, x, lane);
        }
    double worst = 0;
    for (int t = 0; t < 5; ++t) {
        cpu.compute();
        cuda.compute();
        for (std::size_t i = 0; i < net.neuron_count(); ++i)
            for (std::uint32_t lane = 0; lane < lanes; ++lane) {
                const double a = cpu.output(static_cast<sim::global_index>(i), lane);
                const double b = cuda.output(static_cast<sim::global_index>(i), lane);
                worst = std::max(worst, std::abs(a - b) / std::max(0.1, std::abs(a)));
            }
    }
    return worst;
}
}  // namespace

TEST_CASE("dense projections on device cuda match the CPU, one lane and batched") {
    if (!sim::query_backend().cuda_available) {
        WARN("no CUDA device: skipped");
        return;
    }
    for (std::uint32_t lanes : {1u, 16u}) {
        const double worst = worst_difference(lanes);
        INFO(lanes << " lanes: largest relative difference " << worst);
        CHECK(worst <= 1e-5);
    }
}
