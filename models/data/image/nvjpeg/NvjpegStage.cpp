// The nvJPEG stage: headers parsed on the workers (one nvjpegJpegStream per slot), the batch
// decoded in one nvjpegDecodeBatched call to interleaved RGB, resized on the GPU and copied back.
#include "models/data/image/nvjpeg/NvjpegStage.hpp"

#include <algorithm>
#include <chrono>

#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::models {
namespace {

constexpr std::size_t kAlignment = 256;

std::size_t aligned(std::size_t bytes) {
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

const char* status_name(nvjpegStatus_t status) {
  switch (status) {
    case NVJPEG_STATUS_SUCCESS:
      return "success";
    case NVJPEG_STATUS_NOT_INITIALIZED:
      return "not initialized";
    case NVJPEG_STATUS_INVALID_PARAMETER:
      return "invalid parameter";
    case NVJPEG_STATUS_BAD_JPEG:
      return "bad JPEG";
    case NVJPEG_STATUS_JPEG_NOT_SUPPORTED:
      return "JPEG not supported";
    case NVJPEG_STATUS_ALLOCATOR_FAILURE:
      return "allocator failure";
    case NVJPEG_STATUS_EXECUTION_FAILED:
      return "execution failed";
    case NVJPEG_STATUS_ARCH_MISMATCH:
      return "architecture mismatch";
    case NVJPEG_STATUS_INTERNAL_ERROR:
      return "internal error";
    case NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED:
      return "implementation not supported";
    case NVJPEG_STATUS_INCOMPLETE_BITSTREAM:
      return "incomplete bitstream";
  }
  return "unknown status";
}

void check(nvjpegStatus_t status, const char* call) {
  if (status != NVJPEG_STATUS_SUCCESS) {
    throw runtime::CudaError(std::string("nvJPEG: ") + call + " failed: " + status_name(status) +
                             " (" + std::to_string(static_cast<int>(status)) + ")");
  }
}

// Makes `device` current on this thread (the stage's members are created on it) and returns it.
int selected(int device) {
  VDNN_CHECK_CUDA(cudaSetDevice(device));
  return device;
}

}  // namespace

namespace detail {
void NvjpegHandleDeleter::destroy(nvjpegHandle_t handle) noexcept { nvjpegDestroy(handle); }
void NvjpegStateDeleter::destroy(nvjpegJpegState_t state) noexcept {
  nvjpegJpegStateDestroy(state);
}
void NvjpegStreamDeleter::destroy(nvjpegJpegStream_t stream) noexcept {
  nvjpegJpegStreamDestroy(stream);
}
}  // namespace detail

NvjpegStage::NvjpegStage(int device, std::int64_t max_batch) : device_(selected(device)) {
  VDNN_EXPECTS(max_batch > 0, "a GPU decode stage needs a positive batch");
  nvjpegHandle_t handle = nullptr;
  // The hardware engines where the GPU has them (A100, H100, H200); else nvJPEG's GPU decoder.
  hardware_ = nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE, nullptr, nullptr, NVJPEG_FLAGS_DEFAULT,
                             &handle) == NVJPEG_STATUS_SUCCESS;
  if (!hardware_) {
    check(nvjpegCreateEx(NVJPEG_BACKEND_DEFAULT, nullptr, nullptr, NVJPEG_FLAGS_DEFAULT, &handle),
          "nvjpegCreateEx");
  }
  handle_.reset(handle);
  if (hardware_) {
    unsigned cores = 0;
    check(nvjpegGetHardwareDecoderInfo(handle_.get(), &engines_, &cores),
          "nvjpegGetHardwareDecoderInfo");
  }
  nvjpegJpegState_t state = nullptr;
  check(nvjpegJpegStateCreate(handle_.get(), &state), "nvjpegJpegStateCreate");
  state_.reset(state);
  parsed_.resize(static_cast<std::size_t>(max_batch));
  for (auto& parsed : parsed_) {
    nvjpegJpegStream_t stream = nullptr;
    check(nvjpegJpegStreamCreate(handle_.get(), &stream), "nvjpegJpegStreamCreate");
    parsed.reset(stream);
  }
}

NvjpegStage::~NvjpegStage() { VDNN_CHECK_CUDA_NOTHROW(cudaStreamSynchronize(stream_.get())); }

bool NvjpegStage::accepts(std::size_t slot, const std::uint8_t* data, std::size_t size,
                          std::int64_t width, std::int64_t height) {
  // A file cut short still parses; libjpeg-turbo would report it, nvJPEG might not: the GPU takes
  // only files that end in the EOI marker.
  const bool complete = size >= 2 && data[size - 2] == 0xFF && data[size - 1] == 0xD9;
  if (!complete || slot >= parsed_.size() || width * height > kMaxPixels) return false;
  nvjpegJpegStream_t parsed = parsed_[slot].get();
  if (nvjpegJpegStreamParseHeader(handle_.get(), data, size, parsed) != NVJPEG_STATUS_SUCCESS) {
    return false;
  }
  unsigned parsed_width = 0;
  unsigned parsed_height = 0;
  int unsupported = 1;
  return nvjpegJpegStreamGetFrameDimensions(parsed, &parsed_width, &parsed_height) ==
             NVJPEG_STATUS_SUCCESS &&
         parsed_width == width && parsed_height == height &&
         nvjpegDecodeBatchedSupported(handle_.get(), parsed, &unsupported) ==
             NVJPEG_STATUS_SUCCESS &&
         unsupported == 0;
}

