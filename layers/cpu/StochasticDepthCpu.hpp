// StochasticDepthCpu: drop path, a whole sample kept and scaled or zeroed, with a mask that is a
// pure function of (seed, step, sample), on the CPU backend, for F32 and F64 tensors.
#pragma once

#include <cstdint>
#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// Training: sample n's elements are x / (1 - p) where dropout::keep(state(seed, step), n, p)
/// (layers/DropoutMask.hpp, with LayerOptions::seed), else 0; inference (training = false): y = x.
/// The mask is stateless, so a recompute gives bitwise the first output and backward regenerates
/// it from BackwardArgs::step (it assumes a training forward), reading no activations and honouring
/// GradTarget::accumulate. Element-wise per sample, so either layout. Not thread-safe; see
/// layers/Layer.hpp for the argument contract. Constructing throws nothing beyond Layer's.
class StochasticDepthCpu final : public Layer {
 public:
  StochasticDepthCpu(const StochasticDepthSpec& spec, std::vector<Shape> input_shapes,
                     const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  // out (+)= in * the multiplier of each sample for `step` (training), or in (inference).
  template <typename T>
  void apply(bool training, std::uint64_t step, const T* in, T* out, bool accumulate) const;

  double p_;
  std::uint64_t seed_;
};

}  // namespace vdnn::layers::cpu
