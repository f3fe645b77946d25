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
#include "dnnc/protocol/xml.hpp"
#include "dnnc/sim/engine.hpp"

#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace {

using clock_type = std::chrono::steady_clock;

dnnc::protocol::expanded_network network(const std::string& body) {
    const auto doc = dnnc::protocol::parse_document("<dnnc xmlns=\"urn:dnnc:1\"><network name=\"b\">" + body + "</network></dnnc>", "b.xml");
    return dnnc::protocol::expand(*doc.net, "b.xml");
}

// Mean seconds per tick over `ticks`, every source active (inputs on all of them, every
// lane its own).
double engine_tick_seconds(const dnnc::protocol::expanded_network& net, int sources, int ticks, std::uint32_t lanes = 1) {
    auto spec = dnnc::sim::whole_network(net);
    spec.batch = lanes;
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

int main() {
    torch::NoGradGuard no_grad;
    std::printf("LibTorch %s, %d threads\n", TORCH_VERSION, torch::get_num_threads());

    const int n = 4096;
    const auto dense = network("<population id=\"x\" size=\"4096\"/><population id=\"y\" size=\"4096\"/>"
                               "<projection from=\"x\" to=\"y\" kind=\"dense\" init=\"normal\" seed=\"1\"/>");
    const double engine_s = engine_tick_seconds(dense, n, 200);
    const auto w = torch::randn({n, n});
    const auto v = torch::randn({n});
    const double mv_s = mean_seconds([&] { (void)torch::mv(w, v); }, 200);
    std::printf("1. 4096 x 4096 per tick: dnnc %.3f ms, torch::mv %.3f ms, ratio %.2f (target <= 1.1: %s)\n", engine_s * 1e3,
                mv_s * 1e3, engine_s / mv_s, engine_s / mv_s <= 1.1 ? "met" : "MISSED");

    const int patterns = 256;
    const auto batch = torch::randn({n, patterns});
    const double mm_s = mean_seconds([&] { (void)torch::mm(w, batch); }, 10);
    const double batched_s = engine_tick_seconds(dense, n, 10, patterns);
    const double flops = 2.0 * n * n * patterns;
    std::printf("2. batch of %d: dnnc %.1f GFLOP/s (%.1f ms per tick), torch::mm %.1f GFLOP/s (%.1f ms), ratio %.2f; "
                "unbatched dnnc %.1f GFLOP/s\n",
                patterns, flops / batched_s / 1e9, batched_s * 1e3, flops / mm_s / 1e9, mm_s * 1e3, mm_s / batched_s,
                2.0 * n * n / engine_s / 1e9);

    for (const std::uint32_t lanes : {1u, 64u}) {
        const int ticks = lanes == 1 ? 100 : 5;
        std::printf("3. 2048 x 2048, %u lane(s), per tick: density, synapses, synapse path ms, dense path ms\n", lanes);
        const auto dense_small = network("<population id=\"x\" size=\"2048\"/><population id=\"y\" size=\"2048\"/>"
                                         "<projection from=\"x\" to=\"y\" kind=\"dense\" init=\"normal\" seed=\"1\"/>");
        const double dense_small_s = engine_tick_seconds(dense_small, 2048, ticks, lanes);
        double crossover = -1;
        for (double d : {0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0}) {
            const auto sparse = network("<population id=\"x\" size=\"2048\"/><population id=\"y\" size=\"2048\"/>"
                                        "<projection from=\"x\" to=\"y\" kind=\"random\" p=\"" + std::to_string(d) +
                                        "\" weight=\"0.01\" seed=\"2\"/>");
            const double sparse_s = engine_tick_seconds(sparse, 2048, ticks, lanes);
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
