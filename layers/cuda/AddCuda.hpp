// AddCuda: element-wise sum of two or more inputs (residual joins) on the CUDA backend, F32 or
// BF16.
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cuda {

/// y = (x_0 + x_1) + x_2 + ..., summed in that order (F32: bitwise as AddCpu; BF16: in float,
/// each partial sum stored, so rounded, once). Backward passes
/// grad_output to every non-empty input gradient, honouring GradTarget::accumulate; it reads no
/// activations. Element-wise: inputs and output in options.layout, NCHW or NHWC, when
/// options.input_layout is the same (else NCHW, which make_layer refuses). Views are device memory;
/// all work is enqueued on options.cuda's compute stream and nothing waits for it. The constructor
/// throws runtime::InvalidArgument for a dtype other than F32 or BF16 or a missing options.cuda.
/// Not thread-safe; see layers/Layer.hpp.
class AddCuda final : public Layer {
 public:
  AddCuda(const AddSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  runtime::cuda::DeviceContext* context_;
};

}  // namespace vdnn::layers::cuda
