// FlattenCuda: reshape (N, ...) to (N, features) on the CUDA backend, F32.
#pragma once

#include <memory>
#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cuda {

/// Copies the input into the (N, features) output, whose features are in NCHW order whatever the
/// input's layout (options.input_layout, NCHW or NHWC: an NHWC input of more than one channel and
/// pixel is reordered); the output is rank 2, the same in either options.layout. Backward copies
/// (or, with GradTarget::accumulate, adds) grad_output back into the input gradient in the input's
/// layout and reads no activations. Views are device memory; all work is enqueued on options.cuda's
/// compute stream and nothing waits for it. The constructor throws runtime::InvalidArgument for a
/// dtype other than F32 or a missing options.cuda, runtime::CudaError when cuDNN refuses the shape.
/// Not thread-safe; see layers/Layer.hpp for the argument contract.
class FlattenCuda final : public Layer {
 public:
  FlattenCuda(const FlattenSpec& spec, std::vector<Shape> input_shapes,
              const LayerOptions& options);
  FlattenCuda(const FlattenCuda&) = delete;
  FlattenCuda& operator=(const FlattenCuda&) = delete;
  FlattenCuda(FlattenCuda&&) = delete;
  FlattenCuda& operator=(FlattenCuda&&) = delete;
  ~FlattenCuda() override;
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  struct Permute;  // cuDNN descriptors of an NHWC input that needs reordering

  runtime::cuda::DeviceContext* context_;
  std::unique_ptr<Permute> permute_;  // null: input bytes already in NCHW order, a plain copy
};

}  // namespace vdnn::layers::cuda
