// bench_resample_gpu: the training crop/resize of one batch (128 random images of about 400 x 350
// to 224 x 224, half flipped) by the BatchResampler, timed with CUDA events from the table upload
// to the end of the second pass (the stream held meanwhile, so that the host's planning and
// packing are not counted), against the CPU Resampler on one thread; checks that the bytes are
// equal. Prints one JSON object.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <random>
#include <vector>

#include "models/data/image/Resample.hpp"
#include "models/data/image/ResizedCrop.hpp"
#include "models/data/image/cuda/BatchResampler.hpp"
#include "runtime/Device.hpp"
#include "runtime/MemoryResource.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/CudaEvent.hpp"
#include "runtime/cuda/CudaMemoryResource.hpp"
#include "runtime/cuda/CudaStream.hpp"

namespace models = vdnn::models;
namespace runtime = vdnn::runtime;

namespace {

constexpr std::int64_t kImages = 128;
constexpr std::int64_t kSize = 224;
constexpr int kRepeats = 20;

models::RgbImage random_image(std::mt19937& random) {
  std::uniform_int_distribution<std::int64_t> side(-20, 20);
  const std::int64_t width = 400 + side(random);
  const std::int64_t height = 350 + side(random);
  models::RgbImage image{width, height, std::vector<std::uint8_t>(width * height * 3)};
  for (std::uint8_t& b : image.pixels) b = static_cast<std::uint8_t>(random());
  return image;
}

models::ResizeSpec train_spec(const models::RgbImage& image, std::uint64_t index) {
  const models::PixelBox box =
      models::draw_random_resized_crop(1, 0, index, image.width, image.height);
  return models::resized_crop_spec(
      image.width, image.height,
      {static_cast<double>(box.left), static_cast<double>(box.top),
       static_cast<double>(box.left + box.width), static_cast<double>(box.top + box.height)},
      kSize, index % 2 == 1);
}

// A host function that holds its stream until *flag (a std::atomic<bool>) is set.
void CUDART_CB hold_until(void* flag) {
  while (!static_cast<std::atomic<bool>*>(flag)->load()) {
  }
}

// What one batch gave through both resamplers.
struct Result {
  double gpu_ms = 1e30;  // the best of kRepeats
  double plan_us = 0.0;  // plan_resize of the whole batch on one thread
  double cpu_ms = 0.0;
  std::size_t device_bytes = 0;
  bool equal = false;
};

// `enqueued` holds the stream while the host plans and enqueues each repeat.
Result measure(std::atomic<bool>& enqueued) {
  std::mt19937 random(1);
  std::vector<models::RgbImage> images;
  std::vector<models::ResizeSpec> specs;
  std::vector<models::ResizePlan> plans(kImages);
  runtime::cuda::DeviceMemoryResource memory;
  const runtime::cuda::CudaStream stream;
  std::vector<runtime::Buffer> pixels;
  std::vector<models::cuda::DeviceRgbImage> sources;
  for (std::int64_t i = 0; i < kImages; ++i) {
    images.push_back(random_image(random));
    const models::RgbImage& image = images.back();
    specs.push_back(train_spec(image, static_cast<std::uint64_t>(i)));
    pixels.emplace_back(memory, image.pixels.size());
    VDNN_CHECK_CUDA(cudaMemcpy(pixels.back().data(), image.pixels.data(), image.pixels.size(),
                               cudaMemcpyHostToDevice));
    sources.push_back({static_cast<const std::uint8_t*>(pixels.back().data()), image.width,
                       image.height, image.width * 3});
  }
  constexpr std::int64_t kOutBytes = kSize * kSize * 3;
  runtime::Buffer out(memory, kImages * kOutBytes);
  models::cuda::BatchResampler resampler;
  Result result;
  for (int r = 0; r < kRepeats; ++r) {
    runtime::cuda::CudaEvent start(runtime::cuda::EventTiming::kEnabled);
    runtime::cuda::CudaEvent end(runtime::cuda::EventTiming::kEnabled);
    enqueued.store(false);
    VDNN_CHECK_CUDA(cudaLaunchHostFunc(stream.get(), hold_until, &enqueued));
    start.record(stream.get());
    const auto planning = std::chrono::steady_clock::now();
    for (std::int64_t i = 0; i < kImages; ++i) {
      models::plan_resize(images[i].width, images[i].height, specs[i], plans[i]);
    }
    result.plan_us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - planning)
            .count();
    resampler.resize(stream.get(), sources, plans, static_cast<std::uint8_t*>(out.data()),
                     kOutBytes);
    end.record(stream.get());
    enqueued.store(true);
    end.synchronize();
    result.gpu_ms =
        std::min(result.gpu_ms, static_cast<double>(runtime::cuda::elapsed_ms(start, end)));
  }
  result.device_bytes = resampler.device_bytes();
  std::vector<std::uint8_t> device(kImages * kOutBytes);
  VDNN_CHECK_CUDA(cudaMemcpy(device.data(), out.data(), device.size(), cudaMemcpyDeviceToHost));

  models::Resampler cpu;
  std::vector<std::uint8_t> host(device.size());
  const auto cpu_start = std::chrono::steady_clock::now();
  for (std::int64_t i = 0; i < kImages; ++i) cpu.resize(images[i], specs[i], &host[i * kOutBytes]);
  result.cpu_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - cpu_start)
          .count();
  result.equal = device == host;
  return result;
}

}  // namespace

int main() {
  if (runtime::cuda_device_count() == 0) {
    std::fprintf(stderr, "bench_resample_gpu: no CUDA device\n");
    return 1;
  }
  std::atomic<bool> enqueued{false};
  try {
    const Result r = measure(enqueued);
    std::printf(
        "{\"images\": %lld, \"size\": %lld, \"gpu_ms\": %.4f, \"plan_us\": %.1f, "
        "\"cpu_ms\": %.2f, \"device_bytes\": %zu, \"equal\": %s}\n",
        static_cast<long long>(kImages), static_cast<long long>(kSize), r.gpu_ms, r.plan_us,
        r.cpu_ms, r.device_bytes, r.equal ? "true" : "false");
    return r.equal ? 0 : 1;
  } catch (const std::exception& e) {
    enqueued.store(true);  // releases a stream held when resize() threw
    std::fprintf(stderr, "bench_resample_gpu: %s\n", e.what());
    return 1;
  }
}
