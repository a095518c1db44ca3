// BatchResampler against the CPU Resampler, byte for byte: batches of random images of varied
// sizes and row pitches through the training crops (with and without the flip) and the eval
// crops, both orders of the passes, upsampling, batches in a row on two streams; and what it
// rejects. The tests that need a device skip when there is none.
#include "models/data/image/cuda/BatchResampler.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "models/data/image/Resample.hpp"
#include "models/data/image/ResizedCrop.hpp"
#include "runtime/Device.hpp"
#include "runtime/Error.hpp"
#include "runtime/MemoryResource.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/CudaMemoryResource.hpp"
#include "runtime/cuda/CudaStream.hpp"

namespace vdnn::models::cuda {
namespace {

// One image of a batch: its pixels, the row pitch of its device copy and its resize.
struct Sample {
  RgbImage image;
  std::int64_t row_bytes = 0;
  ResizeSpec spec;
};

// Noise, the hardest content for bitwise equality: every weight and rounding shows.
RgbImage random_image(std::mt19937& random, std::int64_t width, std::int64_t height) {
  RgbImage image{width, height, std::vector<std::uint8_t>(width * height * 3)};
  std::uniform_int_distribution<int> byte(0, 255);
  for (std::uint8_t& b : image.pixels) b = static_cast<std::uint8_t>(byte(random));
  return image;
}

std::int64_t draw(std::mt19937& random, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(random);
}

// An image of width x height whose device rows are 1 to 61 bytes longer than its pixels (an odd
// pitch, as a decoder's may be).
Sample random_sample(std::mt19937& random, std::int64_t width, std::int64_t height) {
  return {random_image(random, width, height), width * 3 + 2 * draw(random, 0, 30) + 1, {}};
}

SourceBox source_box(const PixelBox& box) {
  return {static_cast<double>(box.left), static_cast<double>(box.top),
          static_cast<double>(box.left + box.width), static_cast<double>(box.top + box.height)};
}

// `count` images of odd widths and any heights in 200 .. 500, with the training recipe's crop
// boxes to size x size, every other one flipped.
std::vector<Sample> train_samples(std::mt19937& random, std::uint64_t count, std::int64_t size) {
  std::vector<Sample> samples;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::int64_t width = draw(random, 100, 249) * 2 + 1;
    const std::int64_t height = draw(random, 200, 500);
    Sample sample = random_sample(random, width, height);
    const PixelBox crop = draw_random_resized_crop(25, 1, i, width, height);
    sample.spec = resized_crop_spec(width, height, source_box(crop), size, i % 2 == 1);
    samples.push_back(std::move(sample));
  }
  return samples;
}

// Images with sides in 200 .. 500 through the eval transform to size x size.
std::vector<Sample> eval_samples(std::mt19937& random, std::uint64_t count, std::int64_t size) {
  std::vector<Sample> samples;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::int64_t width = draw(random, 200, 500);
    const std::int64_t height = draw(random, 200, 500);
    Sample sample = random_sample(random, width, height);
    sample.spec = centre_crop_spec(width, height, eval_resize_crop(width, height, size));
    samples.push_back(std::move(sample));
  }
  return samples;
}

// A batch's device side: the sources at their pitches, their plans and the outputs.
struct DeviceBatch {
  runtime::Buffer pixels;
  runtime::Buffer out;
  std::vector<DeviceRgbImage> sources;
  std::vector<ResizePlan> plans;
  std::int64_t out_stride = 0;
};

DeviceBatch upload(runtime::MemoryResource& memory, cudaStream_t stream,
                   const std::vector<Sample>& samples) {
  DeviceBatch batch;
  batch.plans.resize(samples.size());
  std::size_t pixel_bytes = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const Sample& s = samples[i];
    plan_resize(s.image.width, s.image.height, s.spec, batch.plans[i]);
    pixel_bytes += static_cast<std::size_t>(s.row_bytes * s.image.height);
    batch.out_stride = std::max(batch.out_stride, s.spec.keep.width * s.spec.keep.height * 3);
  }
  batch.pixels = runtime::Buffer(memory, pixel_bytes);
  batch.out = runtime::Buffer(memory, samples.size() * batch.out_stride);
  // Bytes the resampler leaves unwritten show as 0xA5.
  VDNN_CHECK_CUDA(cudaMemsetAsync(batch.out.data(), 0xA5, batch.out.bytes(), stream));
  auto* at = static_cast<std::uint8_t*>(batch.pixels.data());
  for (const Sample& s : samples) {
    const std::int64_t width_bytes = s.image.width * 3;
    VDNN_CHECK_CUDA(cudaMemcpy2DAsync(at, s.row_bytes, s.image.pixels.data(), width_bytes,
                                      width_bytes, s.image.height, cudaMemcpyHostToDevice, stream));
    batch.sources.push_back({at, s.image.width, s.image.height, s.row_bytes});
    at += s.row_bytes * s.image.height;
  }
  return batch;
}

