#pragma once
// What the dense path can run on. The only part of dnnc that sees LibTorch headers.
#include <string>

namespace dnnc::sim {

enum class device_choice { auto_select, cpu, cuda };

struct backend_info {
    std::string torch_version;
    bool cuda_available = false;
    int cuda_devices = 0;
};

backend_info query_backend();

// The device a run will use: `auto_select` picks CUDA when available. Throws usage_error
// when `cuda` is asked for and there is none.
std::string resolve_device(device_choice choice);

}  // namespace dnnc::sim
