#include "dnnc/sim/torch_backend.hpp"

#include "dnnc/protocol/error.hpp"

#include <torch/torch.h>

namespace dnnc::sim {

backend_info query_backend() {
    backend_info info;
    info.torch_version = TORCH_VERSION;
    info.cuda_available = torch::cuda::is_available();
    info.cuda_devices = info.cuda_available ? static_cast<int>(torch::cuda::device_count()) : 0;
    return info;
}

std::string resolve_device(device_choice choice) {
    const bool has_cuda = torch::cuda::is_available();
    switch (choice) {
    case device_choice::cpu: return "cpu";
    case device_choice::cuda:
        if (!has_cuda) throw usage_error("--device cuda: no CUDA device is available");
        return "cuda";
    case device_choice::auto_select: break;
    }
    return has_cuda ? "cuda" : "cpu";
}

struct dense_matrix::impl {
    torch::Tensor weights;
    torch::Device device{torch::kCPU};
    std::size_t rows = 0, cols = 0;
};

dense_matrix::dense_matrix(const float* weights, std::size_t rows, std::size_t cols, const std::string& device)
    : impl_(std::make_unique<impl>()) {
    impl_->rows = rows;
    impl_->cols = cols;
    impl_->device = device == "cuda" ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
    // from_blob does not own the memory: clone (and move to the device) once.
    const auto host = torch::from_blob(const_cast<float*>(weights), {static_cast<long>(rows), static_cast<long>(cols)},
                                       torch::kFloat32);
    impl_->weights = host.to(impl_->device, /*non_blocking=*/false, /*copy=*/true).contiguous();
}

dense_matrix::~dense_matrix() = default;
dense_matrix::dense_matrix(dense_matrix&&) noexcept = default;
dense_matrix& dense_matrix::operator=(dense_matrix&&) noexcept = default;
std::size_t dense_matrix::rows() const { return impl_->rows; }
std::size_t dense_matrix::cols() const { return impl_->cols; }

void dense_matrix::multiply(const float* x, float* y, std::size_t batch) const {
    torch::NoGradGuard no_grad;
    const auto rows = static_cast<long>(impl_->rows), cols = static_cast<long>(impl_->cols);
    const auto lanes = static_cast<long>(batch);
    const auto input = batch == 1 ? torch::from_blob(const_cast<float*>(x), {cols}, torch::kFloat32)
                                  : torch::from_blob(const_cast<float*>(x), {cols, lanes}, torch::kFloat32);
    auto output = batch == 1 ? torch::from_blob(y, {rows}, torch::kFloat32) : torch::from_blob(y, {rows, lanes}, torch::kFloat32);
    if (impl_->device.is_cpu()) {
        if (batch == 1)
            torch::mv_out(output, impl_->weights, input);
        else
            torch::mm_out(output, impl_->weights, input);
        return;
    }
    const auto on_device = input.to(impl_->device);
    output.copy_((batch == 1 ? torch::mv(impl_->weights, on_device) : torch::mm(impl_->weights, on_device)).to(torch::kCPU));
}

}  // namespace dnnc::sim
