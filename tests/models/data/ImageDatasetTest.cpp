// ImageDataset (Note [Image pipeline]): batches of image files that do not depend on the number of
// workers, resume by seek(), epochs that visit every file once in a new order, the eval transform
// in file order, and clear errors for a bad file or a network that does not fit the source.
#include "models/data/ImageDataset.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "../train/SafetensorsBytes.hpp"
#include "image/CodecTestImages.hpp"
#include "models/data/image/GpuImageStage.hpp"
#include "models/data/image/ImageDecoder.hpp"
#include "models/data/image/JpegEncoder.hpp"
#include "models/data/image/ResizedCrop.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

constexpr std::int64_t kSide = 24;
constexpr std::int64_t kSampleBytes = kSide * kSide * 3;

// An image of w x h whose pixels depend on its class and number.
RgbImage pattern(std::int64_t w, std::int64_t h, int cls, int k) {
  RgbImage image{w, h, std::vector<std::uint8_t>(static_cast<std::size_t>(w * h * 3))};
  for (std::int64_t y = 0; y < h; ++y) {
    for (std::int64_t x = 0; x < w; ++x) {
      std::uint8_t* p = image.row(y) + x * 3;
      p[0] = static_cast<std::uint8_t>(40 * cls + x * 3);
      p[1] = static_cast<std::uint8_t>(y * 5 + k * 17);
      p[2] = static_cast<std::uint8_t>((x * y + cls * 31) & 0xFF);
    }
  }
  return image;
}

// DIR/train/<class>/<k>.jpg for `classes` classes of `per_class` images of varied sizes, and the
// same layout under DIR/val with `val` images per class.
void write_folder(const fs::path& dir, int classes, int per_class, int val) {
  for (const auto& [split, count] : {std::pair{"train", per_class}, std::pair{"val", val}}) {
    for (int c = 0; c < classes; ++c) {
      for (int k = 0; k < count; ++k) {
        const RgbImage image = pattern(30 + 7 * k, 28 + 5 * c, c, k);
        test::write_file(dir / split / ("c" + std::to_string(c)) / (std::to_string(k) + ".jpg"),
                         encode_jpeg(image));
      }
    }
  }
}

std::unique_ptr<ImageDataset> open(const fs::path& dir, Split split, std::size_t workers,
                                   int classes = 3, Augment augment = Augment::ImageNet) {
  return std::make_unique<ImageDataset>(
      open_image_source("imagefolder:" + dir.string(), split, false),
      SampleFormat{3, kSide, kSide, classes}, split, 7, augment, workers);
}

struct Drawn {
  std::vector<std::uint8_t> images;
  std::vector<std::int32_t> labels;
};

Drawn draw(ImageDataset& data, std::int64_t batches, std::int64_t batch) {
  Drawn d{std::vector<std::uint8_t>(static_cast<std::size_t>(batches * batch * kSampleBytes)),
          std::vector<std::int32_t>(static_cast<std::size_t>(batches * batch))};
  for (std::int64_t b = 0; b < batches; ++b) {
    data.next_batch(batch, d.images.data() + b * batch * kSampleBytes, d.labels.data() + b * batch);
  }
  return d;
}

TEST(ImageDataset, BatchesAreTheSameOnAnyNumberOfWorkersAndResumeBySeek) {
  const TempDir dir("image-dataset-workers");
  write_folder(dir.path(), 3, 5, 0);
  auto one = open(dir.path(), Split::Train, 1);
  auto three = open(dir.path(), Split::Train, 3);
  EXPECT_TRUE(one->image_bytes());
  EXPECT_EQ(one->size(), 15);
  const Drawn a = draw(*one, 4, 6);  // 24 samples: into the second epoch
  const Drawn b = draw(*three, 4, 6);
  EXPECT_EQ(a.images, b.images);
  EXPECT_EQ(a.labels, b.labels);
  auto resumed = open(dir.path(), Split::Train, 2);
  resumed->seek(12);
  const Drawn c = draw(*resumed, 2, 6);
  EXPECT_TRUE(std::equal(c.images.begin(), c.images.end(), a.images.begin() + 12 * kSampleBytes));
  EXPECT_TRUE(std::equal(c.labels.begin(), c.labels.end(), a.labels.begin() + 12));
}

