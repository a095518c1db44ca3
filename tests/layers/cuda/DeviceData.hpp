// DeviceData: the device memory of a hand-run layer step in the CUDA layer tests, freed with the
// object: uploads from and downloads to NCHW-ordered host data in either layout, NaN-filled tensors
// and workspaces. Uploads and downloads wait for the stream.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "layers/cuda/CudaLayerTest.hpp"
#include "layers/cuda/RawBuffer.hpp"
#include "runtime/Shape.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::test {

class DeviceData {
 public:
  /// Rank-4 tensors are stored in `layout` unless a call names another.
  explicit DeviceData(cudaStream_t stream, runtime::Layout layout = runtime::Layout::Nchw)
      : stream_(stream), layout_(layout) {}

  /// A device copy of NCHW-ordered `host` seen as `shape`.
  runtime::TensorView upload(const std::vector<float>& host, const runtime::Shape& shape) {
    return upload(host, shape, layout_);
  }
  runtime::TensorView upload(const std::vector<float>& host, const runtime::Shape& shape,
                             runtime::Layout layout) {
    runtime::TensorView view = allocate(shape, layout);
    const std::vector<float> stored = to_layout(host, shape, view.layout);
    VDNN_CHECK_CUDA(cudaMemcpyAsync(view.data, stored.data(), stored.size() * sizeof(float),
                                    cudaMemcpyHostToDevice, stream_));
    VDNN_CHECK_CUDA(cudaStreamSynchronize(stream_));
    return view;
  }
  /// A tensor whose every element is a NaN, so that an element left unwritten shows.
  runtime::TensorView nan(const runtime::Shape& shape) { return nan(shape, layout_); }
  runtime::TensorView nan(const runtime::Shape& shape, runtime::Layout layout) {
    runtime::TensorView view = allocate(shape, layout);
    VDNN_CHECK_CUDA(cudaMemsetAsync(view.data, 0xFF, view.bytes(), stream_));
    return view;
  }
  /// `bytes` of NaNs as a workspace view, empty for 0 bytes.
  runtime::TensorView workspace(std::size_t bytes) {
    if (bytes == 0) return {};
    return nan(
        runtime::Shape{static_cast<std::int64_t>((bytes + sizeof(float) - 1) / sizeof(float))});
  }
  /// The NCHW order of `view`.
  std::vector<float> download(const runtime::TensorView& view) {
    std::vector<float> host(static_cast<std::size_t>(view.numel()));
    VDNN_CHECK_CUDA(
        cudaMemcpyAsync(host.data(), view.data, view.bytes(), cudaMemcpyDeviceToHost, stream_));
    VDNN_CHECK_CUDA(cudaStreamSynchronize(stream_));
    return from_layout(host, view.shape, view.layout);
  }

 private:
  runtime::TensorView allocate(const runtime::Shape& shape, runtime::Layout layout) {
    buffers_.push_back(
        std::make_unique<layers::cuda::DeviceBuffer>(shape.bytes(runtime::DType::F32)));
    return runtime::TensorView{buffers_.back()->as<float>(), shape, runtime::DType::F32,
                               shape.rank() == 4 ? layout : runtime::Layout::Nchw};
  }

  cudaStream_t stream_;
  runtime::Layout layout_;
  std::vector<std::unique_ptr<layers::cuda::DeviceBuffer>> buffers_;
};

}  // namespace vdnn::test
