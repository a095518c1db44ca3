// GpuImageStage: the part of a batch the GPU decodes, crops and resizes (nvJPEG), the files it
// takes chosen per file so that the CPU pipeline does the rest (Note [Image pipeline]).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/data/image/Resample.hpp"

namespace vdnn::models {

/// One file the GPU takes: batch position `slot`, its bytes (host memory the caller keeps until
/// run() returns) and the resize that makes its output.
struct GpuSample {
  std::size_t slot = 0;
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  ResizeSpec spec;
};

/// What a stage did since construction.
struct GpuStageCounts {
  std::int64_t images = 0;    // decoded on the GPU
  std::int64_t rejected = 0;  // handed back to the CPU (unsupported, or failed in a batch)
  double seconds = 0.0;       // wall time of run(): decode, resize and the copy back
};

/// Decodes JPEGs on a CUDA device and writes each sample's output to host memory, exactly as the
/// CPU pipeline lays it out (size x size x 3 bytes). accepts() may be called from several
/// threads at once, for distinct slots; run() from one thread, not during accepts().
class GpuImageStage {
 public:
  GpuImageStage() = default;
  GpuImageStage(const GpuImageStage&) = delete;
  GpuImageStage& operator=(const GpuImageStage&) = delete;
  GpuImageStage(GpuImageStage&&) = delete;
  GpuImageStage& operator=(GpuImageStage&&) = delete;
  virtual ~GpuImageStage() = default;

  /// Whether the GPU decodes this JPEG (of `width` x `height` pixels, as its header says): its
  /// decoder supports the encoding and the image fits the stage's per-image bound. Parses the
  /// header into slot `slot`'s state; never throws for bad bytes (false).
  virtual bool accepts(std::size_t slot, const std::uint8_t* data, std::size_t size,
                       std::int64_t width, std::int64_t height) = 0;
  /// Decodes `samples` (each accepted into its slot since the last run), resizes each by its
  /// spec and writes it to out + slot * sample_bytes; returns when the bytes are there. Returns
  /// the slots it could not decode (a corrupt file the header parse let through): the caller's
  /// CPU pipeline then makes them, or names the file in its error.
  virtual std::vector<std::size_t> run(const std::vector<GpuSample>& samples, std::uint8_t* out,
                                       std::int64_t sample_bytes) = 0;
  /// "nvJPEG hardware (7 engines)".
  virtual std::string description() const = 0;
  /// Device memory the stage holds now (decoded images, resize scratch; nvJPEG's own buffers
  /// not counted). Outside the run's device budget, which covers the executor's memory.
  virtual std::size_t device_bytes() const noexcept = 0;
  virtual GpuStageCounts counts() const noexcept = 0;
};

/// Whether this build decodes on the GPU (CUDA with nvJPEG).
bool gpu_decode_built() noexcept;

/// A stage on CUDA device `device` for batches of up to `max_batch` samples. Throws
/// runtime::InvalidArgument when the build has no nvJPEG, runtime::CudaError when the device or
/// nvJPEG fails to start.
std::unique_ptr<GpuImageStage> make_gpu_image_stage(int device, std::int64_t max_batch);

}  // namespace vdnn::models
