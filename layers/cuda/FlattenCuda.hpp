// FlattenCuda: reshape (N, ...) to (N, features) on the CUDA backend, F32.
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cuda {

/// Copies the input into the (N, features) output; backward copies (or, with
/// GradTarget::accumulate, adds) grad_output into the input gradient and reads no activations.
/// Views are device memory; all work is enqueued on options.cuda's compute stream and nothing
/// waits for it. The constructor throws runtime::InvalidArgument for a dtype other than F32 or a
/// missing options.cuda. Not thread-safe; see layers/Layer.hpp for the argument contract.
class FlattenCuda final : public Layer {
 public:
  FlattenCuda(const FlattenSpec& spec, std::vector<Shape> input_shapes,
              const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  runtime::cuda::DeviceContext* context_;
};

}  // namespace vdnn::layers::cuda
