// DropoutCpu: inverted dropout whose mask is a pure function of (seed, step, element) on the CPU
// backend, for F32 and F64 tensors.
#pragma once

#include <cstdint>
#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// Training: y_i = x_i / (1 - p) where u_i >= p, else 0. Inference (training = false): y = x.
/// u_i comes from (LayerOptions::seed, step, i) as layers/DropoutMask.hpp defines it, the same
/// on every backend.
/// The mask is stateless: backward regenerates it from BackwardArgs::step (backward assumes a
/// training forward), reads no activations and honours GradTarget::accumulate. Not thread-safe;
/// see layers/Layer.hpp for the argument contract.
class DropoutCpu final : public Layer {
 public:
  DropoutCpu(const DropoutSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  DropoutSpec spec_;
  std::uint64_t seed_;
};

}  // namespace vdnn::layers::cpu
