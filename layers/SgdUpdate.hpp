// SgdUpdate: the per-backend kernel of SGD with momentum and weight decay (PyTorch semantics).
#pragma once

#include <memory>

#include "layers/Layer.hpp"

namespace vdnn::layers {

/// Hyper-parameters of one update.
struct SgdHyper {
  double lr = 0.0;
  double momentum = 0.0;
  double weight_decay = 0.0;
  bool first_step = false;  // the velocity starts as the first gradient, as in torch.optim.SGD
};

/// Applies, element-wise: g' = grad + weight_decay * param; velocity = first_step ? g'
/// : momentum * velocity + g'; param -= lr * velocity. Views must agree in shape and dtype.
class SgdUpdate {
 public:
  SgdUpdate() = default;
  SgdUpdate(const SgdUpdate&) = delete;
  SgdUpdate& operator=(const SgdUpdate&) = delete;
  SgdUpdate(SgdUpdate&&) = delete;
  SgdUpdate& operator=(SgdUpdate&&) = delete;
  virtual ~SgdUpdate() = default;
  virtual void apply(const TensorView& param, const TensorView& grad, const TensorView& velocity,
                     const SgdHyper& hyper) = 0;
};

/// The implementation for `backend` (CUDA: on options.cuda's compute stream); throws
/// runtime::InvalidArgument where there is none.
std::unique_ptr<SgdUpdate> make_sgd_update(Backend backend, const LayerOptions& options);

}  // namespace vdnn::layers
