// bench_dense: the dense path against plain LibTorch in the same run.
//  1. Per-tick time of a 4096 x 4096 dense projection in a dnnc engine (gather the source
//     outputs, one product, add into the targets, update 8,192 linear neurons) against a
//     bare torch::mv of the same shape. Target: <= 1.1x.
//  2. Batched throughput: the same projection in an engine with 256 lanes (one input
//     pattern each, <run batch="256">), in GFLOP/s per tick, against a bare torch::mm
//     4096 x 4096 x 256.
//  3. Where the dense path starts to beat the synapse path: a 2048 x 2048 projection with
//     connection density d as `random` synapses against the same as `dense`, with one lane
//     and with 64.
// Fair because both sides use the same LibTorch build, threads and float32 data, and the
// engine figure includes everything a tick costs beyond the product.
// With --device cuda the dense products run on the GPU (scripts/cuda-check.sh). The peers are
// then the same products on the GPU with the vector's copy in and the result's copy out, which
// a tick whose neurons live on the host needs, and, apart, the product alone on the device.
#include "dnnc/protocol/xml.hpp"
#include "dnnc/sim/engine.hpp"
#include "dnnc/sim/torch_backend.hpp"

#include <torch/cuda.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

using clock_type = std::chrono::steady_clock;

dnnc::model::expanded_network network(const std::string& body) {
    const auto doc = dnnc::protocol::parse_document("<dnnc xmlns=\"urn:dnnc:1\"><network name=\"b\">" + body + "</network></dnnc>", "b.xml");
    return dnnc::model::expand(*doc.net, "b.xml");
}

// Mean seconds per tick over `ticks`, every source active (inputs on all of them, every
// lane its own).
double engine_tick_seconds(const dnnc::model::expanded_network& net, int sources, int ticks, std::uint32_t lanes,
                           const std::string& device) {
    auto spec = dnnc::sim::whole_network(net);
    spec.batch = lanes;
    spec.device = device;
    dnnc::sim::engine e(spec);
    for (int t = 0; t <= ticks; ++t)
        for (int i = 0; i < sources; ++i)
            for (std::uint32_t lane = 0; lane < lanes; ++lane)
                e.add_input(i, t, 0.001f * static_cast<float>(((i + static_cast<int>(lane)) % 13) + 1), lane);
    e.compute();
    const auto start = clock_type::now();
    for (int t = 0; t < ticks; ++t) e.compute();
    return std::chrono::duration<double>(clock_type::now() - start).count() / ticks;
}

template <typename F>
double mean_seconds(F&& f, int repeats) {
    f();
    const auto start = clock_type::now();
    for (int r = 0; r < repeats; ++r) f();
    return std::chrono::duration<double>(clock_type::now() - start).count() / repeats;
}

}  // namespace

