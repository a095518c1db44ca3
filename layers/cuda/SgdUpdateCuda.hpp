// SgdUpdateCuda: SGD with momentum and weight decay on device memory (own kernel), F32.
#pragma once

#include "layers/SgdUpdate.hpp"

namespace vdnn::layers::cuda {

/// See layers/SgdUpdate.hpp. apply() enqueues one kernel on options.cuda's compute stream and
/// returns without waiting; param, grad and velocity are device memory. The constructor throws
/// runtime::InvalidArgument for a dtype other than F32 or a missing options.cuda; apply() throws
/// it for empty views, views that are not F32 or shapes that differ, and runtime::CudaError when
/// the launch fails. Stateless beyond the context; not thread-safe (one cuDNN-style stream user).
class SgdUpdateCuda final : public SgdUpdate {
 public:
  explicit SgdUpdateCuda(const LayerOptions& options);
  void apply(const TensorView& param, const TensorView& grad, const TensorView& velocity,
             const SgdHyper& hyper) override;

 private:
  runtime::cuda::DeviceContext* context_;
};

}  // namespace vdnn::layers::cuda
