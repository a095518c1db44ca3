// ShardedDataset: the ranks' batches, side by side, are bitwise one process's batches of
// world_size times the size (synthetic data and shuffled, augmented CIFAR-10 across epochs); a
// rank's seek continues its own stream.
#include "models/data/ShardedDataset.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "models/data/CifarFiles.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

namespace fs = std::filesystem;

constexpr int kRanks = 3;
constexpr std::int64_t kBatch = 4;
const SampleFormat kCifar{3, 32, 32, 10};

// A fresh directory of CIFAR-10 files (epochs of 18 images), removed when it goes.
class CifarDir {
 public:
  CifarDir() : dir_(fs::temp_directory_path() / "vdnn-test-sharded-dataset") {
    fs::remove_all(dir_);
    testing::write_cifar_directory(dir_, 2, 9, 5);
  }
  CifarDir(const CifarDir&) = delete;
  CifarDir& operator=(const CifarDir&) = delete;
  ~CifarDir() { fs::remove_all(dir_); }
  std::string source() const { return "cifar10:" + dir_.string(); }

 private:
  fs::path dir_;
};

struct Batch {
  std::vector<float> images;
  std::vector<std::int32_t> labels;
};

Batch draw(Dataset& data, std::int64_t batch) {
  Batch b{std::vector<float>(static_cast<std::size_t>(batch * kCifar.sample_numel())),
          std::vector<std::int32_t>(static_cast<std::size_t>(batch))};
  data.next_batch(batch, b.images.data(), b.labels.data());
  return b;
}

std::unique_ptr<Dataset> source(const std::string& name) {
  return make_dataset(name, kCifar, 7, Split::Train, Augment::CropFlip);
}

// Five global batches of 12 (past three epochs of CIFAR's 18 images): rank r's batch i is the
// r-th third of the global batch i, images and labels.
void expect_shards_make_the_global_batches(const std::string& name) {
  std::unique_ptr<Dataset> whole = source(name);
  std::vector<std::unique_ptr<ShardedDataset>> ranks;
  for (int r = 0; r < kRanks; ++r) {
    ranks.push_back(std::make_unique<ShardedDataset>(source(name), r, kRanks, kBatch));
  }
  for (int i = 0; i < 5; ++i) {
    const Batch global = draw(*whole, kRanks * kBatch);
    Batch joined;
    for (auto& rank : ranks) {
      const Batch part = draw(*rank, kBatch);
      joined.images.insert(joined.images.end(), part.images.begin(), part.images.end());
      joined.labels.insert(joined.labels.end(), part.labels.begin(), part.labels.end());
    }
    EXPECT_EQ(joined.labels, global.labels) << name << " batch " << i;
    EXPECT_EQ(joined.images, global.images) << name << " batch " << i;
  }
}

TEST(ShardedDataset, TheRanksBatchesSideBySideAreTheGlobalBatch) {
  expect_shards_make_the_global_batches("synthetic");
  const CifarDir cifar;
  expect_shards_make_the_global_batches(cifar.source());
}

TEST(ShardedDataset, SeekContinuesTheRanksOwnStream) {
  const CifarDir cifar;
  ShardedDataset straight(source(cifar.source()), 1, kRanks, kBatch);
  for (int i = 0; i < 3; ++i) draw(straight, kBatch);
  ShardedDataset resumed(source(cifar.source()), 1, kRanks, kBatch);
  resumed.seek(3 * kBatch);
  const Batch a = draw(straight, kBatch);
  const Batch b = draw(resumed, kBatch);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.images, b.images);
  EXPECT_EQ(resumed.size(), 18);
  EXPECT_NE(resumed.description().find("rank 1 of 3"), std::string::npos);
}

TEST(ShardedDataset, BadRanksAndBatchesAreRefused) {
  EXPECT_THROW(ShardedDataset(source("synthetic"), 3, 3, kBatch), runtime::InvalidArgument);
  EXPECT_THROW(ShardedDataset(source("synthetic"), 0, 3, 0), runtime::InvalidArgument);
  ShardedDataset rank(source("synthetic"), 0, 3, kBatch);
  std::vector<float> images(static_cast<std::size_t>(2 * kCifar.sample_numel()));
  std::vector<std::int32_t> labels(2);
  EXPECT_THROW(rank.next_batch(2, images.data(), labels.data()), runtime::InvalidArgument);
}

}  // namespace
}  // namespace vdnn::models
