// SgdUpdateCpu: SGD with momentum and weight decay on host memory.
#pragma once

#include "layers/SgdUpdate.hpp"

namespace vdnn::layers::cpu {

/// See layers/SgdUpdate.hpp. Stateless; thread-compatible.
class SgdUpdateCpu final : public SgdUpdate {
 public:
  void apply(const TensorView& param, const TensorView& grad, const TensorView& velocity,
             const SgdHyper& hyper) override;
};

}  // namespace vdnn::layers::cpu
