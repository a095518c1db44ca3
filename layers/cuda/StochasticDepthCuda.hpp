// StochasticDepthCuda: drop path, a whole sample kept and scaled or zeroed, with a mask that is a
// pure function of (seed, step, sample), on the CUDA backend, F32 or BF16; bitwise the mask of
// StochasticDepthCpu.
#pragma once

#include <cstdint>
#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cuda {

/// Training: sample n's elements are x * (1 / (1 - p)) where dropout::keep(state(seed, step), n, p)
/// (layers/DropoutMask.hpp, with LayerOptions::seed), else 0, exactly StochasticDepthCpu's mask;
/// inference (training = false): y = x. Stateless, so a recompute gives bitwise the first output
/// and backward regenerates the mask from BackwardArgs::step (it assumes a training forward),
/// reading no activations and honouring GradTarget::accumulate. A sample is contiguous in NCHW and
/// NHWC alike, so it runs in options.layout when options.input_layout is the same (else NCHW,
/// which make_layer refuses). Products round once (no fused multiply-add): F32 results are
/// bitwise the CPU's. Views are device memory; all work is enqueued on options.cuda's compute
/// stream and nothing waits for it. The constructor throws runtime::InvalidArgument for a dtype
/// other than F32 or BF16 or a missing options.cuda. Not thread-safe; see layers/Layer.hpp for the
/// argument contract.
class StochasticDepthCuda final : public Layer {
 public:
  StochasticDepthCuda(const StochasticDepthSpec& spec, std::vector<Shape> input_shapes,
                      const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  // out (+)= in * the multiplier of each sample for `step` (training), or in (inference).
  void apply(bool training, std::uint64_t step, const TensorView& in_view,
             const TensorView& out_view, bool accumulate) const;

  double p_;
  std::uint64_t seed_;
  runtime::cuda::DeviceContext* context_;
};

}  // namespace vdnn::layers::cuda
