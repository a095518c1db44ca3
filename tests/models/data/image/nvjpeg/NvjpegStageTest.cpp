// The nvJPEG stage (Note [Image pipeline]): which files it takes, its output against the CPU's
// decode + resize of the same file, and an ImageDataset that decodes on it: repeatable, resumable,
// with bad files named or skipped as on the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "../../../train/SafetensorsBytes.hpp"
#include "../CodecTestImages.hpp"
#include "models/data/ImageDataset.hpp"
#include "models/data/image/GpuImageStage.hpp"
#include "models/data/image/ImageDecoder.hpp"
#include "models/data/image/JpegEncoder.hpp"
#include "models/data/image/Resample.hpp"
#include "models/data/image/ResizedCrop.hpp"
#include "runtime/Device.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

constexpr std::int64_t kSide = 64;
constexpr std::int64_t kSampleBytes = kSide * kSide * 3;

#define SKIP_WITHOUT_GPU() \
  if (runtime::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device"

// How far apart two images of one size are: the largest difference, the mean, and the fraction
// of bytes within 2 levels.
struct Difference {
  int max = 0;
  double mean = 0.0;
  double within_two = 0.0;
};

Difference difference(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
  EXPECT_EQ(a.size(), b.size());
  Difference d;
  std::int64_t close = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const int diff = std::abs(int{a[i]} - int{b[i]});
    d.max = std::max(d.max, diff);
    d.mean += diff;
    close += diff <= 2 ? 1 : 0;
  }
  d.mean /= static_cast<double>(a.size());
  d.within_two = static_cast<double>(close) / static_cast<double>(a.size());
  return d;
}

TEST(NvjpegStage, TakesBaselineJpegsOnly) {
  SKIP_WITHOUT_GPU();
  const std::unique_ptr<GpuImageStage> stage = make_gpu_image_stage(0, 4);
  const RgbImage picture = test::test_picture(97, 61);
  const std::vector<std::uint8_t> baseline = encode_jpeg(picture);
  EXPECT_TRUE(stage->accepts(0, baseline.data(), baseline.size(), 97, 61));
  // The header and the caller must agree on the size.
  EXPECT_FALSE(stage->accepts(0, baseline.data(), baseline.size(), 96, 61));
  const std::vector<std::uint8_t> garbage(300, 0x5A);
  EXPECT_FALSE(stage->accepts(1, garbage.data(), garbage.size(), 97, 61));
  EXPECT_FALSE(stage->accepts(4, baseline.data(), baseline.size(), 97, 61));  // no such slot
  EXPECT_NE(stage->description().find("nvJPEG"), std::string::npos);
}

// The stage's output for each chroma sampling and for gray, against libjpeg-turbo's full-size
// decode resized by the CPU Resampler with the same spec: the resize is bitwise the same, so
// what differs is the decoders' rounding (IDCT, chroma upsampling).
TEST(NvjpegStage, MatchesTheCpuDecodeAndResizeWithinTheDecodersRounding) {
  SKIP_WITHOUT_GPU();
  const std::unique_ptr<GpuImageStage> stage = make_gpu_image_stage(0, 8);
  const RgbImage picture = test::test_picture(333, 250);
  std::vector<std::vector<std::uint8_t>> files;
  for (const JpegEncoding& encoding :
       {JpegEncoding{90, false, ImageColour::YCbCr, ChromaSampling::S420},
        JpegEncoding{90, false, ImageColour::YCbCr, ChromaSampling::S422},
        JpegEncoding{90, false, ImageColour::YCbCr, ChromaSampling::S444},
        JpegEncoding{90, false, ImageColour::Gray, ChromaSampling::S420}}) {
    files.push_back(encode_jpeg(picture, encoding));
  }
  std::vector<GpuSample> samples;
  for (std::size_t i = 0; i < files.size() * 2; ++i) {
    const std::vector<std::uint8_t>& file = files[i % files.size()];
    ASSERT_TRUE(stage->accepts(i, file.data(), file.size(), 333, 250)) << i;
    // Even slots: the eval transform; odd ones: a crop, flipped.
    const ResizeSpec spec =
        i % 2 == 0 ? centre_crop_spec(333, 250, eval_resize_crop(333, 250, kSide))
                   : resized_crop_spec(333, 250, {41.0, 17.0, 290.0, 230.0}, kSide, true);
    samples.push_back({i, file.data(), file.size(), spec});
  }
  std::vector<std::uint8_t> out(samples.size() * kSampleBytes);
  EXPECT_TRUE(stage->run(samples, out.data(), kSampleBytes).empty());
  EXPECT_EQ(stage->counts().images, static_cast<std::int64_t>(samples.size()));
  EXPECT_GT(stage->device_bytes(), 0U);
  Resampler resampler;
  for (const GpuSample& s : samples) {
    const RgbImage decoded = decode_image(s.data, s.size, "test.jpg");
    std::vector<std::uint8_t> expected(kSampleBytes);
    resampler.resize(decoded, s.spec, expected.data());
    const std::vector<std::uint8_t> got(
        out.begin() + static_cast<std::ptrdiff_t>(s.slot * kSampleBytes),
        out.begin() + static_cast<std::ptrdiff_t>((s.slot + 1) * kSampleBytes));
    const Difference d = difference(got, expected);
    std::cout << "slot " << s.slot << ": max " << d.max << ", mean " << d.mean << ", within 2 "
              << d.within_two << "\n";
    EXPECT_GE(d.within_two, 0.99) << s.slot;
    EXPECT_LE(d.mean, 0.5) << s.slot;
  }
}