// Batches started together (the workers go from one to the next) are the batches next_batch()
// draws one at a time, epochs crossed; a bad file fails its own batch only, in order.
TEST(ImageDataset, BatchesStartedTogetherAreTheBatchesDrawnOneAtATime) {
  const TempDir dir("image-dataset-in-flight");
  write_folder(dir.path(), 3, 5, 0);
  constexpr std::int64_t kBatch = 4;
  constexpr std::int64_t kBatches = 5;  // 20 samples: into the second epoch
  auto one_at_a_time = open(dir.path(), Split::Train, 2);
  const Drawn expected = draw(*one_at_a_time, kBatches, kBatch);
  auto together = open(dir.path(), Split::Train, 3);
  Drawn d{std::vector<std::uint8_t>(expected.images.size()),
          std::vector<std::int32_t>(expected.labels.size())};
  for (std::int64_t b = 0; b < kBatches; ++b) {
    together->start_batch(kBatch, d.images.data() + b * kBatch * kSampleBytes,
                          d.labels.data() + b * kBatch);
  }
  for (std::int64_t b = 0; b < kBatches; ++b) together->finish_batch();
  EXPECT_EQ(d.images, expected.images);
  EXPECT_EQ(d.labels, expected.labels);
  EXPECT_THROW(together->finish_batch(), runtime::InvalidArgument);  // none started
  together->start_batch(kBatch, d.images.data(), d.labels.data());
  EXPECT_THROW(together->next_batch(kBatch, d.images.data(), d.labels.data()),
               runtime::InvalidArgument);  // one at a time only with none started
  together->finish_batch();

  test::write_file(dir.path() / "train" / "c2" / "broken.jpg", {0xFF, 0xD8, 0xFF, 0xE0, 0x00});
  auto failing = open(dir.path(), Split::Train, 2);  // 16 files, broken.jpg among them
  std::vector<std::uint8_t> images(static_cast<std::size_t>(4 * 8 * kSampleBytes));
  std::vector<std::int32_t> labels(4 * 8);
  for (std::int64_t b = 0; b < 4; ++b) {
    failing->start_batch(8, images.data() + b * 8 * kSampleBytes, labels.data() + b * 8);
  }
  int failed = 0;
  for (std::int64_t b = 0; b < 4; ++b) {
    try {
      failing->finish_batch();
    } catch (const runtime::DataError& e) {
      EXPECT_NE(std::string(e.what()).find("broken.jpg"), std::string::npos) << e.what();
      ++failed;
    }
  }
  EXPECT_EQ(failed, 2);  // once in each epoch's two batches
  EXPECT_THROW(failing->finish_batch(), runtime::InvalidArgument);
}

TEST(ImageDataset, EachEpochVisitsEveryFileOnceInANewOrder) {
  const TempDir dir("image-dataset-epochs");
  write_folder(dir.path(), 3, 4, 0);
  auto data = open(dir.path(), Split::Train, 2);
  const Drawn d = draw(*data, 2, 12);
  for (int epoch = 0; epoch < 2; ++epoch) {
    std::vector<std::int32_t> labels(d.labels.begin() + 12 * epoch,
                                     d.labels.begin() + 12 * (epoch + 1));
    EXPECT_EQ(std::count(labels.begin(), labels.end(), 0), 4) << epoch;
    EXPECT_EQ(std::count(labels.begin(), labels.end(), 2), 4) << epoch;
  }
  EXPECT_FALSE(std::equal(d.labels.begin(), d.labels.begin() + 12, d.labels.begin() + 12));
}

TEST(ImageDataset, TheTestSplitIsTheEvalTransformInFileOrder) {
  const TempDir dir("image-dataset-eval");
  write_folder(dir.path(), 2, 1, 2);
  auto data = open(dir.path(), Split::Test, 2, 2);
  EXPECT_EQ(data->size(), 4);
  const Drawn d = draw(*data, 1, 4);
  EXPECT_EQ(d.labels, (std::vector<std::int32_t>{0, 0, 1, 1}));
  // The first file through the eval transform by hand: the whole image decoded and resized.
  std::ifstream in(dir.path() / "val" / "c0" / "0.jpg", std::ios::binary);
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  const RgbImage image = decode_image(bytes.data(), bytes.size(), "0.jpg");
  std::vector<std::uint8_t> expected(kSampleBytes);
  Resampler().resize_centre_crop(image, eval_resize_crop(image.width, image.height, kSide),
                                 expected.data());
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), d.images.begin()));
  const Drawn again = draw(*data, 1, 4);  // the test split repeats unchanged
  EXPECT_EQ(again.images, d.images);
}

