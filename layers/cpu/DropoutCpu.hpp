// DropoutCpu: inverted dropout, and drop path (stochastic_depth), whose masks are a pure function
// of (seed, step, element or sample) on the CPU backend, for F32 and F64 tensors.
#pragma once

#include <cstdint>
#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// Training: y_i = x_i / (1 - p) where draw d(i) is kept, else 0; inference (training = false):
/// y = x. Dropout draws per element, d(i) = i; stochastic_depth per sample, d(i) = the sample of
/// element i, so a whole sample is kept or zeroed. Draw d is kept when
/// dropout::keep(state(LayerOptions::seed, step), d, p) (layers/DropoutMask.hpp), the same on
/// every backend. The mask is stateless: a recompute gives bitwise the first output, and backward
/// regenerates it from BackwardArgs::step (backward assumes a training forward), reads no
/// activations and honours GradTarget::accumulate. Not thread-safe; see layers/Layer.hpp for the
/// argument contract. Constructing throws nothing beyond Layer's.
class DropoutCpu final : public Layer {
 public:
  DropoutCpu(const DropoutSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);
  DropoutCpu(const StochasticDepthSpec& spec, std::vector<Shape> input_shapes,
             const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  DropoutCpu(const LayerSpec& spec, double p, bool per_sample, std::vector<Shape> input_shapes,
             const LayerOptions& options);

  double p_;
  std::uint64_t seed_;
  std::int64_t draw_size_;  // elements per draw: 1 (dropout) or a sample's (stochastic_depth)
};

/// Drop path is dropout with one draw per sample.
using StochasticDepthCpu = DropoutCpu;

}  // namespace vdnn::layers::cpu
