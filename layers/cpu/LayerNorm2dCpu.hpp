// LayerNorm2dCpu: ConvNeXt's layer normalization over the channels of each pixel on the CPU backend
// (NCHW), for F32 and F64 tensors.
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// Params: weight and bias, both [C]. Forward normalizes each pixel's C values with their mean and
/// biased variance (in double) and applies weight and bias per channel; it changes no state, so a
/// recompute gives bitwise the first output. Backward reads the input (backward_needs: inputs),
/// takes the statistics from it again, writes the weight and bias gradients (sums in double) where
/// their views are non-empty and the input gradient honouring GradTarget::accumulate, skipping an
/// empty target. Allocates only at construction. Not thread-safe; see layers/Layer.hpp for the
/// argument contract. Constructing throws nothing beyond Layer's (infer_output_shape checks eps).
class LayerNorm2dCpu final : public Layer {
 public:
  LayerNorm2dCpu(const LayerNorm2dSpec& spec, std::vector<Shape> input_shapes,
                 const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  // mean_ and inv_std_ of each pixel of sample n.
  template <typename T>
  void pixel_statistics(const T* x, std::int64_t n);
  template <typename T>
  void forward_typed(const ForwardArgs& args);
  template <typename T>
  void backward_typed(const BackwardArgs& args);

  double eps_;
  // Per pixel of one sample (H * W), reused for every sample.
  std::vector<double> mean_;
  std::vector<double> inv_std_;
  std::vector<double> grad_mean_;        // backward: mean over c of dy * weight
  std::vector<double> grad_projection_;  // backward: mean over c of dy * weight * xhat
};

}  // namespace vdnn::layers::cpu
