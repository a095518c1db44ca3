// MulCpu: the element-wise product of a feature map and a scale of its shape or broadcast over H
// and W (squeeze-excitation), on the CPU backend (NCHW), for F32 and F64 tensors.
#pragma once

#include <cstdint>
#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// y = x * s with s of x's shape or [N, C, 1, 1]. Backward reads both inputs (backward_needs),
/// gives dx = dy * s and ds = dy * x summed over each plane in double where s is broadcast (a
/// fixed order: deterministic), honours GradTarget::accumulate and skips empty targets. Not
/// thread-safe; see layers/Layer.hpp for the argument contract. Constructing throws nothing
/// beyond Layer's (shapes are checked by infer_output_shape).
class MulCpu final : public Layer {
 public:
  MulCpu(const MulSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  std::int64_t plane_;  // elements of x per element of s: H * W when broadcast, else 1
};

}  // namespace vdnn::layers::cpu
