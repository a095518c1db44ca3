// MulCuda: the element-wise product of a feature map and a scale of its shape or broadcast over H
// and W (squeeze-excitation) on the CUDA backend (own kernels), F32 or BF16, NCHW or NHWC.
#pragma once

#include <cstdint>
#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cuda {

/// y = x * s with s of x's shape or [N, C, 1, 1], computed in float. Backward reads both inputs
/// (backward_needs), gives dx = dy * s and ds = dy * x; a broadcast scale's gradient is a sum over
/// each plane in float, one block per scale element in a fixed order (deterministic, no atomics).
/// Honours GradTarget::accumulate and skips empty targets. Runs in options.layout when
/// options.input_layout is the same (else it keeps NCHW and make_layer refuses it). Views are
/// device memory; all work is enqueued on options.cuda's compute stream and nothing waits for it.
/// The constructor throws runtime::InvalidArgument for a dtype other than F32 or BF16 or a missing
/// options.cuda. Not thread-safe; see layers/Layer.hpp for the argument contract.
class MulCuda final : public Layer {
 public:
  MulCuda(const MulSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  runtime::cuda::DeviceContext* context_;
  std::int64_t plane_;     // elements of x per element of s: H * W when broadcast, else 1
  std::int64_t channels_;  // C, for the NHWC scale index
};

}  // namespace vdnn::layers::cuda
