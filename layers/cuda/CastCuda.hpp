// CastCuda: the network input converted to the feature maps' element type on the CUDA backend
// (Note [Precision]).
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cuda {

/// y = x rounded to spec.to (bf16: to nearest even, as CastCpu) from an input of options.dtype (F32
/// or BF16), in either layout (input and output share it); backward, where a gradient target is
/// given, dx (+)= dy in the input's type. All work on options.cuda's compute stream. Throws
/// runtime::InvalidArgument for other types or a missing context. Not thread-safe.
class CastCuda final : public Layer {
 public:
  CastCuda(const CastSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  runtime::cuda::DeviceContext* context_;
};

}  // namespace vdnn::layers::cuda
