#pragma once
// The dense path's LibTorch module (private to dnnc_sim): libdnnc_torch.so, the only code
// that links LibTorch. dnnc_sim loads it the first time a dense projection or a device
// question needs it (torch_backend.cpp), so the processes of a network without dense
// layers never map LibTorch (about 150 MB of each process's memory). Both sides are built
// together, so the table below may use C++ types; errors travel as std::exception.
#include <cstddef>
#include <cstdint>
#include <string>

namespace dnnc::sim::torch_module {

struct api {
    int version;  // torch_module_version
    void (*query)(std::string& torch_version, bool& cuda_available, int& cuda_devices);
    // A matrix on `device` ("cpu" or "cuda"), its weights copied from row-major `weights`:
    // `rows` rows of a projection, local row k being row row_of[k] of the whole projection
    // (row_of null: rows 0, 1, ...). Products run on a grid of `grid` rows aligned to the
    // projection's row 0, one call of the same shape per block of the grid (torch_module.cpp).
    void* (*create)(const float* weights, std::size_t rows, std::size_t cols, const std::uint32_t* row_of,
                    std::size_t grid, const std::string& device);
    // Y = W X, X cols x batch and Y rows x batch, row-major, on the host.
    void (*multiply)(const void* matrix, const float* x, float* y, std::size_t batch);
    void (*destroy)(void* matrix) noexcept;
};

inline constexpr int version = 2;
inline constexpr const char* entry_point = "dnnc_torch_module";

}  // namespace dnnc::sim::torch_module

extern "C" const dnnc::sim::torch_module::api* dnnc_torch_module();