// DIR/c<k>/<i>.jpg: baseline, progressive and CMYK JPEGs, so that the GPU takes some files and
// the workers the others.
void write_mixed_folder(const fs::path& dir) {
  for (int c = 0; c < 2; ++c) {
    for (int i = 0; i < 6; ++i) {
      JpegEncoding encoding;
      encoding.progressive = i == 4;
      if (i == 5) encoding.colour = ImageColour::Cmyk;
      test::write_file(dir / ("c" + std::to_string(c)) / (std::to_string(i) + ".jpg"),
                       encode_jpeg(test::test_picture(120 + 13 * i, 90 + 7 * c), encoding));
    }
  }
}

std::unique_ptr<ImageDataset> open(const fs::path& dir, bool gpu, bool skip_bad = false) {
  return std::make_unique<ImageDataset>(
      open_image_source("imagefolder:" + dir.string(), Split::Train, false),
      SampleFormat{3, kSide, kSide, 2}, Split::Train, 3, Augment::ImageNet, 3, skip_bad,
      gpu ? make_gpu_image_stage(0, 12) : nullptr);
}

std::vector<std::uint8_t> draw(ImageDataset& data, std::int64_t batches,
                               std::vector<std::int32_t>* labels = nullptr) {
  std::vector<std::uint8_t> images(static_cast<std::size_t>(batches * 12 * kSampleBytes));
  std::vector<std::int32_t> drawn(static_cast<std::size_t>(batches * 12));
  for (std::int64_t b = 0; b < batches; ++b) {
    data.next_batch(12, images.data() + b * 12 * kSampleBytes, drawn.data() + b * 12);
  }
  if (labels != nullptr) *labels = drawn;
  return images;
}

TEST(NvjpegStage, AnImageDatasetOnItIsRepeatableAndResumesBySeek) {
  SKIP_WITHOUT_GPU();
  const TempDir dir("nvjpeg-dataset");
  write_mixed_folder(dir.path());
  auto gpu = open(dir.path(), true);
  std::vector<std::int32_t> gpu_labels;
  const std::vector<std::uint8_t> a = draw(*gpu, 3, &gpu_labels);
  // Baseline files (8 of 12 per epoch) on the GPU, the progressive and CMYK ones on the workers.
  EXPECT_EQ(gpu->gpu_stage()->counts().images, 24);
  EXPECT_EQ(gpu->gpu_stage()->counts().rejected, 0);
  auto again = open(dir.path(), true);
  EXPECT_EQ(draw(*again, 3), a);
  auto resumed = open(dir.path(), true);
  resumed->seek(12);
  const std::vector<std::uint8_t> tail = draw(*resumed, 2);
  EXPECT_TRUE(std::equal(tail.begin(), tail.end(), a.begin() + 12 * kSampleBytes));
  // The CPU-only run draws the same crops and labels; the pixels differ by the decoders' rounding
  // and the CPU's DCT-scaled decode of small crops.
  auto cpu = open(dir.path(), false);
  std::vector<std::int32_t> cpu_labels;
  const Difference d = difference(draw(*cpu, 3, &cpu_labels), a);
  EXPECT_EQ(cpu_labels, gpu_labels);
  std::cout << "GPU vs CPU dataset: max " << d.max << ", mean " << d.mean << "\n";
  EXPECT_LE(d.mean, 2.0);
}

TEST(NvjpegStage, ABadFileIsNamedOrSkippedAsOnTheCpu) {
  SKIP_WITHOUT_GPU();
  const TempDir dir("nvjpeg-dataset-bad");
  write_mixed_folder(dir.path());
  // A baseline JPEG cut off in its scan: the header parses, so the GPU takes it.
  std::vector<std::uint8_t> cut = encode_jpeg(test::test_picture(150, 100));
  cut.resize(cut.size() / 2);
  test::write_file(dir.path() / "c1" / "0.jpg", cut);
  auto strict = open(dir.path(), true);
  const std::string message = test::data_error_of([&] { draw(*strict, 1); });
  EXPECT_NE(message.find("0.jpg"), std::string::npos) << message;
  auto skipping = open(dir.path(), true, true);
  draw(*skipping, 2);
  EXPECT_EQ(skipping->bad_images().size(), 1U);
}

}  // namespace
}  // namespace vdnn::models
