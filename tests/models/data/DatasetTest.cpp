// Datasets: synthetic determinism, the CIFAR-10 binary reader on generated files, bad sources.
#include "models/data/Dataset.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <vector>

#include "models/data/Cifar10Dataset.hpp"
#include "models/data/CifarFiles.hpp"
#include "models/data/SyntheticDataset.hpp"
#include "models/data/image/GpuImageStage.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

namespace fs = std::filesystem;

const SampleFormat kCifar{3, 32, 32, 10};

fs::path temp_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("vdnn-test-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

using testing::write_cifar_file;

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

// The message of the DataError that building `split` of the CIFAR-10 directory `dir` throws.
std::string cifar_error(const fs::path& dir, Split split = Split::Train) {
  try {
    Cifar10Dataset(dir.string(), split, 1);
  } catch (const runtime::DataError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected DataError";
  return {};
}

// `batches` batches of `batch` samples drawn from `data`: images and labels end to end.
struct Drawn {
  std::vector<float> images;
  std::vector<std::int32_t> labels;
};
Drawn draw(Dataset& data, std::int64_t batch, int batches, std::int64_t numel) {
  Drawn d;
  d.images.resize(static_cast<std::size_t>(batch * batches * numel));
  d.labels.resize(static_cast<std::size_t>(batch * batches));
  for (int b = 0; b < batches; ++b) {
    data.next_batch(batch, d.images.data() + b * batch * numel, d.labels.data() + b * batch);
  }
  return d;
}

TEST(SyntheticDataset, IsDeterministicAndLabelsAreInRange) {
  auto a = make_dataset("synthetic", kCifar, 5);
  auto b = make_dataset("synthetic", kCifar, 5);
  std::vector<float> xa(4 * 3072), xb(4 * 3072);
  std::vector<std::int32_t> ya(4), yb(4);
  a->next_batch(4, xa.data(), ya.data());
  b->next_batch(4, xb.data(), yb.data());
  EXPECT_EQ(xa, xb);
  EXPECT_EQ(ya, yb);
  for (std::int32_t y : ya) EXPECT_TRUE(y >= 0 && y < 10);
  a->next_batch(4, xa.data(), ya.data());
  EXPECT_NE(xa, xb);  // the stream moves on
}

TEST(SyntheticDataset, TestSplitIsAFixedHeldOutSetOfTheSameClasses) {
  auto train = make_dataset("synthetic", kCifar, 5, Split::Train);
  auto test = make_dataset("synthetic", kCifar, 5, Split::Test);
  EXPECT_EQ(train->size(), 0);  // endless
  EXPECT_EQ(test->size(), SyntheticDataset::kTestImages);
  const Drawn a = draw(*test, 8, 2, 3072);
  const Drawn t = draw(*train, 8, 2, 3072);
  EXPECT_NE(a.images, t.images);
  test->seek(0);
  EXPECT_EQ(draw(*test, 8, 2, 3072).images, a.images);
  // The set repeats after kTestImages samples.
  test->seek(SyntheticDataset::kTestImages);
  EXPECT_EQ(draw(*test, 8, 2, 3072).labels, a.labels);
}

TEST(Dataset, SeekGivesWhatDrawingTheSamplesBeforeItGives) {
  const fs::path dir = temp_dir("cifar-seek");
  testing::write_cifar_directory(dir, 2, 5, 3);  // 10 training images: epochs of 10
  for (const std::string& source :
       std::vector<std::string>{"synthetic", "cifar10:" + dir.string()}) {
    for (const Split split : {Split::Train, Split::Test}) {
      auto drawn = make_dataset(source, kCifar, 3, split);
      const Drawn all = draw(*drawn, 4, 7, 3072);  // 28 samples: across epochs for cifar10
      auto sought = make_dataset(source, kCifar, 3, split);
      sought->seek(12);
      const Drawn rest = draw(*sought, 4, 4, 3072);
      EXPECT_TRUE(
          std::equal(rest.images.begin(), rest.images.end(), all.images.begin() + 12 * 3072))
          << source;
      EXPECT_TRUE(std::equal(rest.labels.begin(), rest.labels.end(), all.labels.begin() + 12))
          << source;
    }
  }
}

TEST(Cifar10Dataset, ReadsBothSplitsAndNormalizes) {
  const fs::path dir = temp_dir("cifar-ok");
  write_cifar_file(dir / "data_batch_1.bin", 7);
  write_cifar_file(dir / "data_batch_3.bin", 3);  // whichever of 1..5 exist
  write_cifar_file(dir / "test_batch.bin", 5);
  Cifar10Dataset train(dir.string(), Split::Train, 1);
  EXPECT_EQ(train.size(), 10);
  std::vector<float> x(10 * 3072);
  std::vector<std::int32_t> y(10);
  train.next_batch(10, x.data(), y.data());
  std::vector<int> seen(10, 0);
  for (std::size_t i = 0; i < 10; ++i) {
    ++seen[static_cast<std::size_t>(y[i])];
    // Every pixel of a record equals its label; CIFAR-10 statistics per channel.
    EXPECT_FLOAT_EQ(x[i * 3072], (static_cast<float>(y[i]) / 255.0f - 0.4914f) / 0.2470f);
    EXPECT_FLOAT_EQ(x[i * 3072 + 2048], (static_cast<float>(y[i]) / 255.0f - 0.4465f) / 0.2616f);
  }
  // One epoch of 10 records: labels 0..6 from file 1, 0..2 from file 3.
  EXPECT_EQ(seen, (std::vector<int>{2, 2, 2, 1, 1, 1, 1, 0, 0, 0}));
  EXPECT_NE(y, (std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 6, 0, 1, 2}));  // shuffled

  Cifar10Dataset test(dir.string(), Split::Test, 1);
  EXPECT_EQ(test.size(), 5);
  test.next_batch(7, x.data(), y.data());  // in file order, then around again
  EXPECT_EQ(std::vector<std::int32_t>(y.begin(), y.begin() + 7),
            (std::vector<std::int32_t>{0, 1, 2, 3, 4, 0, 1}));
  EXPECT_NE(test.description().find("5 images"), std::string::npos) << test.description();
}

TEST(Cifar10Dataset, ErrorsNameTheFileAndTheRecord) {
  const fs::path dir = temp_dir("cifar-bad");
  EXPECT_CONTAINS(cifar_error(dir), "cifar10:" + dir.string() + ": no data_batch_1.bin");
  EXPECT_CONTAINS(cifar_error(dir, Split::Test),
                  "cifar10:" + (dir / "test_batch.bin").string() + " not found");

  const fs::path file = dir / "data_batch_2.bin";
  write_cifar_file(
      file, 20, [](int r) { return r == 12 ? 11 : r % 10; }, [](int, int) { return 0; });
  EXPECT_CONTAINS(cifar_error(dir),
                  "cifar10:" + file.string() + ": record 12: label 11, expected 0..9");

  write_cifar_file(file, 3);
  std::ofstream(file, std::ios::binary | std::ios::app) << std::string(1500, '\0');
  EXPECT_CONTAINS(cifar_error(dir),
                  "cifar10:" + file.string() + ": record 3 is truncated (1500 of 3073 bytes)");

  std::ofstream(file, std::ios::binary) << "short";
  EXPECT_CONTAINS(cifar_error(dir), "record 0 is truncated (5 of 3073 bytes)");

  std::ofstream(file, std::ios::binary).flush();
  EXPECT_CONTAINS(cifar_error(dir), "cifar10:" + file.string() + ": empty");

  // The test split checks its file the same way.
  write_cifar_file(file, 3);
  write_cifar_file(dir / "test_batch.bin", 2);
  std::ofstream(dir / "test_batch.bin", std::ios::binary | std::ios::app) << "x";
  EXPECT_CONTAINS(cifar_error(dir, Split::Test), "test_batch.bin: record 2 is truncated (1 of");
  EXPECT_NO_THROW(Cifar10Dataset(dir.string(), Split::Train, 1));
}

TEST(Dataset, RejectsUnknownSourcesAndMismatchedNetworks) {
  EXPECT_THROW(make_dataset("imagenet", kCifar, 1), runtime::InvalidArgument);
  EXPECT_THROW(make_dataset("cifar10:/nonexistent", SampleFormat{3, 224, 224, 1000}, 1),
               runtime::InvalidArgument);
  EXPECT_THROW(make_dataset("cifar10:/nonexistent", kCifar, 1), runtime::DataError);
}

TEST(Dataset, DecodeChoosesTheCpuWhereItHasTheWorkersToFeedTheGpu) {
  EXPECT_EQ(parse_decode("gpu"), Decode::Gpu);
  EXPECT_STREQ(decode_name(parse_decode("cpu")), "cpu");
  EXPECT_THROW(parse_decode("nvjpeg"), runtime::InvalidArgument);
  // On the CPU backend everything decodes on the CPU; asking for the GPU there is an error.
  EXPECT_EQ(resolve_decode(Decode::Auto, false, 2), Decode::Cpu);
  EXPECT_THROW(resolve_decode(Decode::Gpu, false, 14), runtime::InvalidArgument);
  // On CUDA: enough workers keep the CPU (the GPU path lengthens the step's host enqueue), few
  // take the GPU where the build has nvJPEG; an explicit choice stands.
  EXPECT_EQ(resolve_decode(Decode::Auto, true, kWorkersForCpuDecode), Decode::Cpu);
  EXPECT_EQ(resolve_decode(Decode::Auto, true, kWorkersForCpuDecode - 1),
            gpu_decode_built() ? Decode::Gpu : Decode::Cpu);
  EXPECT_EQ(resolve_decode(Decode::Cpu, true, 1), Decode::Cpu);
  EXPECT_EQ(resolve_decode(Decode::Gpu, true, 14), Decode::Gpu);
  if (!gpu_decode_built()) {
    EXPECT_THROW(make_gpu_image_stage(0, 4), runtime::InvalidArgument);
  }
}

TEST(Dataset, TheGpuShareSpreadsItsSlotsEvenlyOverTheBatch) {
  const auto slots = [](double share, std::size_t batch) {
    std::vector<std::size_t> taken;
    for (std::size_t s = 0; s < batch; ++s) {
      if (gpu_slot(s, share)) taken.push_back(s);
    }
    return taken;
  };
  EXPECT_EQ(slots(1.0, 7).size(), 7u);
  const std::vector<std::size_t> quarter = slots(0.25, 128);
  ASSERT_EQ(quarter.size(), 32u);
  for (std::size_t i = 1; i < quarter.size(); ++i) EXPECT_EQ(quarter[i] - quarter[i - 1], 4u);
  EXPECT_EQ(slots(0.3, 10).size(), 3u);
  EXPECT_EQ(slots(0.3, 100).size(), 30u);
  EXPECT_EQ(slots(0.01, 50).size(), 0u);  // a share below one slot per batch takes none
}

TEST(Dataset, HostBytesAreKnownBeforeBuilding) {
  // Synthetic: one float per class and pixel (the prototypes) and the 2^20-float noise bank.
  EXPECT_EQ(dataset_host_bytes("synthetic", kCifar), (10u * 3 * 32 * 32 + (1u << 20)) * 4);
  const SampleFormat huge{1 << 20, 1 << 20, 1 << 20, 1 << 20};
  EXPECT_EQ(dataset_host_bytes("synthetic", huge), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(dataset_host_bytes("cifar10:/anywhere", kCifar), 0u);
}

}  // namespace
}  // namespace vdnn::models