void run(BatchResampler& resampler, cudaStream_t stream, DeviceBatch& batch) {
  resampler.resize(stream, batch.sources, batch.plans, static_cast<std::uint8_t*>(batch.out.data()),
                   batch.out_stride);
}

// Waits for `stream`, then compares each device output with the CPU Resampler's.
void expect_cpu_bytes(cudaStream_t stream, const DeviceBatch& batch,
                      const std::vector<Sample>& samples) {
  std::vector<std::uint8_t> device(batch.out.bytes());
  VDNN_CHECK_CUDA(cudaMemcpyAsync(device.data(), batch.out.data(), device.size(),
                                  cudaMemcpyDeviceToHost, stream));
  VDNN_CHECK_CUDA(cudaStreamSynchronize(stream));
  Resampler cpu;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const Sample& s = samples[i];
    std::vector<std::uint8_t> expected(s.spec.keep.width * s.spec.keep.height * 3);
    cpu.resize(s.image, s.spec, expected.data());
    const std::uint8_t* got = device.data() + i * batch.out_stride;
    std::size_t differ = 0;
    std::size_t first = expected.size();
    for (std::size_t k = 0; k < expected.size(); ++k) {
      if (got[k] == expected[k]) continue;
      first = std::min(first, k);
      ++differ;
    }
    EXPECT_EQ(differ, 0u) << "image " << i << ": " << s.image.width << " x " << s.image.height
                          << " (pitch " << s.row_bytes << ") to " << s.spec.width << " x "
                          << s.spec.height << ", "
                          << (batch.plans[i].vertical_first ? "vertical" : "horizontal")
                          << " pass first, flip " << s.spec.flip << ": the first of " << differ
                          << " differing bytes at " << first << " (device " << int{got[first]}
                          << ", CPU " << int{expected[first]} << ")";
  }
}

// The orders of the passes and the upsampling that a batch's plans cover.
struct Coverage {
  bool vertical_first = false;
  bool horizontal_first = false;
  bool upsampling = false;
};

Coverage coverage(const std::vector<Sample>& samples, const DeviceBatch& batch) {
  Coverage c;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const ResizeSpec& spec = samples[i].spec;
    c.vertical_first = c.vertical_first || batch.plans[i].vertical_first;
    c.horizontal_first = c.horizontal_first || !batch.plans[i].vertical_first;
    c.upsampling = c.upsampling || static_cast<double>(spec.width) > spec.box.right - spec.box.left;
  }
  return c;
}

class BatchResamplerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (runtime::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }

  // One batch through the resampler, byte for byte the CPU's; the batch must take both pass
  // orders and upsample somewhere.
  void expect_cpu_bytes_covering_every_path(const std::vector<Sample>& samples) {
    const runtime::cuda::CudaStream stream;
    DeviceBatch batch = upload(memory_, stream.get(), samples);
    const Coverage c = coverage(samples, batch);
    EXPECT_TRUE(c.vertical_first && c.horizontal_first && c.upsampling);
    BatchResampler resampler;
    run(resampler, stream.get(), batch);
    expect_cpu_bytes(stream.get(), batch, samples);
  }

  runtime::cuda::DeviceMemoryResource memory_;
  std::mt19937 random_{2025};
};

TEST_F(BatchResamplerTest, TrainingCropsMatchTheCpu) {
  std::vector<Sample> samples = train_samples(random_, 126, 224);  // 128 in all
  // A tall box: the vertical pass first, the width upsampled.
  Sample tall = random_sample(random_, 301, 480);
  tall.spec = resized_crop_spec(301, 480, {40, 0, 260, 480}, 224, true);
  samples.push_back(std::move(tall));
  // Upsampled both ways from a fractional box, which reads the pixels it touches.
  Sample small = random_sample(random_, 203, 211);
  small.spec = resized_crop_spec(203, 211, {17.25, 30.5, 80.75, 91}, 224, false);
  samples.push_back(std::move(small));
  expect_cpu_bytes_covering_every_path(samples);
}

