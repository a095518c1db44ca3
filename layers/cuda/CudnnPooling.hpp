// CudnnPooling: the cuDNN forward pass of the CUDA pooling layers (max and average), with its
// descriptors built once. Internal to layers/cuda/ (it exposes cuDNN types).
#pragma once

#include <cudnn.h>

#include "layers/cuda/CudnnDescriptors.hpp"
#include "layers/cuda/PoolWindow.hpp"

namespace vdnn::layers::cuda {

/// Pooling descriptor plus input and output tensor descriptors of one pooling layer, both tensors
/// stored in `layout`. Not copyable. Throws runtime::CudaError when cuDNN refuses the geometry.
class CudnnPooling {
 public:
  CudnnPooling(cudnnPoolingMode_t mode, const PoolWindow& window, const Shape& input,
               const Shape& output, runtime::Layout layout);
  /// Enqueues y = pool(x) on the handle's stream; x and y are device F32 tensors of the shapes
  /// and layout given at construction.
  void forward(cudnnHandle_t handle, const void* x, void* y) const;

 private:
  PoolingDescriptor pooling_;
  TensorDescriptor x_;
  TensorDescriptor y_;
};

}  // namespace vdnn::layers::cuda
