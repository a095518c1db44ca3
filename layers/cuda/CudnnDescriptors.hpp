// RAII owners of the cuDNN descriptors the CUDA layers build once at construction: tensor and
// pooling (convolutions use the graph API: CudnnGraph.hpp). Internal to layers/cuda/ (it exposes
// cuDNN types).
#pragma once

#include <cudnn.h>

#include "layers/LayerSpec.hpp"
#include "runtime/Shape.hpp"
#include "runtime/UniqueHandle.hpp"

namespace vdnn::layers::cuda {

namespace detail {
struct TensorDescriptorDeleter {
  static void destroy(cudnnTensorDescriptor_t descriptor) noexcept;
};
struct PoolingDescriptorDeleter {
  static void destroy(cudnnPoolingDescriptor_t descriptor) noexcept;
};
}  // namespace detail

/// The cuDNN data type of `dtype`'s elements: CUDNN_DATA_FLOAT for F32, CUDNN_DATA_BFLOAT16 for
/// BF16. Throws runtime::InvalidArgument for other dtypes.
cudnnDataType_t cudnn_data_type(runtime::DType dtype);

/// A packed tensor descriptor of F32 (default) or BF16 elements in NCHW or NHWC memory order.
/// Move-only. Throws runtime::CudaError when cuDNN refuses, runtime::ShapeError when an extent does
/// not fit an int, runtime::InvalidArgument for another dtype.
class TensorDescriptor {
 public:
  /// A rank-4 (NCHW-logical) shape as it is; a rank-2 [N, F] shape as [N, F, 1, 1]. Other ranks
  /// throw runtime::InvalidArgument.
  explicit TensorDescriptor(const Shape& shape, runtime::Layout layout = runtime::Layout::Nchw,
                            runtime::DType dtype = runtime::DType::F32);
  cudnnTensorDescriptor_t get() const noexcept { return handle_.get(); }

 private:
  runtime::UniqueHandle<cudnnTensorDescriptor_t, detail::TensorDescriptorDeleter> handle_;
};

/// A 2-D pooling descriptor that propagates NaN. Move-only. Throws like TensorDescriptor.
class PoolingDescriptor {
 public:
  PoolingDescriptor(cudnnPoolingMode_t mode, const Pair& kernel, const Pair& stride,
                    const Pair& padding);
  cudnnPoolingDescriptor_t get() const noexcept { return handle_.get(); }

 private:
  runtime::UniqueHandle<cudnnPoolingDescriptor_t, detail::PoolingDescriptorDeleter> handle_;
};

}  // namespace vdnn::layers::cuda
