// NormalizeCpu: image bytes made the network's first feature map on the CPU backend (Note [Image
// input]).
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// From a u8 NHWC batch (options.dtype U8, options.input_layout NHWC) of three-channel images,
/// y = (x / 255 - mean[c]) / std[c] in spec.to (F32, or BF16 rounded to nearest even), NCHW.
/// Backward does nothing: the input takes no gradient. Not thread-safe; see layers/Layer.hpp.
/// Throws runtime::InvalidArgument for another input type, layout or target.
class NormalizeCpu final : public Layer {
 public:
  NormalizeCpu(const NormalizeSpec& spec, std::vector<Shape> input_shapes,
               const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  NormalizeSpec spec_;
};

}  // namespace vdnn::layers::cpu
