#include "torch_module.hpp"

#include <torch/torch.h>

namespace {

struct matrix {
    torch::Tensor weights;
    torch::Device device{torch::kCPU};
    long rows = 0, cols = 0;
};

void query(std::string& torch_version, bool& cuda_available, int& cuda_devices) {
    torch_version = TORCH_VERSION;
    cuda_available = torch::cuda::is_available();
    cuda_devices = cuda_available ? static_cast<int>(torch::cuda::device_count()) : 0;
}

void* create(const float* weights, std::size_t rows, std::size_t cols, const std::string& device) {
    auto m = std::make_unique<matrix>();
    m->rows = static_cast<long>(rows);
    m->cols = static_cast<long>(cols);
    m->device = device == "cuda" ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
    // from_blob does not own the memory: clone (and move to the device) once.
    const auto host = torch::from_blob(const_cast<float*>(weights), {m->rows, m->cols}, torch::kFloat32);
    m->weights = host.to(m->device, /*non_blocking=*/false, /*copy=*/true).contiguous();
    return m.release();
}

void multiply(const void* handle, const float* x, float* y, std::size_t batch) {
    const auto& m = *static_cast<const matrix*>(handle);
    torch::NoGradGuard no_grad;
    const auto lanes = static_cast<long>(batch);
    const auto input = batch == 1 ? torch::from_blob(const_cast<float*>(x), {m.cols}, torch::kFloat32)
                                  : torch::from_blob(const_cast<float*>(x), {m.cols, lanes}, torch::kFloat32);
    auto output = batch == 1 ? torch::from_blob(y, {m.rows}, torch::kFloat32) : torch::from_blob(y, {m.rows, lanes}, torch::kFloat32);
    if (m.device.is_cpu()) {
        if (batch == 1)
            torch::mv_out(output, m.weights, input);
        else
            torch::mm_out(output, m.weights, input);
        return;
    }
    const auto on_device = input.to(m.device);
    output.copy_((batch == 1 ? torch::mv(m.weights, on_device) : torch::mm(m.weights, on_device)).to(torch::kCPU));
}

void destroy(void* handle) noexcept { delete static_cast<matrix*>(handle); }

const dnnc::sim::torch_module::api table{dnnc::sim::torch_module::version, query, create, multiply, destroy};

}  // namespace

extern "C" const dnnc::sim::torch_module::api* dnnc_torch_module() { return &table; }
