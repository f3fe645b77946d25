#include "dnnc/sim/torch_backend.hpp"

#include "dnnc/protocol/error.hpp"

#include <catch2/catch.hpp>

using namespace dnnc::sim;

TEST_CASE("the backend reports LibTorch and agrees with the device choice") {
    const auto info = query_backend();
    CHECK(!info.torch_version.empty());
    CHECK(resolve_device(device_choice::cpu) == "cpu");
    CHECK(resolve_device(device_choice::auto_select) == (info.cuda_available ? "cuda" : "cpu"));
    if (info.cuda_available)
        CHECK(resolve_device(device_choice::cuda) == "cuda");
    else
        CHECK_THROWS_AS(resolve_device(device_choice::cuda), dnnc::usage_error);
}
