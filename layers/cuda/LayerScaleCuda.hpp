// LayerScaleCuda: ConvNeXt's learnable per-channel scale on the CUDA backend (own kernels), F32 or
// BF16 feature maps, NCHW or NHWC.
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cuda {

/// Param: layer_scale [C, 1, 1] F32 device memory. y = x * layer_scale[c], in float. Backward
/// reads the input (backward_needs: inputs), writes the input gradient dy * layer_scale[c]
/// honouring GradTarget::accumulate (skipping an empty target) and the scale's gradient, the sum
/// over N, H and W of dy * x in double (fixed order, no atomics; ChannelReduce.cuh), where its view
/// is non-empty; that sum needs workspace().backward bytes. With BF16, feature maps and their
/// gradients are BF16 (rounded once on store), the parameter and its gradient F32 (Note
/// [Precision]). Runs in options.layout when options.input_layout is the same (else NCHW, which
/// make_layer refuses). All work is enqueued on options.cuda's compute stream and nothing waits
/// for it. The constructor throws runtime::InvalidArgument for a dtype other than F32 or BF16 or a
/// missing options.cuda; forward and backward throw it for views that do not match the layer. Not
/// thread-safe; see layers/Layer.hpp for the argument contract.
class LayerScaleCuda final : public Layer {
 public:
  LayerScaleCuda(const LayerScaleSpec& spec, std::vector<Shape> input_shapes,
                 const LayerOptions& options);
  WorkspaceBytes workspace() const override;
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  runtime::cuda::DeviceContext* context_;
};

}  // namespace vdnn::layers::cuda
