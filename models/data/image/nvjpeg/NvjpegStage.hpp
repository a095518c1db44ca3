// NvjpegStage: GpuImageStage on nvJPEG's batched decoder (the hardware JPEG engines where the GPU
// has them), the crops resized by BatchResampler (Note [Image pipeline]).
#pragma once

#include <nvjpeg.h>

#include <cstdint>
#include <string>
#include <vector>

#include "models/data/image/GpuImageStage.hpp"
#include "models/data/image/cuda/BatchResampler.hpp"
#include "runtime/MemoryResource.hpp"
#include "runtime/UniqueHandle.hpp"
#include "runtime/cuda/CudaMemoryResource.hpp"
#include "runtime/cuda/CudaStream.hpp"

namespace vdnn::models {

namespace detail {
struct NvjpegHandleDeleter {
  static void destroy(nvjpegHandle_t handle) noexcept;
};
struct NvjpegStateDeleter {
  static void destroy(nvjpegJpegState_t state) noexcept;
};
struct NvjpegStreamDeleter {
  static void destroy(nvjpegJpegStream_t stream) noexcept;
};
}  // namespace detail

class NvjpegStage final : public GpuImageStage {
 public:
  /// Images above this many pixels go to the CPU, which decodes them DCT-scaled: the decoded
  /// batch stays within max_batch * kMaxPixels * 3 bytes of device memory.
  static constexpr std::int64_t kMaxPixels = std::int64_t{4096} * 4096;

  NvjpegStage(int device, std::int64_t max_batch);
  ~NvjpegStage() override;

  bool accepts(std::size_t slot, const std::uint8_t* data, std::size_t size, std::int64_t width,
               std::int64_t height) override;
  std::vector<std::size_t> run(const std::vector<GpuSample>& samples, std::uint8_t* out,
                               std::int64_t sample_bytes) override;
  std::string description() const override;
  std::size_t device_bytes() const noexcept override;
  GpuStageCounts counts() const noexcept override { return counts_; }

 private:
  // Decodes `samples` into decoded_ (one RGB image each, packed); false when nvJPEG fails.
  bool decode(const std::vector<GpuSample>& samples);
  void reserve(runtime::Buffer& buffer, std::size_t bytes);

  int device_;
  bool hardware_ = false;  // nvJPEG's hardware backend (else its default GPU one)
  unsigned engines_ = 0;
  runtime::UniqueHandle<nvjpegHandle_t, detail::NvjpegHandleDeleter> handle_;
  runtime::UniqueHandle<nvjpegJpegState_t, detail::NvjpegStateDeleter> state_;
  std::vector<runtime::UniqueHandle<nvjpegJpegStream_t, detail::NvjpegStreamDeleter>> parsed_;
  std::vector<cuda::DeviceRgbImage> sources_;  // per run: where each sample decoded to
  std::vector<ResizePlan> plans_;
  int initialized_batch_ = 0;  // the batch size nvjpegDecodeBatchedInitialize last saw
  runtime::cuda::CudaStream stream_;
  runtime::cuda::DeviceMemoryResource device_memory_;
  runtime::Buffer decoded_;  // the batch's decoded images
  runtime::Buffer resized_;  // the batch's outputs, before the copy to the host
  cuda::BatchResampler resampler_;
  GpuStageCounts counts_;
};

}  // namespace vdnn::models
