#include "dnnc/sim/torch_backend.hpp"

#include "torch_module.hpp"

#include "dnnc/core/error.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include <dlfcn.h>

namespace dnnc::sim {

namespace {

// Where libdnnc_torch.so is looked for: $DNNC_TORCH_MODULE, then beside the installed
// libraries, then in the build tree this library was built in.
std::vector<std::string> module_candidates() {
    std::vector<std::string> paths;
    if (const char* set = std::getenv("DNNC_TORCH_MODULE"); set && *set) paths.emplace_back(set);
    paths.emplace_back(DNNC_TORCH_MODULE_INSTALLED);
    paths.emplace_back(DNNC_TORCH_MODULE_BUILT);
    return paths;
}

// OpenBLAS's kernel set, if LibTorch took OpenBLAS as its BLAS (then it is loaded by now).
std::string openblas_core() {
    void* const openblas = ::dlopen("libopenblas.so.0", RTLD_LAZY | RTLD_NOLOAD);
    if (!openblas) return {};
    using corename = char* (*)();
    const auto get = reinterpret_cast<corename>(::dlsym(openblas, "openblas_get_corename"));
    std::string core = get ? get() : "";
    ::dlclose(openblas);
    return core;
}

void advise_on_blas() {
    if (std::getenv("OPENBLAS_CORETYPE")) return;
    const std::string advice =
        blas_advice(openblas_core(), __builtin_cpu_supports("avx2") != 0, __builtin_cpu_supports("avx512f") != 0);
    if (!advice.empty()) std::fprintf(stderr, "dnnc: %s\n", advice.c_str());
}

// LibTorch, loaded once, on first use.
const torch_module::api& torch_api() {
    static std::once_flag once;
    static const torch_module::api* api = nullptr;
    static std::string failure;
    std::call_once(once, [] {
        std::string tried;
        for (const auto& path : module_candidates()) {
            if (!std::filesystem::exists(path)) {
                tried += "\n  " + path + ": not there";
                continue;
            }
            void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
            if (!handle) {
                tried += "\n  " + path + ": " + ::dlerror();
                continue;
            }
            using entry = const torch_module::api* (*)();
            const auto get = reinterpret_cast<entry>(::dlsym(handle, torch_module::entry_point));
            if (get && get()->version == torch_module::version) {
                api = get();
                advise_on_blas();
                return;
            }
            tried += "\n  " + path + ": not a dnnc LibTorch module of this version";
        }
        failure = "the LibTorch module (libdnnc_torch.so), which dense projections run on, cannot be loaded:" + tried;
    });
    if (!api) throw error(failure);
    return *api;
}

}  // namespace

backend_info query_backend() {
    backend_info info;
    torch_api().query(info.torch_version, info.cuda_available, info.cuda_devices);
    info.blas_core = openblas_core();
    return info;
}

std::string blas_advice(const std::string& core, bool avx2, bool avx512) {
    if (core != "Prescott" || !avx2) return {};
    const std::string better = avx512 ? "SkylakeX" : "Haswell";
    return "OpenBLAS runs its generic Prescott kernels on this CPU, a model it does not know, and dense products "
           "are 2-4x slower than they can be: set OPENBLAS_CORETYPE=" + better +
           " (the same on every node, docs/dense.md)";
}

std::string resolve_device(device_choice choice) {
    switch (choice) {
    case device_choice::cpu: return "cpu";
    case device_choice::cuda:
        if (!query_backend().cuda_available) throw usage_error("--device cuda: no CUDA device is available");
        return "cuda";
    case device_choice::auto_select: break;
    }
    return "auto";
}

struct dense_matrix::impl {
    void* handle = nullptr;
    std::size_t rows = 0, cols = 0;
    ~impl() {
        if (handle) torch_api().destroy(handle);
    }
};

std::size_t dense_grid_rows(std::size_t projection_rows, const std::string& device) {
    // On the CPU, 256 rows: calls few enough that what a call costs around its product stays
    // a few percent of a 4096-column product, and blocks small enough that the rows of a
    // projection split over nodes waste little on the zero rows of partial blocks
    // (BENCHMARKS.md, "Dense path"). On a GPU a call costs a launch, several times what the
    // product of 256 rows takes, and zero rows cost little: 4096. A smaller projection is one
    // block of its own size.
    return std::clamp<std::size_t>(projection_rows, 1, device == "cuda" ? 4096 : 256);
}

dense_matrix::dense_matrix(const float* weights, std::size_t rows, std::size_t cols, const std::string& device,
                           const std::vector<std::uint32_t>& row_of, std::size_t projection_rows)
    : impl_(std::make_unique<impl>()) {
    if (!row_of.empty() && row_of.size() != rows) throw usage_error("dense matrix: one row index per row is needed");
    if (projection_rows == 0) projection_rows = row_of.empty() ? rows : 1 + *std::max_element(row_of.begin(), row_of.end());
    for (auto r : row_of)
        if (r >= projection_rows) throw usage_error("dense matrix: a row index lies past the projection's rows");
    const auto& api = torch_api();
    std::string where = device;
    if (device == "auto") where = query_backend().cuda_available ? "cuda" : "cpu";
    impl_->rows = rows;
    impl_->cols = cols;
    try {
        impl_->handle = api.create(weights, rows, cols, row_of.empty() ? nullptr : row_of.data(),
                                   dense_grid_rows(projection_rows, where), where);
    } catch (const std::exception& e) {
        throw error(std::string("a dense projection could not be put on ") + where + ": " + e.what());
    }
}

dense_matrix::~dense_matrix() = default;
dense_matrix::dense_matrix(dense_matrix&&) noexcept = default;
dense_matrix& dense_matrix::operator=(dense_matrix&&) noexcept = default;
std::size_t dense_matrix::rows() const { return impl_->rows; }
std::size_t dense_matrix::cols() const { return impl_->cols; }

void dense_matrix::multiply(const float* x, float* y, std::size_t batch) const {
    torch_api().multiply(impl_->handle, x, y, batch);
}

}  // namespace dnnc::sim
