#pragma once
// What the dense path can run on. LibTorch itself lives in a module (libdnnc_torch.so) that
// is loaded the first time one of these is used, so a process that runs no dense projection
// never maps it; a module that cannot be loaded is an error naming the paths tried.
#include <cstddef>
#include <memory>
#include <string>

namespace dnnc::sim {

enum class device_choice { auto_select, cpu, cuda };

struct backend_info {
    std::string torch_version;
    bool cuda_available = false;
    int cuda_devices = 0;
};

backend_info query_backend();

// The device a run will use: "cpu", "cuda", or "auto" (CUDA when available, decided when a
// dense projection is first built, so that choosing costs nothing until then). Throws
// usage_error when `cuda` is asked for and there is none.
std::string resolve_device(device_choice choice);

// A weight matrix kept on the chosen device: y = W x as one LibTorch product per call.
class dense_matrix {
public:
    // `weights` row-major, rows x cols; `device` "cpu", "cuda" or "auto".
    dense_matrix(const float* weights, std::size_t rows, std::size_t cols, const std::string& device);
    ~dense_matrix();
    dense_matrix(dense_matrix&&) noexcept;
    dense_matrix& operator=(dense_matrix&&) noexcept;

    // Y = W X on the host, X cols x batch and Y rows x batch, row-major: one matrix-vector
    // product for a batch of 1, one matrix-matrix product otherwise.
    void multiply(const float* x, float* y, std::size_t batch = 1) const;
    std::size_t rows() const;
    std::size_t cols() const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace dnnc::sim
