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

}  // namespace dnnc::sim
