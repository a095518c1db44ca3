// WeightCopierCuda: the bf16 weight copies on the CUDA backend (layers/WeightCopies.hpp), one
// launch for every copy.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "layers/WeightCopies.hpp"
#include "layers/cuda/RawBuffer.hpp"

namespace vdnn::layers::cuda {

/// See layers/WeightCopies.hpp. The constructor cuts the copies into chunks of at most
/// kCopyChunk elements, one block each, and uploads that table (synchronously); refresh() is one
/// launch over it on options.cuda's compute stream. Throws runtime::InvalidArgument as
/// check_weight_copies or for a missing options.cuda, runtime::CudaError.
class WeightCopierCuda final : public WeightCopier {
 public:
  static constexpr std::int64_t kCopyChunk = 8192;

  WeightCopierCuda(const LayerOptions& options, const std::vector<WeightCopy>& copies);
  void refresh() override;

 private:
  cudaStream_t stream_;
  unsigned int chunks_ = 0;
  std::optional<DeviceBuffer> table_;  // chunks_ entries; none without copies
};

}  // namespace vdnn::layers::cuda
