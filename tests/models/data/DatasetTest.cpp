// Datasets: synthetic determinism, the CIFAR-10 binary reader on generated files, bad sources.
#include "models/data/Dataset.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <vector>

#include "models/data/Cifar10Dataset.hpp"
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

// Writes `records` CIFAR records whose label is i % 10 and whose pixels all equal the label.
void write_cifar_file(const fs::path& path, int records, int bad_label_at = -1) {
  std::ofstream out(path, std::ios::binary);
  for (int i = 0; i < records; ++i) {
    const char label = static_cast<char>(i == bad_label_at ? 42 : i % 10);
    out.put(label);
    const std::vector<char> pixels(Cifar10Dataset::kImageBytes, label);
    out.write(pixels.data(), static_cast<std::streamsize>(pixels.size()));
  }
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

TEST(Cifar10Dataset, ReadsRecordsAndNormalizes) {
  const fs::path dir = temp_dir("cifar-ok");
  write_cifar_file(dir / "data_batch_1.bin", 7);
  write_cifar_file(dir / "data_batch_2.bin", 3);
  Cifar10Dataset data(dir.string(), 1);
  EXPECT_EQ(data.size(), 10);
  std::vector<float> x(10 * 3072);
  std::vector<std::int32_t> y(10);
  data.next_batch(10, x.data(), y.data());
  std::vector<int> seen(10, 0);
  for (int i = 0; i < 10; ++i) {
    ++seen[static_cast<std::size_t>(y[static_cast<std::size_t>(i)])];
    // Every pixel of a record equals its label; red channel normalization with CIFAR statistics.
    const float expected =
        (static_cast<float>(y[static_cast<std::size_t>(i)]) / 255.0f - 0.4914f) / 0.2470f;
    EXPECT_FLOAT_EQ(x[static_cast<std::size_t>(i) * 3072], expected);
  }
  // One epoch of 10 records: labels 0..6 from file 1, 0..2 from file 2.
  EXPECT_EQ(seen, (std::vector<int>{2, 2, 2, 1, 1, 1, 1, 0, 0, 0}));
}

TEST(Cifar10Dataset, RejectsTruncatedFilesBadLabelsAndEmptyDirectories) {
  const fs::path dir = temp_dir("cifar-bad");
  EXPECT_THROW(Cifar10Dataset(dir.string(), 1), runtime::DataError);
  write_cifar_file(dir / "data_batch_1.bin", 2, /*bad_label_at=*/1);
  try {
    Cifar10Dataset(dir.string(), 1);
    FAIL() << "expected DataError";
  } catch (const runtime::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("data_batch_1.bin: record 1 has label 42"),
              std::string::npos)
        << e.what();
  }
  std::ofstream(dir / "data_batch_1.bin", std::ios::binary) << "short";
  EXPECT_THROW(Cifar10Dataset(dir.string(), 1), runtime::DataError);
}

TEST(Dataset, RejectsUnknownSourcesAndMismatchedNetworks) {
  EXPECT_THROW(make_dataset("imagenet", kCifar, 1), runtime::InvalidArgument);
  EXPECT_THROW(make_dataset("cifar10:/nonexistent", SampleFormat{3, 224, 224, 1000}, 1),
               runtime::InvalidArgument);
  EXPECT_THROW(make_dataset("cifar10:/nonexistent", kCifar, 1), runtime::DataError);
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
