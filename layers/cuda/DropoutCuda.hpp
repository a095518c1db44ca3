// DropoutCuda: inverted dropout, and drop path (stochastic_depth), whose masks are a pure function
// of (seed, step, element or sample) on the CUDA backend, F32 or BF16; bitwise the masks of
// DropoutCpu.
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
/// CPU's on the same logical tensor. Built from a StochasticDepthSpec, it draws once per sample
/// (DropoutCpu's rule), which needs no index mapping in either layout; a recompute repeats the
/// mask. Views are device memory; all work is enqueued on
/// options.cuda's compute stream and nothing waits for it. The constructor throws
/// runtime::InvalidArgument for a dtype other than F32 or BF16 or a missing options.cuda. Not
/// thread-safe; see layers/Layer.hpp for the argument contract.
class DropoutCuda final : public Layer {
 public:
  DropoutCuda(const DropoutSpec& spec, std::vector<Shape> input_shapes,
              const LayerOptions& options);
  DropoutCuda(const StochasticDepthSpec& spec, std::vector<Shape> input_shapes,
              const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  DropoutCuda(const LayerSpec& spec, double p, bool per_sample, std::vector<Shape> input_shapes,
              const LayerOptions& options);
  // out (+)= in * mask of `step` (training) or in (inference), on the compute stream.
  void apply(bool training, std::uint64_t step, const TensorView& in_view,
             const TensorView& out_view, bool accumulate) const;

  double p_;
  std::uint64_t seed_;
  bool per_sample_;  // one draw per sample (stochastic_depth), not per element
  runtime::cuda::DeviceContext* context_;
};

/// Drop path is dropout with one draw per sample.
using StochasticDepthCuda = DropoutCuda;

}  // namespace vdnn::layers::cuda
