// ConcatCpu: Channel concatenation of two or more NCHW inputs on the CPU backend (Eigen), for F32 and F64 tensors.
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// Channel concatenation of two or more NCHW inputs. Not thread-safe; see layers/Layer.hpp for the argument contract.
class ConcatCpu final : public Layer {
 public:
  ConcatCpu(const ConcatSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  ConcatSpec spec_;
};

}  // namespace vdnn::layers::cpu