TEST(ImageDataset, ABadFileIsADataErrorNamingIt) {
  const TempDir dir("image-dataset-bad");
  write_folder(dir.path(), 3, 2, 0);
  test::write_file(dir.path() / "train" / "c1" / "broken.jpg", {0xFF, 0xD8, 0xFF, 0xE0, 0x00});
  auto data = open(dir.path(), Split::Train, 2);
  try {
    draw(*data, 1, 7);
    FAIL() << "a truncated JPEG decoded";
  } catch (const runtime::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("broken.jpg"), std::string::npos) << e.what();
  }
}

// A GPU stage that takes every JPEG and writes kMark into its samples, failing `fails` slots.
class StandInStage final : public GpuImageStage {
 public:
  static constexpr std::uint8_t kMark = 0xAB;
  explicit StandInStage(std::vector<std::size_t> fails) : fails_(std::move(fails)) {}
  bool accepts(std::size_t, const std::uint8_t*, std::size_t, std::int64_t, std::int64_t) override {
    return true;
  }
  std::vector<std::size_t> run(const std::vector<GpuSample>& samples, std::uint8_t* out,
                               std::int64_t sample_bytes) override {
    for (const GpuSample& s : samples) {
      std::fill_n(out + static_cast<std::int64_t>(s.slot) * sample_bytes, sample_bytes, kMark);
    }
    return fails_;
  }
  std::string description() const override { return "stand-in"; }
  std::size_t device_bytes() const noexcept override { return 0; }
  GpuStageCounts counts() const noexcept override { return {}; }

 private:
  std::vector<std::size_t> fails_;
};

// With a GPU stage taking half of each batch (slots 1 and 3 of 4), the workers make the other
// slots as without one, and redo what the stage failed.
TEST(ImageDataset, AGpuStageMakesItsShareAndTheWorkersTheRest) {
  const TempDir dir("image-dataset-gpu-share");
  write_folder(dir.path(), 2, 1, 2);
  const Drawn cpu = draw(*open(dir.path(), Split::Test, 2, 2), 1, 4);
  for (const std::vector<std::size_t>& fails : {std::vector<std::size_t>{}, {1}}) {
    ImageDataset data(open_image_source("imagefolder:" + dir.path().string(), Split::Test, false),
                      SampleFormat{3, kSide, kSide, 2}, Split::Test, 7, Augment::None, 2, false,
                      std::make_unique<StandInStage>(fails), 0.5);
    const Drawn d = draw(data, 1, 4);
    EXPECT_EQ(d.labels, cpu.labels);
    for (std::size_t slot = 0; slot < 4; ++slot) {
      const auto at = static_cast<std::ptrdiff_t>(slot) * kSampleBytes;
      const bool marked = std::all_of(d.images.begin() + at, d.images.begin() + at + kSampleBytes,
                                      [](std::uint8_t b) { return b == StandInStage::kMark; });
      const bool from_workers = std::equal(
          d.images.begin() + at, d.images.begin() + at + kSampleBytes, cpu.images.begin() + at);
      const bool on_gpu = slot % 2 == 1 && (fails.empty() || slot != fails[0]);
      EXPECT_EQ(marked, on_gpu) << slot;
      EXPECT_EQ(from_workers, !on_gpu) << slot;
    }
  }
}

TEST(ImageDataset, RefusesANetworkThatDoesNotFitTheSource) {
  const TempDir dir("image-dataset-format");
  write_folder(dir.path(), 3, 1, 0);
  EXPECT_THROW(open(dir.path(), Split::Train, 1, 4), runtime::InvalidArgument);  // 3 classes
  EXPECT_THROW(
      ImageDataset(open_image_source("imagefolder:" + dir.path().string(), Split::Train, false),
                   SampleFormat{3, 24, 32, 3}, Split::Train, 1, Augment::None, 1),
      runtime::InvalidArgument);  // not square
  EXPECT_THROW(open(dir.path(), Split::Train, 1, 3, Augment::CropFlip), runtime::InvalidArgument);
  EXPECT_THROW(open_image_source("imagefolder:" + dir.path().string(), Split::Test, false),
               runtime::InvalidArgument);  // no val folder
  // Named to evaluate on, a folder without a val split is evaluated whole.
  EXPECT_EQ(open_image_source("imagefolder:" + dir.path().string(), Split::Whole, false)->size(),
            3);
}

}  // namespace
}  // namespace vdnn::models