int main(int argc, char** argv) {
    std::string device = "cpu";
    if (argc == 3 && std::strcmp(argv[1], "--device") == 0 && (std::strcmp(argv[2], "cpu") == 0 || std::strcmp(argv[2], "cuda") == 0))
        device = argv[2];
    else if (argc != 1) {
        std::fprintf(stderr, "usage: bench_dense [--device cpu|cuda]\n");
        return 2;
    }
    const bool cuda = device == "cuda";
    if (cuda && !torch::cuda::is_available()) {
        std::fprintf(stderr, "bench_dense: --device cuda, but this LibTorch sees no CUDA device\n");
        return 2;
    }
    torch::NoGradGuard no_grad;
    const torch::Device on(cuda ? torch::kCUDA : torch::kCPU);
    // A product on the device with its input copied in and its result copied out (on the CPU,
    // just the product), and the product alone, finished.
    const auto with_copies = [&](const torch::Tensor& w, const torch::Tensor& host_input, auto product) {
        return [=] { (void)product(w, host_input.to(on)).to(torch::kCPU); };
    };
    const auto alone = [&](const torch::Tensor& w, const torch::Tensor& input, auto product) {
        return [=] {
            (void)product(w, input);
            if (cuda) torch::cuda::synchronize();
        };
    };
    const auto mv = [](const torch::Tensor& a, const torch::Tensor& b) { return torch::mv(a, b); };
    const auto mm = [](const torch::Tensor& a, const torch::Tensor& b) { return torch::mm(a, b); };
    const auto blas = dnnc::sim::query_backend().blas_core;
    std::printf("LibTorch %s, %d threads, device %s, BLAS %s\n", TORCH_VERSION, torch::get_num_threads(), device.c_str(),
                blas.empty() ? "not OpenBLAS" : ("OpenBLAS " + blas).c_str());

    const int n = 4096;
    const auto dense = network("<population id=\"x\" size=\"4096\"/><population id=\"y\" size=\"4096\"/>"
                               "<projection from=\"x\" to=\"y\" kind=\"dense\" init=\"normal\" seed=\"1\"/>");
    const double engine_s = engine_tick_seconds(dense, n, 200, 1, device);
    const auto w = torch::randn({n, n}).to(on);
    const auto v = torch::randn({n});
    const double mv_s = mean_seconds(with_copies(w, v, mv), 200);
    std::printf("1. 4096 x 4096 per tick: dnnc %.3f ms, torch::mv %.3f ms, ratio %.2f (target <= 1.1: %s)\n", engine_s * 1e3,
                mv_s * 1e3, engine_s / mv_s, engine_s / mv_s <= 1.1 ? "met" : "MISSED");
    if (cuda) std::printf("   torch::mv on the device alone: %.3f ms\n", mean_seconds(alone(w, v.to(on), mv), 200) * 1e3);

    const int patterns = 256;
    const auto batch = torch::randn({n, patterns});
    const double mm_s = mean_seconds(with_copies(w, batch, mm), 10);
    const double batched_s = engine_tick_seconds(dense, n, 10, patterns, device);
    const double flops = 2.0 * n * n * patterns;
    std::printf("2. batch of %d: dnnc %.1f GFLOP/s (%.1f ms per tick), torch::mm %.1f GFLOP/s (%.1f ms), ratio %.2f; "
                "unbatched dnnc %.1f GFLOP/s\n",
                patterns, flops / batched_s / 1e9, batched_s * 1e3, flops / mm_s / 1e9, mm_s * 1e3, mm_s / batched_s,
                2.0 * n * n / engine_s / 1e9);
    if (cuda) {
        const double alone_s = mean_seconds(alone(w, batch.to(on), mm), 10);
        std::printf("   torch::mm on the device alone: %.1f GFLOP/s (%.3f ms)\n", flops / alone_s / 1e9, alone_s * 1e3);
    }

    for (const std::uint32_t lanes : {1u, 64u}) {
        const int ticks = lanes == 1 ? 100 : 5;
        std::printf("3. 2048 x 2048, %u lane(s), per tick: density, synapses, synapse path ms, dense path ms\n", lanes);
        const auto dense_small = network("<population id=\"x\" size=\"2048\"/><population id=\"y\" size=\"2048\"/>"
                                         "<projection from=\"x\" to=\"y\" kind=\"dense\" init=\"normal\" seed=\"1\"/>");
        const double dense_small_s = engine_tick_seconds(dense_small, 2048, ticks, lanes, device);
        double crossover = -1;
        for (double d : {0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0}) {
            const auto sparse = network("<population id=\"x\" size=\"2048\"/><population id=\"y\" size=\"2048\"/>"
                                        "<projection from=\"x\" to=\"y\" kind=\"random\" p=\"" + std::to_string(d) +
                                        "\" weight=\"0.01\" seed=\"2\"/>");
            const double sparse_s = engine_tick_seconds(sparse, 2048, ticks, lanes, "cpu");
            std::printf("   %.3f %9zu %8.3f %8.3f\n", d, sparse.synapse_count(), sparse_s * 1e3, dense_small_s * 1e3);
            if (crossover < 0 && sparse_s > dense_small_s) crossover = d;
        }
        if (crossover > 0)
            std::printf("   the dense path is faster from density %.3f on\n", crossover);
        else
            std::printf("   the synapse path stayed faster up to density 1\n");
    }
    return 0;
}
