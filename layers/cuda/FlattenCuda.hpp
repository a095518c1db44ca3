// FlattenCuda: reshape (N, ...) to (N, features) on the CUDA backend, F32 or BF16.
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
/// dtype other than F32 or BF16 or a missing options.cuda, runtime::CudaError when cuDNN refuses
/// the shape. Not thread-safe; see layers/Layer.hpp for the argument contract.
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

  // dst (+)= src, reordered from NHWC to NCHW (to_nchw) or back when channels_last_, else copied;
  // by own kernels (all of BF16, and F32 without permute_).
  void reorder(const TensorView& src, const TensorView& dst, bool to_nchw, bool accumulate) const;

  runtime::cuda::DeviceContext* context_;
  bool channels_last_;                // an NHWC input whose bytes are not in NCHW order
  std::unique_ptr<Permute> permute_;  // F32 with channels_last_: the cuDNN reorder
};

}  // namespace vdnn::layers::cuda
