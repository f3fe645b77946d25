#pragma once
// What the dense path can run on. LibTorch itself lives in a module (libdnnc_torch.so) that
// is loaded the first time one of these is used, so a process that runs no dense projection
// never maps it; a module that cannot be loaded is an error naming the paths tried.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dnnc::sim {

enum class device_choice { auto_select, cpu, cuda };

struct backend_info {
    std::string torch_version;
    bool cuda_available = false;
    int cuda_devices = 0;
    // OpenBLAS's kernel set ("SkylakeX", "Haswell", ...) when LibTorch's BLAS is OpenBLAS
    // (Debian's libblas.so.3 as scripts/setup.sh installs it); empty otherwise.
    std::string blas_core;
};

backend_info query_backend();

// OpenBLAS takes its generic kernels ("Prescott") on a CPU model newer than it knows, which
// makes dense products 2-4x slower on a CPU with AVX2 or AVX-512 (BENCHMARKS.md, "Dense
// path"). What to do about it, for `core` on a CPU with those instructions; empty where
// nothing is to be done. Said once on stderr when LibTorch is loaded, unless
// OPENBLAS_CORETYPE is set.
std::string blas_advice(const std::string& core, bool avx2, bool avx512);

// The device a run will use: "cpu", "cuda", or "auto" (CUDA when available, decided when a
// dense projection is first built, so that choosing costs nothing until then). Throws
// usage_error when `cuda` is asked for and there is none.
std::string resolve_device(device_choice choice);

// The rows of the grid a dense projection of `projection_rows` rows is computed on: blocks
// of this many rows, aligned to its row 0, each one LibTorch call of the same shape, so
// that a row's sum has the same bits whichever rows of the projection a node holds (a BLAS
// such as OpenBLAS sums a row in an order that depends on the block of rows it is given).
// A function of the whole projection's shape and the device ("cpu" or "cuda") only: every
// node on the same kind of device finds the same grid.
std::size_t dense_grid_rows(std::size_t projection_rows, const std::string& device);

// Some rows of a dense projection, kept on the chosen device: Y = W X, computed block by
// block on the projection's row grid (dense_grid_rows).
class dense_matrix {
public:
    // `weights` row-major, rows x cols; `device` "cpu", "cuda" or "auto". Local row k is row
    // row_of[k] of a projection of `projection_rows` rows; by default (row_of empty) the
    // rows are the whole projection, in order.
    dense_matrix(const float* weights, std::size_t rows, std::size_t cols, const std::string& device,
                 const std::vector<std::uint32_t>& row_of = {}, std::size_t projection_rows = 0);
    ~dense_matrix();
    dense_matrix(dense_matrix&&) noexcept;
    dense_matrix& operator=(dense_matrix&&) noexcept;

    // Y = W X on the host, X cols x batch and Y rows x batch, row-major: a matrix-vector
    // product per block of the grid for a batch of 1, one batched matrix-matrix product
    // over the blocks otherwise.
    void multiply(const float* x, float* y, std::size_t batch = 1) const;
    std::size_t rows() const;
    std::size_t cols() const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace dnnc::sim
