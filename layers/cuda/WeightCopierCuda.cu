// The CUDA backend's bf16 weight copies: a table of (master, copy, element range) chunks and one
// kernel that rounds every chunk, a block each.
#include "layers/cuda/WeightCopierCuda.hpp"

#include <cuda_bf16.h>

#include <algorithm>
#include <limits>

#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/KernelGrid.hpp"
#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {
namespace {

struct CopyChunk {
  const float* master;
  __nv_bfloat16* copy;
  std::int64_t begin;
  std::int64_t end;
};

__global__ void copy_kernel(const CopyChunk* chunks) {
  const CopyChunk c = chunks[blockIdx.x];
  for (std::int64_t i = c.begin + threadIdx.x; i < c.end; i += blockDim.x) {
    c.copy[i] = __float2bfloat16_rn(c.master[i]);
  }
}

std::vector<CopyChunk> chunk_table(const std::vector<WeightCopy>& copies, std::int64_t chunk) {
  std::vector<CopyChunk> table;
  for (const WeightCopy& c : copies) {
    const std::int64_t n = c.master.numel();
    for (std::int64_t begin = 0; begin < n; begin += chunk) {
      table.push_back({c.master.as<float>(), static_cast<__nv_bfloat16*>(c.copy.data), begin,
                       std::min(n, begin + chunk)});
    }
  }
  return table;
}

}  // namespace

WeightCopierCuda::WeightCopierCuda(const LayerOptions& options,
                                   const std::vector<WeightCopy>& copies)
    : stream_(checked_context(options, "WeightCopierCuda").compute_stream()) {
  check_weight_copies(copies);
  const std::vector<CopyChunk> table = chunk_table(copies, kCopyChunk);
  VDNN_EXPECTS(table.size() <= std::numeric_limits<int>::max(),
               "WeightCopierCuda: more chunks than one launch takes");
  chunks_ = static_cast<unsigned int>(table.size());
  if (table.empty()) return;
  const std::size_t bytes = table.size() * sizeof(CopyChunk);
  table_.emplace(bytes);
  VDNN_CHECK_CUDA(cudaMemcpy(table_->as<CopyChunk>(), table.data(), bytes, cudaMemcpyHostToDevice));
}

void WeightCopierCuda::refresh() {
  if (chunks_ == 0) return;
  copy_kernel<<<chunks_, kBlockThreads, 0, stream_>>>(table_->as<CopyChunk>());
  VDNN_CHECK_LAUNCH();
}

}  // namespace vdnn::layers::cuda
