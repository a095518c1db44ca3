// DeviceData: the device memory of a hand-run layer step in the CUDA layer tests, freed with the
// object: uploads from and downloads to NCHW-ordered host floats in either layout and either
// feature-map dtype (F32, or BF16 rounded to nearest even on upload), NaN-filled tensors and
// workspaces. Uploads and downloads wait for the stream.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "layers/cuda/CudaLayerTest.hpp"
#include "layers/cuda/RawBuffer.hpp"
#include "runtime/BFloat16.hpp"
#include "runtime/Shape.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::test {

class DeviceData {
 public:
  /// Rank-4 tensors are stored in `layout` unless a call names another; elements are F32 unless a
  /// call names BF16.
  explicit DeviceData(cudaStream_t stream, runtime::Layout layout = runtime::Layout::Nchw)
      : stream_(stream), layout_(layout) {}

  /// A device copy of NCHW-ordered `host` seen as `shape`.
  runtime::TensorView upload(const std::vector<float>& host, const runtime::Shape& shape) {
    return upload(host, shape, layout_, runtime::DType::F32);
  }
  runtime::TensorView upload(const std::vector<float>& host, const runtime::Shape& shape,
                             runtime::Layout layout) {
    return upload(host, shape, layout, runtime::DType::F32);
  }
  runtime::TensorView upload(const std::vector<float>& host, const runtime::Shape& shape,
                             runtime::DType dtype) {
    return upload(host, shape, layout_, dtype);
  }
  runtime::TensorView upload(const std::vector<float>& host, const runtime::Shape& shape,
                             runtime::Layout layout, runtime::DType dtype) {
    runtime::TensorView view = allocate(shape, layout, dtype);
    const std::vector<float> stored = to_layout(host, shape, view.layout);
    if (dtype == runtime::DType::BF16) {
      std::vector<runtime::BFloat16> bf16(stored.size());
      runtime::to_bfloat16(stored.data(), bf16.data(), stored.size());
      copy(view.data, bf16.data(), view.bytes(), cudaMemcpyHostToDevice);
    } else {
      copy(view.data, stored.data(), view.bytes(), cudaMemcpyHostToDevice);
    }
    return view;
  }
  /// A tensor whose every element is a NaN (in either dtype), so that an element left unwritten
  /// shows.
  runtime::TensorView nan(const runtime::Shape& shape) {
    return nan(shape, layout_, runtime::DType::F32);
  }
  runtime::TensorView nan(const runtime::Shape& shape, runtime::Layout layout) {
    return nan(shape, layout, runtime::DType::F32);
  }
  runtime::TensorView nan(const runtime::Shape& shape, runtime::DType dtype) {
    return nan(shape, layout_, dtype);
  }
  runtime::TensorView nan(const runtime::Shape& shape, runtime::Layout layout,
                          runtime::DType dtype) {
    runtime::TensorView view = allocate(shape, layout, dtype);
    VDNN_CHECK_CUDA(cudaMemsetAsync(view.data, 0xFF, view.bytes(), stream_));
    return view;
  }
  /// `bytes` of NaNs as a workspace view, empty for 0 bytes.
  runtime::TensorView workspace(std::size_t bytes) {
    if (bytes == 0) return {};
    return nan(
        runtime::Shape{static_cast<std::int64_t>((bytes + sizeof(float) - 1) / sizeof(float))});
  }
  /// The NCHW order of (packed) `view`, as floats.
  std::vector<float> download(const runtime::TensorView& view) {
    const auto n = static_cast<std::size_t>(view.numel());
    std::vector<float> stored(n);
    if (view.dtype == runtime::DType::BF16) {
      std::vector<runtime::BFloat16> bf16(n);
      copy(bf16.data(), view.data, view.bytes(), cudaMemcpyDeviceToHost);
      runtime::to_float(bf16.data(), stored.data(), n);
    } else {
      copy(stored.data(), view.data, view.bytes(), cudaMemcpyDeviceToHost);
    }
    return from_layout(stored, view.shape, view.layout);
  }

 private:
  runtime::TensorView allocate(const runtime::Shape& shape, runtime::Layout layout,
                               runtime::DType dtype) {
    buffers_.push_back(std::make_unique<layers::cuda::DeviceBuffer>(shape.bytes(dtype)));
    return runtime::TensorView{buffers_.back()->as<float>(), shape, dtype,
                               shape.rank() == 4 ? layout : runtime::Layout::Nchw};
  }
  void copy(void* to, const void* from, std::size_t bytes, cudaMemcpyKind kind) {
    VDNN_CHECK_CUDA(cudaMemcpyAsync(to, from, bytes, kind, stream_));
    VDNN_CHECK_CUDA(cudaStreamSynchronize(stream_));
  }

  cudaStream_t stream_;
  runtime::Layout layout_;
  std::vector<std::unique_ptr<layers::cuda::DeviceBuffer>> buffers_;
};

}  // namespace vdnn::test
