// NormalizeCuda: image bytes made the network's first feature map on the CUDA backend (Note [Image
// input]).
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cuda {

/// From a u8 NHWC batch (options.dtype U8, options.input_layout NHWC) of three-channel images,
/// y = (x / 255 - mean[c]) / std[c] in spec.to (F32, or BF16 rounded to nearest even), NCHW: one
/// kernel on options.cuda's compute stream, bitwise equal to NormalizeCpu. Backward does nothing:
/// the input takes no gradient. Throws runtime::InvalidArgument for another input type, layout or
/// target, or a missing context. Not thread-safe.
class NormalizeCuda final : public Layer {
 public:
  NormalizeCuda(const NormalizeSpec& spec, std::vector<Shape> input_shapes,
                const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  NormalizeSpec spec_;
  runtime::cuda::DeviceContext* context_;
};

}  // namespace vdnn::layers::cuda
