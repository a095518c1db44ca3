// ConcatCpu: concatenation of two or more NCHW inputs along channels on the CPU backend, for F32
// and F64 tensors.
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// Output channels are input 0's, then input 1's, and so on. Backward scatters grad_output back
/// into every non-empty input gradient, honouring GradTarget::accumulate; it reads no
/// activations. In forward the output and any input may be row-strided views (a sample per row,
/// Note [Dense block storage]); an input that lies_in_place in the output (its channel block of
/// the first row, the output's row pitch) is not copied. Backward's views are packed. Not
/// thread-safe; see layers/Layer.hpp for the argument contract.
class ConcatCpu final : public Layer {
 public:
  ConcatCpu(const ConcatSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;
};

}  // namespace vdnn::layers::cpu
