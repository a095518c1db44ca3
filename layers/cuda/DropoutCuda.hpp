// DropoutCuda: inverted dropout whose mask is a pure function of (seed, step, element) on the CUDA
// backend, F32 or BF16; bitwise the mask of DropoutCpu.
#pragma once

#include <cstdint>
#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cuda {

/// Training: y_i = x_i * mask_i with mask_i = 1 / (1 - p) or 0 exactly as DropoutCpu defines it
/// from (LayerOptions::seed, ForwardArgs::step, i). Inference (training = false): y = x. Backward
/// regenerates the mask from BackwardArgs::step (it assumes a training forward), reads no
/// activations and honours GradTarget::accumulate. Element-wise: it runs in options.layout, NCHW
/// or NHWC, when options.input_layout is the same (else NCHW, which make_layer refuses); element i
/// of an NHWC tensor gets the multiplier of its NCHW index, so the masks of both layouts are the
/// CPU's on the same logical tensor. Views are device memory; all work is enqueued on
/// options.cuda's compute stream and nothing waits for it. The constructor throws
/// runtime::InvalidArgument for a dtype other than F32 or BF16 or a missing options.cuda. Not
/// thread-safe; see layers/Layer.hpp for the argument contract.
class DropoutCuda final : public Layer {
 public:
  DropoutCuda(const DropoutSpec& spec, std::vector<Shape> input_shapes,
              const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  // out (+)= in * mask of `step` (training) or in (inference), on the compute stream.
  void apply(bool training, std::uint64_t step, const TensorView& in_view,
             const TensorView& out_view, bool accumulate) const;

  DropoutSpec spec_;
  std::uint64_t seed_;
  runtime::cuda::DeviceContext* context_;
};

}  // namespace vdnn::layers::cuda
