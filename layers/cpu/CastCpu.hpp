// CastCpu: the network input converted to the feature maps' element type on the CPU backend (Note
// [Precision]).
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// y = x rounded to spec.to (bf16: to nearest even) from an input of options.dtype (F32 or BF16);
/// backward, where a gradient target is given, dx (+)= dy in the input's type. Backward reads
/// nothing else (backward_needs: neither). Not thread-safe; see layers/Layer.hpp. Throws
/// runtime::InvalidArgument for types other than F32 and BF16.
class CastCpu final : public Layer {
 public:
  CastCpu(const CastSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;
};

}  // namespace vdnn::layers::cpu
