// ReluCuda: rectified linear unit on the CUDA backend (own kernels), F32 or BF16.
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cuda {

/// y = max(x, 0), a NaN input staying NaN. Backward reads only the output (backward_needs: output)
/// and honours GradTarget::accumulate; an empty target is skipped. Element-wise, so it runs in
/// options.layout, NCHW or NHWC, when options.input_layout is the same (else it keeps NCHW and
/// make_layer refuses it). Views are device memory; all work is enqueued on options.cuda's compute
/// stream and nothing waits for it. The constructor throws runtime::InvalidArgument for a dtype
/// other than F32 or BF16 or a missing options.cuda. Not thread-safe; see layers/Layer.hpp for the
/// argument contract.
class ReluCuda final : public Layer {
 public:
  ReluCuda(const ReluSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  runtime::cuda::DeviceContext* context_;
};

}  // namespace vdnn::layers::cuda
