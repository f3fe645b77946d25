#include "torch_module.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <vector>

// Rows on a grid. A BLAS sums a row's products in an order that depends on the block of rows
// it is handed (OpenBLAS: kernels that take rows in groups with a different kernel for the
// tail, threads that split the rows, a blocking of the inner dimension that depends on the
// shape), so the rows of a projection split over nodes would not get the whole matrix's
// bits. Every product here is therefore made of calls of one shape, grid x cols, on blocks
// aligned to the projection's row 0: block b holds rows [b * grid, (b + 1) * grid), with
// zero rows for those this matrix does not hold (another node's, or past the projection's
// end). A row then meets the same call, at the same place in it, in the one-process engine
// and on any node, and gets the same bits; rows of other nodes only cost the time of their
// zeros. Blocks are kept in this layout on the device from the start.
namespace {

struct matrix {
    torch::Tensor weights;  // blocks x grid x cols
    std::vector<torch::Tensor> block;  // weights[b], for the per-block products
    torch::Device device{torch::kCPU};
    long rows = 0, cols = 0, grid = 0, blocks = 0;
    // Local rows [0, direct_blocks * grid) are the layout's first rows, in order: their sums
    // are written straight into y. The other blocks go to `scratch`, and each remaining
    // local row k is copied from its row slot[k] of the layout.
    long direct_blocks = 0;
    std::vector<long> slot;
    mutable torch::Tensor scratch;
};

void query(std::string& torch_version, bool& cuda_available, int& cuda_devices) {
    torch_version = TORCH_VERSION;
    cuda_available = torch::cuda::is_available();
    cuda_devices = cuda_available ? static_cast<int>(torch::cuda::device_count()) : 0;
}

void* create(const float* weights, std::size_t rows, std::size_t cols, const std::uint32_t* row_of, std::size_t grid,
             const std::string& device) {
    auto m = std::make_unique<matrix>();
    m->rows = static_cast<long>(rows);
    m->cols = static_cast<long>(cols);
    m->grid = static_cast<long>(std::max<std::size_t>(grid, 1));
    m->device = device == "cuda" ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
    const auto row = [&](long k) { return row_of ? static_cast<long>(row_of[k]) : k; };
    std::vector<long> ids;  // the grid blocks this matrix's rows fall in, ascending
    for (long k = 0; k < m->rows; ++k) ids.push_back(row(k) / m->grid);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    m->blocks = static_cast<long>(ids.size());
    m->slot.resize(rows);
    long leading = 0;  // local rows that sit at their own index in the layout
    for (long k = 0; k < m->rows; ++k) {
        const long b = std::lower_bound(ids.begin(), ids.end(), row(k) / m->grid) - ids.begin();
        m->slot[k] = b * m->grid + row(k) % m->grid;
        if (leading == k && m->slot[k] == k) ++leading;
    }
    m->direct_blocks = leading / m->grid;
    auto host = torch::zeros({m->blocks, m->grid, m->cols}, torch::kFloat32);
    float* laid = host.data_ptr<float>();
    for (long k = 0; k < m->rows; ++k)
        std::memcpy(laid + m->slot[k] * m->cols, weights + k * m->cols, static_cast<std::size_t>(m->cols) * sizeof(float));
    m->weights = m->device.is_cpu() ? host : host.to(m->device);
    for (long b = 0; b < m->blocks; ++b) m->block.push_back(m->weights[b]);
    return m.release();
}

// The sums of every block; those of the direct blocks land in y, the others in scratch.
void multiply_cpu(const matrix& m, const torch::Tensor& input, float* y, long lanes) {
    const long direct_rows = m.direct_blocks * m.grid, rest = m.blocks - m.direct_blocks;
    if (!m.scratch.defined() || m.scratch.numel() != rest * m.grid * lanes) m.scratch = torch::empty({rest * m.grid, lanes}, torch::kFloat32);
    if (lanes == 1) {
        // One matrix-vector product per block: a batched product would take the
        // matrix-matrix path, slower for a single lane.
        const auto direct = torch::from_blob(y, {std::max(direct_rows, 1L)}, torch::kFloat32);
        const auto flat = m.scratch.view({rest * m.grid});
        for (long b = 0; b < m.blocks; ++b) {
            auto out = b < m.direct_blocks ? direct.narrow(0, b * m.grid, m.grid)
                                           : flat.narrow(0, (b - m.direct_blocks) * m.grid, m.grid);
            torch::mv_out(out, m.block[static_cast<std::size_t>(b)], input);
        }
    } else {
        // torch::bmm runs the blocks one after another inside ATen, one matrix-matrix
        // product each, without a call through the dispatcher per block.
        if (m.direct_blocks > 0) {
            auto out = torch::from_blob(y, {m.direct_blocks, m.grid, lanes}, torch::kFloat32);
            torch::bmm_out(out, m.weights.narrow(0, 0, m.direct_blocks),
                           input.unsqueeze(0).expand({m.direct_blocks, m.cols, lanes}));
        }
        if (rest > 0) {
            auto out = m.scratch.view({rest, m.grid, lanes});
            torch::bmm_out(out, m.weights.narrow(0, m.direct_blocks, rest), input.unsqueeze(0).expand({rest, m.cols, lanes}));
        }
    }
    const float* from = m.scratch.data_ptr<float>();
    const auto bytes = static_cast<std::size_t>(lanes) * sizeof(float);
    for (long k = direct_rows; k < m.rows; ++k)
        std::memcpy(y + k * lanes, from + (m.slot[static_cast<std::size_t>(k)] - direct_rows) * lanes, bytes);
}

void multiply(const void* handle, const float* x, float* y, std::size_t batch) {
    const auto& m = *static_cast<const matrix*>(handle);
    if (m.rows == 0) return;
    torch::NoGradGuard no_grad;
    const auto lanes = static_cast<long>(batch);
    const auto input = batch == 1 ? torch::from_blob(const_cast<float*>(x), {m.cols}, torch::kFloat32)
                                  : torch::from_blob(const_cast<float*>(x), {m.cols, lanes}, torch::kFloat32);
    if (m.device.is_cpu()) {
        multiply_cpu(m, input, y, lanes);
        return;
    }
    // On a device: one product per block, of the grid's shape on every node, so that cuBLAS
    // runs a row through the same kernel wherever it lies. One torch::bmm over a node's
    // blocks did not: its kernel depends on the number of blocks, and rows split over nodes
    // got other bits (measured on an H200, tests/sim/test_dense_split.cpp). Then the local
    // rows are picked out.
    const auto on_device = input.to(m.device).view({m.cols, lanes});
    auto on_device_sums = torch::empty({m.blocks, m.grid, lanes}, on_device.options());
    for (long b = 0; b < m.blocks; ++b) {
        auto out = on_device_sums[b];
        torch::mm_out(out, m.block[static_cast<std::size_t>(b)], on_device);
    }
    const auto sums = on_device_sums.to(torch::kCPU).contiguous();
    const float* from = sums.data_ptr<float>();
    const auto bytes = static_cast<std::size_t>(lanes) * sizeof(float);
    for (long k = 0; k < m.rows; ++k) std::memcpy(y + k * lanes, from + m.slot[static_cast<std::size_t>(k)] * lanes, bytes);
}

void destroy(void* handle) noexcept { delete static_cast<matrix*>(handle); }

const dnnc::sim::torch_module::api table{dnnc::sim::torch_module::version, query, create, multiply, destroy};

}  // namespace

extern "C" const dnnc::sim::torch_module::api* dnnc_torch_module() { return &table; }
