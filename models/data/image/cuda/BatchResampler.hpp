// BatchResampler: the Resampler's two passes on a CUDA device, for a batch of decoded images in
// device memory at once, bitwise equal to the CPU (Note [GPU resample]).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/data/image/Resample.hpp"
#include "runtime/MemoryResource.hpp"
#include "runtime/cuda/CudaEvent.hpp"
#include "runtime/cuda/CudaMemoryResource.hpp"

namespace vdnn::models::cuda {

/// A non-owning view of an RGB image in device memory: `height` rows top to bottom, `row_bytes`
/// apart (at least width * 3), each `width` interleaved R, G, B bytes (HWC).
struct DeviceRgbImage {
  const std::uint8_t* pixels = nullptr;
  std::int64_t width = 0;
  std::int64_t height = 0;
  std::int64_t row_bytes = 0;
};

/// Resizes batches of device images as the CPU Resampler does, byte for byte: the host plans
/// each image (plan_resize), the device runs the first pass of every image in one kernel launch
/// and the second pass in another. Holds a pinned staging buffer for the plans' tables, their
/// device copy and the device scratch of the first pass, each grown when a batch needs more and
/// reused after. Not thread-safe; not movable (its buffers point at its own memory resources).
/// Use it on the device that was current at construction.
class BatchResampler {
 public:
  /// Throws runtime::CudaError when CUDA fails.
  BatchResampler();
  BatchResampler(const BatchResampler&) = delete;
  BatchResampler& operator=(const BatchResampler&) = delete;
  BatchResampler(BatchResampler&&) = delete;
  BatchResampler& operator=(BatchResampler&&) = delete;
  /// Waits for the last call's work, which reads the buffers it frees. Never throws.
  ~BatchResampler();

  /// Enqueues on `stream` the resize of sources[i] as plans[i] says (a plan from plan_resize for
  /// that source's size) to out + i * out_stride in device memory (plans[i].height rows of
  /// plans[i].width RGB pixels, no padding), and returns without waiting for it; the sources and
  /// `out` must stay valid until it completes. The host waits only for the previous call's table
  /// upload, whose pinned staging this call rewrites, and, when a buffer must grow, for the
  /// previous call's work. On the device the work starts after the previous call's, on whatever
  /// stream that ran. Throws runtime::InvalidArgument for the NULL stream, counts of sources and
  /// plans that differ, a null `out`, an empty source or one with rows shorter than width * 3
  /// bytes, a plan made for another size, an out_stride smaller than an output;
  /// runtime::OutOfMemory when a buffer cannot grow; runtime::CudaError when CUDA fails.
  void resize(cudaStream_t stream, const std::vector<DeviceRgbImage>& sources,
              const std::vector<ResizePlan>& plans, std::uint8_t* out, std::int64_t out_stride);

  /// The device memory held now, in bytes: the tables and the scratch.
  std::size_t device_bytes() const noexcept { return tables_.bytes() + scratch_.bytes(); }

 private:
  runtime::cuda::DeviceMemoryResource device_memory_;
  runtime::cuda::PinnedMemoryResource pinned_memory_;
  runtime::Buffer staging_;  // pinned: the tables of the latest batch, as packed on the host
  runtime::Buffer tables_;   // device: their copy, which the kernels read
  runtime::Buffer scratch_;  // device: the first pass's output of every image
  runtime::cuda::CudaEvent uploaded_;  // the latest batch's copy of `staging_` is done
  runtime::cuda::CudaEvent resized_;   // the latest batch's kernels are done
};

}  // namespace vdnn::models::cuda
