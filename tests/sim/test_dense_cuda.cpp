// The dense path on CUDA equals the CPU dense path within 1e-4 relative. Built only when
// the LibTorch found by CMake has CUDA (docs/dense.md); skipped when no GPU is present.
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
    const auto net = protocol::expand(*doc.net, doc.file);
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
                worst = std::max(worst, std::abs(a - b) / std::max(1e-3, std::abs(a)));
            }
    }
    return worst;
}
}  // namespace

TEST_CASE("dense projections on CUDA match the CPU, one lane and batched") {
    if (!sim::query_backend().cuda_available) {
        WARN("no CUDA device: skipped");
        return;
    }
    for (std::uint32_t lanes : {1u, 16u}) {
        const double worst = worst_difference(lanes);
        INFO(lanes << " lanes: largest relative difference " << worst);
        CHECK(worst <= 1e-4);
    }
}
