// Creation and destruction of the cuDNN descriptors of the CUDA layers. Each is owned before it is
// configured, so a failing cudnnSet* call leaks nothing.
#include "layers/cuda/CudnnDescriptors.hpp"

#include <string>

#include "layers/cuda/CudaLayerChecks.hpp"
#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::layers::cuda {
namespace {

cudnnTensorFormat_t format_of(runtime::Layout layout) {
  return layout == runtime::Layout::Nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
}

}  // namespace

cudnnDataType_t cudnn_data_type(runtime::DType dtype) {
  switch (dtype) {
    case runtime::DType::F32:
      return CUDNN_DATA_FLOAT;
    case runtime::DType::BF16:
      return CUDNN_DATA_BFLOAT16;
    default:
      throw runtime::InvalidArgument(std::string("cuDNN descriptors take F32 or BF16, not ") +
                                     runtime::dtype_name(dtype));
  }
}

void detail::TensorDescriptorDeleter::destroy(cudnnTensorDescriptor_t descriptor) noexcept {
  VDNN_CHECK_CUDNN_NOTHROW(cudnnDestroyTensorDescriptor(descriptor));
}
void detail::PoolingDescriptorDeleter::destroy(cudnnPoolingDescriptor_t descriptor) noexcept {
  VDNN_CHECK_CUDNN_NOTHROW(cudnnDestroyPoolingDescriptor(descriptor));
}

TensorDescriptor::TensorDescriptor(const Shape& shape, runtime::Layout layout,
                                   runtime::DType dtype) {
  VDNN_EXPECTS(shape.rank() == 2 || shape.rank() == 4,
               "TensorDescriptor: expected an NCHW or an [N, F] shape, got " + shape.to_string());
  const bool nchw = shape.rank() == 4;
  cudnnTensorDescriptor_t descriptor = nullptr;
  VDNN_CHECK_CUDNN(cudnnCreateTensorDescriptor(&descriptor));
  handle_.reset(descriptor);
  VDNN_CHECK_CUDNN(cudnnSetTensor4dDescriptor(
      descriptor, format_of(layout), cudnn_data_type(dtype), checked_int(shape.n(), "tensor N"),
      checked_int(shape.c(), "tensor C"), nchw ? checked_int(shape.h(), "tensor H") : 1,
      nchw ? checked_int(shape.w(), "tensor W") : 1));
}

PoolingDescriptor::PoolingDescriptor(cudnnPoolingMode_t mode, const Pair& kernel,
                                     const Pair& stride, const Pair& padding) {
  cudnnPoolingDescriptor_t descriptor = nullptr;
  VDNN_CHECK_CUDNN(cudnnCreatePoolingDescriptor(&descriptor));
  handle_.reset(descriptor);
  VDNN_CHECK_CUDNN(cudnnSetPooling2dDescriptor(
      descriptor, mode, CUDNN_PROPAGATE_NAN, checked_int(kernel[0], "pooling kernel"),
      checked_int(kernel[1], "pooling kernel"), checked_int(padding[0], "pooling padding"),
      checked_int(padding[1], "pooling padding"), checked_int(stride[0], "pooling stride"),
      checked_int(stride[1], "pooling stride")));
}

}  // namespace vdnn::layers::cuda