void NvjpegStage::reserve(runtime::Buffer& buffer, std::size_t bytes) {
  if (buffer.bytes() >= bytes) return;
  // The previous batch's work on the buffer is done (run() waits for it); grow by half again
  // so that a few larger batches do not reallocate each time.
  buffer = runtime::Buffer(device_memory_, std::max(bytes, buffer.bytes() + buffer.bytes() / 2));
}

bool NvjpegStage::decode(const std::vector<GpuSample>& samples) {
  const std::size_t n = samples.size();
  sources_.resize(n);
  std::size_t total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    unsigned width = 0;
    unsigned height = 0;
    check(nvjpegJpegStreamGetFrameDimensions(parsed_[samples[i].slot].get(), &width, &height),
          "nvjpegJpegStreamGetFrameDimensions");
    sources_[i] = {nullptr, width, height, std::int64_t{width} * 3};
    total += aligned(static_cast<std::size_t>(sources_[i].row_bytes) * height);
  }
  reserve(decoded_, total);
  std::vector<const unsigned char*> data(n);
  std::vector<std::size_t> lengths(n);
  std::vector<nvjpegImage_t> images(n);
  auto* next = static_cast<std::uint8_t*>(decoded_.data());
  for (std::size_t i = 0; i < n; ++i) {
    cuda::DeviceRgbImage& source = sources_[i];
    source.pixels = next;
    images[i] = nvjpegImage_t{};
    images[i].channel[0] = next;
    images[i].pitch[0] = static_cast<std::size_t>(source.row_bytes);
    data[i] = samples[i].data;
    lengths[i] = samples[i].size;
    next += aligned(static_cast<std::size_t>(source.row_bytes * source.height));
  }
  if (static_cast<int>(n) != initialized_batch_) {
    check(nvjpegDecodeBatchedInitialize(handle_.get(), state_.get(), static_cast<int>(n), 1,
                                        NVJPEG_OUTPUT_RGBI),
          "nvjpegDecodeBatchedInitialize");
    initialized_batch_ = static_cast<int>(n);
  }
  if (nvjpegDecodeBatched(handle_.get(), state_.get(), data.data(), lengths.data(), images.data(),
                          stream_.get()) == NVJPEG_STATUS_SUCCESS) {
    return true;
  }
  // "Also use to reset failed batches": the next batch initializes the state afresh.
  initialized_batch_ = 0;
  return false;
}

std::vector<std::size_t> NvjpegStage::run(const std::vector<GpuSample>& samples, std::uint8_t* out,
                                          std::int64_t sample_bytes) {
  if (samples.empty()) return {};
  const auto start = std::chrono::steady_clock::now();
  VDNN_CHECK_CUDA(cudaSetDevice(device_));
  std::vector<std::size_t> failed;
  if (!decode(samples)) {
    // One bad file fails the whole call: the CPU pipeline redoes the batch's files, naming (or
    // skipping) the bad one.
    for (const GpuSample& s : samples) failed.push_back(s.slot);
    counts_.rejected += static_cast<std::int64_t>(samples.size());
    return failed;
  }
  plans_.resize(samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) {
    plan_resize(sources_[i].width, sources_[i].height, samples[i].spec, plans_[i]);
  }
  const auto bytes = static_cast<std::size_t>(sample_bytes);
  reserve(resized_, bytes * samples.size());
  auto* resized = static_cast<std::uint8_t*>(resized_.data());
  resampler_.resize(stream_.get(), sources_, plans_, resized, sample_bytes);
  // Samples in consecutive slots lie consecutively in `resized` too: one copy per run of them
  // (fewer driver calls beside the thread that enqueues the training step).
  for (std::size_t i = 0; i < samples.size();) {
    std::size_t end = i + 1;
    while (end < samples.size() && samples[end].slot == samples[end - 1].slot + 1) ++end;
    VDNN_CHECK_CUDA(cudaMemcpyAsync(out + samples[i].slot * bytes, resized + i * bytes,
                                    (end - i) * bytes, cudaMemcpyDeviceToHost, stream_.get()));
    i = end;
  }
  VDNN_CHECK_CUDA(cudaStreamSynchronize(stream_.get()));
  counts_.images += static_cast<std::int64_t>(samples.size());
  counts_.seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return failed;
}

std::string NvjpegStage::description() const {
  return hardware_ ? "nvJPEG hardware (" + std::to_string(engines_) + " engines)"
                   : "nvJPEG GPU (no hardware decoder)";
}

std::size_t NvjpegStage::device_bytes() const noexcept {
  return decoded_.bytes() + resized_.bytes() + resampler_.device_bytes();
}

}  // namespace vdnn::models
