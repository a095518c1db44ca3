// RAII owners of the cuDNN descriptors the CUDA layers build once at construction: tensor, filter,
// convolution and pooling. Internal to layers/cuda/ (it exposes cuDNN types).
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
struct FilterDescriptorDeleter {
  static void destroy(cudnnFilterDescriptor_t descriptor) noexcept;
};
struct ConvolutionDescriptorDeleter {
  static void destroy(cudnnConvolutionDescriptor_t descriptor) noexcept;
};
struct PoolingDescriptorDeleter {
  static void destroy(cudnnPoolingDescriptor_t descriptor) noexcept;
};
}  // namespace detail

/// A packed F32 tensor descriptor in NCHW or NHWC memory order. Move-only. Throws
/// runtime::CudaError when cuDNN refuses, runtime::ShapeError when an extent does not fit an int.
class TensorDescriptor {
 public:
  /// A rank-4 (NCHW-logical) shape as it is; a rank-2 [N, F] shape as [N, F, 1, 1]. Other ranks
  /// throw runtime::InvalidArgument.
  explicit TensorDescriptor(const Shape& shape, runtime::Layout layout = runtime::Layout::Nchw);
  cudnnTensorDescriptor_t get() const noexcept { return handle_.get(); }

 private:
  runtime::UniqueHandle<cudnnTensorDescriptor_t, detail::TensorDescriptorDeleter> handle_;
};

/// An F32 filter descriptor of a [K, C, R, S] weight stored KCRS (Layout::Nchw) or KRSC
/// (Layout::Nhwc). Move-only. Throws like TensorDescriptor.
class FilterDescriptor {
 public:
  explicit FilterDescriptor(const Shape& kcrs, runtime::Layout layout = runtime::Layout::Nchw);
  cudnnFilterDescriptor_t get() const noexcept { return handle_.get(); }

 private:
  runtime::UniqueHandle<cudnnFilterDescriptor_t, detail::FilterDescriptorDeleter> handle_;
};

/// A cross-correlation descriptor with the spec's padding, stride, dilation and groups, F32
/// compute, starting with math type `math`. Move-only. Throws like TensorDescriptor.
class ConvolutionDescriptor {
 public:
  ConvolutionDescriptor(const Conv2dSpec& spec, cudnnMathType_t math);
  cudnnConvolutionDescriptor_t get() const noexcept { return handle_.get(); }
  /// Which math the next call through this descriptor may use (cuDNN reads it per call).
  void set_math(cudnnMathType_t math);

 private:
  runtime::UniqueHandle<cudnnConvolutionDescriptor_t, detail::ConvolutionDescriptorDeleter> handle_;
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
