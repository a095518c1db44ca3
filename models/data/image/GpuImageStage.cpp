// make_gpu_image_stage: the nvJPEG stage where the build has it (VDNN_HAVE_NVJPEG, set by
// models/CMakeLists.txt when the CUDA toolkit has libnvjpeg), a clear error elsewhere.
#include "models/data/image/GpuImageStage.hpp"

#include "runtime/Error.hpp"

#ifdef VDNN_HAVE_NVJPEG
#include "models/data/image/nvjpeg/NvjpegStage.hpp"
#endif

namespace vdnn::models {

bool gpu_decode_built() noexcept {
#ifdef VDNN_HAVE_NVJPEG
  return true;
#else
  return false;
#endif
}

std::unique_ptr<GpuImageStage> make_gpu_image_stage(int device, std::int64_t max_batch) {
#ifdef VDNN_HAVE_NVJPEG
  return std::make_unique<NvjpegStage>(device, max_batch);
#else
  (void)device;
  (void)max_batch;
  throw runtime::InvalidArgument(
      "--decode gpu: this vdnn was built without nvJPEG (its CUDA toolkit has no libnvjpeg); "
      "use --decode cpu or auto");
#endif
}

}  // namespace vdnn::models
