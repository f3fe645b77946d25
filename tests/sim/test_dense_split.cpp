// A dense projection split by rows over nodes gives every row the bits of the whole product,
// wherever the split falls and however many lanes run: the lockstep guarantee (DESIGN.md)
// whatever BLAS LibTorch runs on. OpenBLAS, unlike the reference BLAS, sums a row in an
// order that depends on the block of rows it is handed; the row grid of torch_module.cpp
// is what keeps the bits (docs/dense.md). On a GPU the same holds for cuBLAS (the case named
// "cuda", which skips without a device).
#include "dnnc/sim/runner.hpp"
#include "dnnc/sim/torch_backend.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <mutex>
#include <random>

using namespace dnnc;
using namespace dnnc::sim;

namespace {
// A dense projection from x (neurons [0, cols)) to h ([cols, cols + rows)).
struct projection {
    std::size_t cols, rows;
    model::expanded_network net;
};

projection make_projection(std::size_t cols, std::size_t rows) {
    const auto doc = protocol::parse_document(
        R"(<dnnc xmlns="urn:dnnc:1"><network name="d"><population id="x" size=")" + std::to_string(cols) +
            R"(" model="linear"/><population id="h" size=")" + std::to_string(rows) +
            R"(" model="linear"/><projection from="x" to="h" kind="dense" init="normal" seed="9"/></network></dnnc>)",
        "d.xml");
    return {cols, rows, model::expand(*doc.net, "d.xml")};
}

// 700 rows: two whole blocks of the CPU's grid (256 rows) and a partial one.
const projection& on_cpu() {
    static const projection p = make_projection(600, 700);
    return p;
}

// 9000 rows: two whole blocks of the CUDA grid (4096 rows) and a partial one.
const projection& on_cuda() {
    static const projection p = make_projection(100, 9000);
    return p;
}

float input(global_index i, std::uint32_t lane) {
    return static_cast<float>(std::sin(0.37 * static_cast<double>(i) + 1.3 * static_cast<double>(lane)) * 2.0);
}

// The outputs of h (every lane) at tick 1, the dense sums of tick 0's inputs.
std::vector<float> whole(const projection& p, std::uint32_t lanes, const std::string& device = "cpu") {
    auto spec = whole_network(p.net);
    spec.batch = lanes;
    spec.device = device;
    engine e(spec);
    for (global_index i = 0; i < static_cast<global_index>(p.cols); ++i)
        for (std::uint32_t lane = 0; lane < lanes; ++lane) e.add_input(i, 0, input(i, lane), lane);
    e.compute();
    e.compute();
    std::vector<float> out;
    for (std::size_t r = 0; r < p.rows; ++r)
        for (std::uint32_t lane = 0; lane < lanes; ++lane) out.push_back(e.output(static_cast<global_index>(p.cols + r), lane));
    return out;
}

std::vector<float> split(const projection& p, const std::vector<std::uint32_t>& node_of, std::size_t nodes,
                         std::uint32_t lanes, const std::string& device = "cpu") {
    auto specs = partition_specs(p.net, node_of, nodes);
    for (auto& s : specs) {
        s.batch = lanes;
        s.device = device;
    }
    local_exchange exchange(std::move(specs));
    std::vector<float> out(p.rows * lanes);
    std::mutex m;
    for (std::size_t n = 0; n < nodes; ++n)
        exchange.observe(n, [&](tick_t t, const engine& e) {
            if (t != 1) return;
            std::lock_guard<std::mutex> lock(m);
            for (const auto& s : e.spec().neurons)
                if (s.index >= static_cast<global_index>(p.cols))
                    for (std::uint32_t lane = 0; lane < lanes; ++lane)
                        out[(static_cast<std::size_t>(s.index) - p.cols) * lanes + lane] = e.output(s.index, lane);
        });
    for (global_index i = 0; i < static_cast<global_index>(p.cols); ++i)
        for (std::uint32_t lane = 0; lane < lanes; ++lane) exchange.add_input(i, 0, input(i, lane), lane);
    exchange.run_until(1);
    return out;
}

// Rows before `cut` on node 0 (with x), the rest on node 1.
std::vector<std::uint32_t> cut_at(const projection& p, std::size_t cut) {
    std::vector<std::uint32_t> node_of(p.cols + p.rows, 0);
    for (std::size_t r = cut; r < p.rows; ++r) node_of[p.cols + r] = 1;
    return node_of;
}

// Rows that differ in any bit of any lane.
std::size_t rows_differing(const projection& p, const std::vector<float>& a, const std::vector<float>& b,
                           std::uint32_t lanes) {
    std::size_t differ = 0;
    for (std::size_t r = 0; r < p.rows; ++r)
        differ += std::memcmp(a.data() + r * lanes, b.data() + r * lanes, lanes * sizeof(float)) != 0;
    return differ;
}
}  // namespace

TEST_CASE("dense rows split at any offset give the whole product's bits") {
    const auto& p = on_cpu();
    for (const std::uint32_t lanes : {1u, 3u, 64u}) {
        const auto expected = whole(p, lanes);
        for (const std::size_t cut : {1, 3, 4, 5, 17, 64, 100, 255, 256, 257, 333, 511, 512, 513, 650, 699}) {
            INFO("lanes " << lanes << ", rows split at " << cut);
            CHECK(rows_differing(p, split(p, cut_at(p, cut), 2, lanes), expected, lanes) == 0);
        }
    }
}

TEST_CASE("dense rows in several runs, or scattered, over three nodes give the whole product's bits") {
    const auto& p = on_cpu();
    for (const std::uint32_t lanes : {1u, 3u}) {
        const auto expected = whole(p, lanes);
        std::vector<std::uint32_t> runs(p.cols + p.rows, 0), scattered(p.cols + p.rows, 0);
        std::mt19937 gen(11);
        for (std::size_t r = 0; r < p.rows; ++r) {
            runs[p.cols + r] = static_cast<std::uint32_t>((r / 37) % 3);
            scattered[p.cols + r] = static_cast<std::uint32_t>(gen() % 3);
        }
        INFO("lanes " << lanes);
        CHECK(rows_differing(p, split(p, runs, 3, lanes), expected, lanes) == 0);
        CHECK(rows_differing(p, split(p, scattered, 3, lanes), expected, lanes) == 0);
    }
}

TEST_CASE("dense rows split over nodes on device cuda give the whole product's bits") {
    if (!query_backend().cuda_available) {
        WARN("no CUDA device: skipped");
        return;
    }
    const auto& p = on_cuda();
    for (const std::uint32_t lanes : {1u, 3u, 64u}) {
        const auto expected = whole(p, lanes, "cuda");
        for (const std::size_t cut : {1, 700, 4095, 4096, 4097, 8192, 8999}) {
            INFO("lanes " << lanes << ", rows split at " << cut);
            CHECK(rows_differing(p, split(p, cut_at(p, cut), 2, lanes, "cuda"), expected, lanes) == 0);
        }
    }
}
