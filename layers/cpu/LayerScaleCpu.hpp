// LayerScaleCpu: ConvNeXt's learnable per-channel scale on the CPU backend (NCHW), for F32 and F64
// tensors.
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// Param: layer_scale [C, 1, 1]. y = x * layer_scale[c]. Backward reads the input
/// (backward_needs: inputs), writes the scale's gradient, sum over N, H and W of dy * x in double,
/// where its view is non-empty, and the input gradient dy * layer_scale[c] honouring
/// GradTarget::accumulate, skipping an empty target. Not thread-safe; see layers/Layer.hpp for the
/// argument contract. Constructing throws nothing beyond Layer's.
class LayerScaleCpu final : public Layer {
 public:
  LayerScaleCpu(const LayerScaleSpec& spec, std::vector<Shape> input_shapes,
                const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;
};

}  // namespace vdnn::layers::cpu
