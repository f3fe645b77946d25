// LibTorch is a module loaded on first use: a process with no dense projection never maps
// it; the first dense matrix or device question loads it. The first case checks the state
// of its process (CTest runs each case in a process of its own); the second, the advice on
// OpenBLAS's kernels, loads nothing.
#include "dnnc/sim/torch_backend.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/sim/engine.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <string>

using namespace dnnc::sim;

namespace {
bool libtorch_mapped() {
    std::ifstream maps("/proc/self/maps");
    const std::string text((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
    return text.find("libtorch_cpu") != std::string::npos;
}
}  // namespace

TEST_CASE("LibTorch is loaded on first use, and the backend agrees with the device choice") {
    REQUIRE_FALSE(libtorch_mapped());
    // An engine without dense projections, and choosing a device other than CUDA, need no LibTorch.
    engine_spec spec;
    spec.neurons.push_back({0, {}, 0, 0.0});
    spec.neurons.push_back({1, {}, 0, 0.0});
    spec.in_begin = {0, 1, 1};
    spec.in.push_back({0, 0.5f, 1});
    engine plain(spec);
    plain.compute();
    CHECK(resolve_device(device_choice::cpu) == "cpu");
    CHECK(resolve_device(device_choice::auto_select) == "auto");
    CHECK_FALSE(libtorch_mapped());

    // A dense block loads it, on the device "auto" picks.
    const float weights[] = {1, 2, 3, 4, 5, 6};
    const dense_matrix m(weights, 2, 3, "auto");
    CHECK(libtorch_mapped());
    const float x[] = {1, 0, -1};
    float y[2] = {};
    m.multiply(x, y);
    CHECK(y[0] == -2.0f);
    CHECK(y[1] == -2.0f);

    const auto info = query_backend();
    CHECK(!info.torch_version.empty());
    // The BLAS's kernel set is known exactly when LibTorch's BLAS is OpenBLAS.
    std::ifstream maps("/proc/self/maps");
    const std::string mapped((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
    CHECK(info.blas_core.empty() == (mapped.find("libopenblas") == std::string::npos));
    if (info.cuda_available)
        CHECK(resolve_device(device_choice::cuda) == "cuda");
    else
        CHECK_THROWS_AS(resolve_device(device_choice::cuda), dnnc::usage_error);
}

TEST_CASE("OpenBLAS's generic kernels on a CPU that can do better draw advice naming the kernels to set") {
    CHECK(blas_advice("Prescott", true, true).find("OPENBLAS_CORETYPE=SkylakeX") != std::string::npos);
    CHECK(blas_advice("Prescott", true, false).find("OPENBLAS_CORETYPE=Haswell") != std::string::npos);
    CHECK(blas_advice("Prescott", false, false).empty());  // nothing better to take
    CHECK(blas_advice("SkylakeX", true, true).empty());
    CHECK(blas_advice("Haswell", true, false).empty());
    CHECK(blas_advice("", true, true).empty());  // not OpenBLAS
}
