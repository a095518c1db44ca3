// ConcatCuda: concatenation of two or more NCHW or NHWC inputs along channels on the CUDA backend,
// F32 or BF16.
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cuda {

/// Output channels are input 0's, then input 1's, and so on. Backward scatters grad_output back
/// into every non-empty input gradient, honouring GradTarget::accumulate; it reads no
/// activations. Inputs and output are in options.layout, NCHW or NHWC, when options.input_layout is
/// the same (else NCHW, which make_layer refuses). Views are device memory; all work is enqueued on
/// options.cuda's compute stream and nothing waits for it. In forward the output and any input may
/// be row-strided views (rows of the layout, Note [Dense block storage]); an input that
/// lies_in_place in the output (its channel block of the first row, the output's row pitch) is not
/// copied. Backward's views are packed. The constructor throws
/// runtime::InvalidArgument for a dtype other than F32 or BF16 or a missing options.cuda. Not
/// thread-safe; see layers/Layer.hpp.
class ConcatCuda final : public Layer {
 public:
  ConcatCuda(const ConcatSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  runtime::cuda::DeviceContext* context_;
};

}  // namespace vdnn::layers::cuda