TEST_F(BatchResamplerTest, EvalCropsMatchTheCpu) {
  std::vector<Sample> samples = eval_samples(random_, 30, 224);
  // Tall enough for the vertical pass first, wide, and smaller than the resize (upsampled).
  for (const auto& [width, height] :
       {std::pair<std::int64_t, std::int64_t>{300, 700}, {500, 205}, {151, 163}}) {
    Sample sample = random_sample(random_, width, height);
    sample.spec = centre_crop_spec(width, height, eval_resize_crop(width, height, 224));
    samples.push_back(std::move(sample));
  }
  expect_cpu_bytes_covering_every_path(samples);
}

// Three batches enqueued back to back on two streams before the host waits: the second (larger:
// the buffers grow) must not overwrite tables or scratch that the first still reads, nor the
// third the second's; the third fits what the second grew.
TEST_F(BatchResamplerTest, BatchesInARowOnTwoStreamsReuseTheBuffers) {
  const std::vector<Sample> small = train_samples(random_, 6, 224);
  std::vector<Sample> large = eval_samples(random_, 24, 160);
  for (Sample& s : train_samples(random_, 24, 96)) large.push_back(std::move(s));
  const runtime::cuda::CudaStream first;
  const runtime::cuda::CudaStream second;
  DeviceBatch a = upload(memory_, first.get(), small);
  DeviceBatch b = upload(memory_, second.get(), large);
  DeviceBatch c = upload(memory_, first.get(), small);
  BatchResampler resampler;
  EXPECT_EQ(resampler.device_bytes(), 0u);
  run(resampler, first.get(), a);
  const std::size_t after_small = resampler.device_bytes();
  EXPECT_GT(after_small, 0u);
  run(resampler, second.get(), b);
  const std::size_t after_large = resampler.device_bytes();
  EXPECT_GT(after_large, after_small);
  run(resampler, first.get(), c);
  EXPECT_EQ(resampler.device_bytes(), after_large);
  expect_cpu_bytes(first.get(), a, small);
  expect_cpu_bytes(second.get(), b, large);
  expect_cpu_bytes(first.get(), c, small);
}

TEST_F(BatchResamplerTest, RejectsInconsistentBatches) {
  std::vector<Sample> samples = train_samples(random_, 2, 64);
  const runtime::cuda::CudaStream stream;
  DeviceBatch batch = upload(memory_, stream.get(), samples);
  auto* out = static_cast<std::uint8_t*>(batch.out.data());
  BatchResampler resampler;
  EXPECT_THROW(resampler.resize(nullptr, batch.sources, batch.plans, out, batch.out_stride),
               runtime::InvalidArgument);
  EXPECT_THROW(
      resampler.resize(stream.get(), batch.sources, {batch.plans[0]}, out, batch.out_stride),
      runtime::InvalidArgument);
  EXPECT_THROW(resampler.resize(stream.get(), batch.sources, batch.plans, out, 64 * 64 * 3 - 1),
               runtime::InvalidArgument);
  std::vector<DeviceRgbImage> narrower = batch.sources;
  narrower[1].width -= 1;  // its plan is for the width it had
  EXPECT_THROW(resampler.resize(stream.get(), narrower, batch.plans, out, batch.out_stride),
               runtime::InvalidArgument);
  std::vector<DeviceRgbImage> short_rows = batch.sources;
  short_rows[0].row_bytes = short_rows[0].width * 3 - 1;
  EXPECT_THROW(resampler.resize(stream.get(), short_rows, batch.plans, out, batch.out_stride),
               runtime::InvalidArgument);
  EXPECT_NO_THROW(resampler.resize(stream.get(), {}, {}, nullptr, 0));
  EXPECT_EQ(resampler.device_bytes(), 0u);
  VDNN_CHECK_CUDA(cudaStreamSynchronize(stream.get()));
}

// Needs no device: the host plans before anything is enqueued.
TEST(BatchResamplerPlanTest, AnInvalidSpecThrowsFromPlanResize) {
  ResizePlan plan;
  const ResizeSpec crop = resized_crop_spec(300, 200, {10, 20, 110, 120}, 224, true);
  EXPECT_NO_THROW(plan_resize(300, 200, crop, plan));
  EXPECT_THROW(plan_resize(109, 200, crop, plan), runtime::InvalidArgument);  // window leaves
  ResizeSpec bad = crop;
  bad.box.right = 111.5;  // the box leaves the window
  EXPECT_THROW(plan_resize(300, 200, bad, plan), runtime::InvalidArgument);
  bad = crop;
  bad.keep = {0, 0, 225, 224};  // more rows kept than made
  EXPECT_THROW(plan_resize(300, 200, bad, plan), runtime::InvalidArgument);
  EXPECT_THROW(resized_crop_spec(300, 200, {10, 20, 310, 120}, 224, false),
               runtime::InvalidArgument);
}

}  // namespace
}  // namespace vdnn::models::cuda
